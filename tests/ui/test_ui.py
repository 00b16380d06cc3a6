"""Small pieces of the screen output that are easy to get wrong."""

from __future__ import annotations

import os
import signal

import pytest

from ui import safe, seconds, summarize_input, summarize_output
from ui.repl import _between_prompts


def test_control_characters_from_the_model_or_tools_are_made_visible():
    assert safe("red \x1b[31mtext\x1b]0;title\x07 ok\r\nnext\tcol") == "red ^[[31mtext^[]0;title^G ok\nnext\tcol"


def test_tool_lines_count_what_a_person_would_count():
    assert summarize_output("only line\n[exit code 0]") == "only line"
    assert summarize_output("a\nb\n[exit code 1]") == "a  … (2 lines)"
    assert summarize_input("write_file", {"path": "a.txt", "content": "1\n2\n"}) == "a.txt (2 lines)"
    assert seconds(0.4) == "0.4s" and seconds(12.3) == "12s"


def test_a_ctrl_c_while_s08_prints_between_two_prompts_is_ignored_and_the_handler_comes_back():
    before = signal.getsignal(signal.SIGINT)
    with _between_prompts():
        os.kill(os.getpid(), signal.SIGINT)        # would raise KeyboardInterrupt in the middle of a print
        printed = "printed whole"
    assert printed == "printed whole" and signal.getsignal(signal.SIGINT) is before
    if before is signal.default_int_handler:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)

"""The REPL in a real pseudo-terminal survives what small models send (issue 32): a tool call written
as text, arguments that are not JSON, an unknown tool and a looping answer, one after the other in one
session — each said in one line, the prompt back after each, and the session's history still accepted
by the stand-in at the end. In-process: tests/loop/test_broken_replies.py."""

from __future__ import annotations

import pytest

from support.screen import Screen

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "


def screen_text(child) -> str:
    return "\n".join(Screen(200).feed(child.logfile_read.getvalue()).rows())


def test_the_repl_survives_every_broken_reply_in_one_session(repl, standin, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    standin.queue({"text": '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>'},
                  {"tool_calls": [{"name": "read_file", "input": {"path": "a.py"}}]}, {"text": "FIRST-DONE"},
                  {"tool_calls": [{"name": "bash", "raw_input": '{"command": "touch ran'},
                                  {"name": "Bash", "input": {"command": "touch ran"}}]}, {"text": "SECOND-DONE"},
                  {"text": "Intro. " + "I will fix the bug now. " * 4000}, {"text": "LAST-DONE"})
    child = repl(max_tokens=4000)
    child.sendline("what is in a.py?")
    child.expect_exact("asked the model once to make the call")
    child.expect_exact("FIRST-DONE")
    child.expect_exact(PROMPT)
    child.sendline("make a file")
    child.expect_exact("Did you mean bash?")
    child.expect_exact("SECOND-DONE")
    child.expect_exact(PROMPT)
    child.sendline("fix it")
    child.expect_exact("one copy was kept")
    child.expect_exact(PROMPT)
    child.sendline("and now?")
    child.expect_exact("LAST-DONE")
    child.expect_exact(PROMPT)
    shown = screen_text(child)
    assert "bash call had input that is not a JSON object" in child.logfile_read.getvalue()
    assert "Traceback" not in shown and not (workspace / "ran").exists()
    last = standin.requests[-1]["messages"]
    assert str(last).count("I will fix the bug now.") == 1                      # one copy went back
    child.sendline("/exit")

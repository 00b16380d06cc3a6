"""The approval question in a real pseudo-terminal, with a person who types while the agent works.

The person types at 0.12 s per key (a brisk typist). Before the fix, the first y/a/s/n of ordinary
words answered the question ("the parser" → "a" → always allow `touch`), and the message arrived
mangled; now typing is typing: kept for the next prompt, never an answer.
"""

from __future__ import annotations

import time

import pytest

from support.helpers import answer_question, user_texts
from support.screen import Screen

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
KEY_GAP = 0.12
MESSAGE = "please look at the parser next, say yes"


def type_slowly(child, text: str) -> None:
    for ch in text:
        child.send(ch)
        time.sleep(KEY_GAP)


def slow_reply_then(command: str) -> dict:
    """A reply that streams for about a second, then asks to run `command`."""
    return {"text": "Looking into it. " * 12, "delay": 0.08, "chunk": 16,
            "tool_calls": [{"name": "bash", "input": {"command": command}}]}


def test_typing_through_the_question_never_answers_it_and_is_kept(repl, standin, workspace):
    standin.queue(slow_reply_then("touch typed.txt"), {"text": "TOUCHED"}, {"text": "NEXT-OK"})
    child = repl(approval_mode="default")
    child.sendline("start")
    child.expect_exact("Looking into it.")
    type_slowly(child, MESSAGE)                           # the question appears while this is typed
    child.expect_exact("every command this session")
    time.sleep(1.0)
    raw = child.logfile_read.getvalue()
    assert "→" not in raw.split("? run this command?")[-1]               # nothing answered it
    assert not (workspace / "typed.txt").exists()
    assert "kept for your next message" in raw
    answer_question(child, "y")
    child.expect_exact("TOUCHED")
    child.expect_exact(PROMPT)
    child.expect_exact(MESSAGE)                            # whole, waiting in the input
    assert (workspace / "typed.txt").exists()
    child.send("\r")
    child.expect_exact("NEXT-OK")
    child.expect_exact(PROMPT)
    assert user_texts(standin.requests[-1]["messages"])[-1] == MESSAGE


def test_typing_just_before_the_question_then_no_with_a_reason(repl, standin, workspace):
    standin.queue(slow_reply_then("touch nope.txt"), {"text": "FINE"})
    child = repl(approval_mode="default")
    child.sendline("start")
    child.expect_exact("Looking into it.")
    type_slowly(child, "a note")
    child.expect_exact("every command this session")
    type_slowly(child, "s and y")
    time.sleep(0.2)
    assert "→" not in child.logfile_read.getvalue().split("? run this command?")[-1]
    answer_question(child, "n")
    child.expect_exact("Why? (optional, Enter to skip)")
    time.sleep(0.3)
    rows = Screen(200).feed(child.logfile_read.getvalue()).rows()
    assert rows[-1].rstrip().endswith("Why? (optional, Enter to skip)")      # it starts empty
    child.sendline("wrong folder")
    child.expect_exact("FINE")
    child.expect_exact(PROMPT)
    child.expect_exact("a notes and y")
    assert not (workspace / "nope.txt").exists()
    result = standin.requests[-1]["messages"][-1]["content"][0]
    assert result["content"].endswith("Their reason: wrong folder")


def test_a_file_that_configures_git_always_asks_even_in_auto_edit(repl, standin, workspace):
    (workspace / ".git").mkdir()
    standin.queue({"tool_calls": [{"name": "write_file", "input": {
        "path": ".git/config", "content": '[core]\n\tfsmonitor = "touch pwned; false"\n'}}]}, {"text": "WROTE"},
        {"tool_calls": [{"name": "write_file", "input": {"path": "notes.txt", "content": "x"}}]}, {"text": "NOTES"})
    child = repl(approval_mode="auto_edit")
    child.sendline("configure")
    child.expect_exact("? create .git/config?")
    child.expect_exact("s08 asks before every change to this file")
    child.expect_exact("no, and tell the model why")
    assert "every file change this session" not in child.logfile_read.getvalue()
    answer_question(child, "\x1b")
    child.expect_exact("WROTE")
    child.expect_exact(PROMPT)
    assert not (workspace / ".git" / "config").exists()
    child.sendline("notes")                                  # an ordinary file: auto_edit writes it at once
    child.expect_exact("NOTES")
    child.expect_exact(PROMPT)
    assert (workspace / "notes.txt").read_text() == "x"


def test_a_yes_typed_before_a_settings_question_does_not_answer_it_and_esc_is_no(tmp_path, workspace, standin):
    from support.agents import TEST_KEY, base_env, spawn_agent
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={standin.url}\n")
    child = spawn_agent(base_env(tmp_path, None, anthropic_api_key=TEST_KEY), workspace, timeout=30)
    child.send("y\r")                                      # typed while s08 starts, before it asks
    child.expect_exact("Use this endpoint?")
    child.expect_exact("[y/N]")
    time.sleep(1.0)
    assert "using it with your key" not in child.logfile_read.getvalue()
    child.send("\x1b")
    child.expect_exact("not using it")
    child.expect_exact(PROMPT)
    assert not standin.requests

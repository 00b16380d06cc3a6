"""Resuming after kill -9 at awkward moments.

`python agent.py` in a pseudo-terminal against the strict stand-in is killed mid-stream, mid-command
or mid-summary, then started with `--continue`: the resumed history is exactly what the log holds and
the next request is one the API accepts."""

from __future__ import annotations

import json
import signal
import time

import pexpect
import pytest

from session.log import list_sessions, load_session
from support.agents import base_env, spawn_agent
from support.helpers import Model, plain, user, user_texts

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "


def start(tmp_path, workspace, standin, *args):
    child = spawn_agent(base_env(tmp_path, standin), workspace, *args, timeout=60)   # a hang guard
    child.expect_exact(PROMPT)
    return child


def kill_when(child, text: str, settle: float = 0.3) -> None:
    """kill -9 the agent once `text` is on its screen."""
    child.expect_exact(text)
    time.sleep(settle)
    child.kill(signal.SIGKILL)
    child.close()


def resume_and_check(tmp_path, workspace, standin, expected_before=None):
    """--continue, send one more message, and check what reached the API against the log."""
    [path] = list_sessions(workspace)
    logged = load_session(path)
    child = start(tmp_path, workspace, standin, "--continue")
    assert "resumed session" in child.before
    standin.queue({"text": "RESUMED-OK"})
    child.sendline("where were we?")
    child.expect_exact("RESUMED-OK")
    child.expect_exact(PROMPT)
    sent = standin.requests[-1]["messages"]
    after = load_session(path).messages
    assert plain(after[:len(sent)]) == plain(sent)         # what was sent is exactly what the log holds
    if expected_before is not None:
        assert logged.messages == expected_before
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    return sent


def test_kill_mid_stream_then_continue(tmp_path, workspace, standin):
    standin.queue({"text": "STREAM " + "word " * 30, "hold": "mid", "chunk": 5})
    child = start(tmp_path, workspace, standin)
    child.sendline("tell me everything")
    child.expect_exact("STREAM")
    assert standin.wait_until_held()                  # the answer is still streaming when it is killed
    kill_when(child, "", settle=0)
    standin.release()
    sent = resume_and_check(tmp_path, workspace, standin, expected_before=[user("tell me everything")])
    assert user_texts(sent) == ["tell me everything", "[The session stopped before this request was answered]",
                                "where were we?"]     # the answer in flight is lost, and the model is told


def test_kill_mid_command_then_continue(tmp_path, workspace, standin):
    standin.queue({"text": "Running.", "tool_calls": [{"name": "bash", "input": {"command": "sleep 20"}}]})
    child = start(tmp_path, workspace, standin)
    child.sendline("run the slow thing")
    kill_when(child, "running bash")
    sent = resume_and_check(tmp_path, workspace, standin)
    assert sent[1]["content"][1]["input"] == {"command": "sleep 20"}
    result = sent[2]["content"][0]
    assert result["is_error"] and "session stopped before this tool call finished" in result["content"]


def test_kill_mid_compaction_keeps_the_history_before_it(tmp_path, workspace, standin):
    standin.brain = Model({"text": "a long first answer " * 100},
                          summaries=[{"text": "SUMMARY " * 200, "delay": 0.05, "chunk": 4}])
    child = start(tmp_path, workspace, standin)
    child.sendline("first question")
    child.expect_exact("first answer")
    child.expect_exact(PROMPT)
    before = load_session(list_sessions(workspace)[0]).messages
    child.sendline("/compact")
    kill_when(child, "summarizing")
    standin.brain = None
    sent = resume_and_check(tmp_path, workspace, standin, expected_before=before)
    assert "SUMMARY" not in json.dumps(sent) and "a long first answer" in json.dumps(sent)


def test_resume_after_two_compactions(tmp_path, workspace, standin):
    standin.brain = Model({"text": "answer one " * 150}, {"text": "answer two " * 150},
                          summaries=[{"text": "FIRST SUMMARY"}, {"text": "SECOND SUMMARY"}])
    child = start(tmp_path, workspace, standin)
    for question, answer in [("question one", "answer one"), ("question two", "answer two")]:
        child.sendline(question)
        child.expect_exact(answer)
        child.expect_exact(PROMPT)
        child.sendline("/compact")
        child.expect_exact("[compacted]")
        child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    standin.brain = None
    sent = resume_and_check(tmp_path, workspace, standin)
    text = json.dumps(sent)
    assert "SECOND SUMMARY" in text and "FIRST SUMMARY" not in text    # the second summary replaced the first
    assert "answer one answer" not in text and "answer two answer" not in text
    assert text.count("question two") == 1 and user_texts(sent)[-1] == "where were we?"
    assert user_texts(sent).index("question one") < user_texts(sent).index("question two")   # every message, in order
    assert sent[0]["content"][0]["text"].startswith("[compacted]")


def test_resume_picker_and_unknown_id(tmp_path, workspace, standin):
    standin.queue({"text": "one"})
    child = start(tmp_path, workspace, standin)
    child.sendline("hello there")
    child.expect_exact("one")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    picker = spawn_agent(base_env(tmp_path, standin), workspace, "--resume")
    picker.expect_exact("Resume which one?")
    assert "hello there" in picker.before
    picker.sendline("1")
    picker.expect_exact("resumed session")
    picker.expect_exact(PROMPT)
    picker.sendcontrol("d")
    picker.expect(pexpect.EOF)
    wrong = spawn_agent(base_env(tmp_path, standin), workspace, "--resume", "nope")
    wrong.expect(pexpect.EOF)
    wrong.close()
    assert wrong.exitstatus == 1 and "no single session matches 'nope'" in wrong.before


def test_kill_during_a_parallel_round_keeps_the_results_that_finished(tmp_path, workspace, standin):
    standin.queue({"tool_calls": [{"name": "write_file", "input": {"path": "first.txt", "content": "done"}},
                                  {"name": "bash", "input": {"command": "sleep 20"}}]})
    child = start(tmp_path, workspace, standin)
    child.sendline("write then wait")
    kill_when(child, "running bash")
    sent = resume_and_check(tmp_path, workspace, standin)
    first, second = [b for b in sent[2]["content"] if b["type"] == "tool_result"]
    assert first["content"].startswith("Created first.txt") and not first.get("is_error")
    assert second["is_error"] and "session stopped before this tool call finished" in second["content"]

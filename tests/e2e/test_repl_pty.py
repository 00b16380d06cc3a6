"""The REPL in a real pseudo-terminal, driven as a person would: type, read the screen, Ctrl-C, Ctrl-D."""

from __future__ import annotations

import time

import pexpect
import pytest

from support.helpers import user_texts
from support.processes import ended, written_pid

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "


def test_banner_prompt_and_streamed_answer(repl, standin, workspace):
    standin.queue({"text": "ALPHA " + "and more words " * 30 + "OMEGA", "delay": 0.05, "chunk": 8})
    child = repl()
    banner = child.before
    assert "claude-sonnet-4-6" in banner and str(workspace.resolve()) in banner and standin.url in banner
    child.sendline("hello")
    child.expect_exact("ALPHA")
    assert "OMEGA" not in child.before + child.buffer     # text shows while it is still arriving
    child.expect_exact("OMEGA")
    child.expect_exact(PROMPT)


def test_ctrl_c_mid_stream_cancels_the_turn_only(repl, standin):
    standin.queue({"text": "STREAMING " + "slowly " * 30, "hold": "mid", "chunk": 6})
    child = repl()
    child.sendline("tell me a story")
    child.expect_exact("STREAMING")
    assert standin.wait_until_held()                 # still streaming, however busy the machine is
    child.sendcontrol("c")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    standin.queue({"text": "AFTER-INTERRUPT"})
    child.sendline("something else")
    child.expect_exact("AFTER-INTERRUPT")
    child.expect_exact(PROMPT)
    sent = standin.requests[-1]
    assert [m["role"] for m in sent["messages"]] == ["user"]          # the half answer was not kept
    assert user_texts(sent["messages"]) == ["tell me a story", "[Request interrupted by user]", "something else"]


def test_ctrl_c_mid_command_kills_it_and_answers_the_tool_call(repl, standin, workspace):
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": "echo started-work; echo $$ > pid.txt; sleep 30; echo never > never.txt"}},
                                  {"name": "read_file", "input": {"path": "pid.txt"}}]})
    child = repl()
    child.sendline("run something slow")
    child.expect_exact("running bash")
    pid = written_pid(workspace / "pid.txt")
    child.sendcontrol("c")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    assert ended(pid)
    standin.queue({"text": "NEXT-TURN-OK"})
    child.sendline("carry on")
    child.expect_exact("NEXT-TURN-OK")
    results = [b for b in standin.requests[-1]["messages"][2]["content"] if b["type"] == "tool_result"]
    assert len(results) == 2 and "Interrupted by the user" in results[0]["content"]
    assert "Output before the interruption" in results[0]["content"] and "started-work" in results[0]["content"]
    assert results[1]["content"].startswith("Not run: the user interrupted before this tool call started")
    assert not (workspace / "never.txt").exists()


def test_ctrl_c_at_the_prompt_clears_the_line_and_ctrl_d_exits_0(repl):
    child = repl()
    child.send("half typed")
    child.sendcontrol("c")
    child.sendline("/help")
    child.expect_exact("/clear")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.parametrize("word", ["/quit", "exit", "q"])
def test_exit_words(repl, word):
    child = repl()
    child.sendline(word)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_multiline_input_with_esc_enter(repl, standin):
    standin.queue({"text": "GOT-IT"})
    child = repl()
    child.send("line one")
    child.send("\x1b\r")
    child.send("line two\r")
    child.expect_exact("GOT-IT")
    assert user_texts(standin.requests[-1]["messages"]) == ["line one\nline two"]


def test_clear_and_slash_completion(repl, standin):
    standin.queue({"text": "FIRST"}, {"text": "SECOND"})
    child = repl()
    child.sendline("one")
    child.expect_exact("FIRST")
    child.expect_exact(PROMPT)
    child.send("/cle")
    child.expect_exact("/cle")
    time.sleep(0.2)                      # a person's Tab comes after the typing, not in the same read
    child.send("\t")
    time.sleep(0.3)
    child.send("\r")
    child.expect_exact("history cleared")
    child.expect_exact(PROMPT)
    child.sendline("two")
    child.expect_exact("SECOND")
    assert len(standin.requests[-1]["messages"]) == 1


def test_input_history_persists_across_runs(repl, tmp_path):
    child = repl()
    child.sendline("/help")
    child.expect_exact("leave s08")                     # the help's last row, then the next prompt
    child.expect_exact(PROMPT)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    history = (tmp_path / "home" / ".s08_history").read_text()
    assert "/help" in history


def test_errors_are_one_line_and_the_prompt_returns(repl, standin):
    standin.queue({"error": 401})
    child = repl()
    child.sendline("hi")
    child.expect_exact("Authentication failed (401)")
    child.expect_exact(PROMPT)
    assert "Traceback" not in child.before


def test_status_line_context_and_cost(repl, standin):
    standin.queue({"text": "FIRST " + "answer " * 700}, {"text": "SECOND answer"})
    child = repl()
    child.sendline("first, with some background: " + "details " * 300)   # over the cacheable minimum
    child.expect_exact("FIRST")
    child.expect(r"context [\d,]+/50,000 · turn cache hit \d+% · session \$\d+\.\d{4}")
    child.expect_exact(PROMPT)                          # typed before the prompt, it would wait in the input
    child.sendline("second")
    child.expect_exact("SECOND answer")
    child.expect(r"context [\d,]+/50,000 · turn cache hit (\d+)%")
    assert int(child.match.group(1)) > 50                # the second call read the first from cache
    child.expect_exact(PROMPT)
    child.sendline("/context")
    child.expect_exact("compaction at 50,000 (CONTEXT_LIMIT) · window 200,000")
    child.expect(r"system [\d,]+.*tools [\d,]+.*messages [\d,]+.*tool results [\d,]+")
    child.expect_exact(PROMPT)
    child.sendline("/cost")
    child.expect_exact("session cost — claude-sonnet-4-6 ($3 / $15 per million input / output tokens)")
    child.expect(r"cache reads\s+[\d,]+")
    child.expect_exact("2 model calls (0 summaries)")
    child.expect_exact(PROMPT)

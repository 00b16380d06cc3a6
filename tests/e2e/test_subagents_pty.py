"""Sub-agents in the real REPL (a pseudo-terminal): one live line per running child, Esc stops the
parent and every child (nothing they started survives), and kill -9 during a child resumes with the
task answered as interrupted and a history the strict stand-in accepts."""

from __future__ import annotations

import json
import os
import signal

import pexpect
import pytest

from support.agents import base_env, spawn_agent
from standin.conversations import Conversations

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "


def slow_children() -> Conversations:
    def child(name):
        return [{"tool_calls": [{"name": "bash", "input": {"command": f"sleep 300 & echo $! > {name}.pid; wait"}}]},
                {"text": f"report {name}"}]
    return Conversations({
        "PARENT": [{"tool_calls": [{"name": "task", "input": {"description": "wait a", "prompt": "CHILD-A: wait"}},
                                   {"name": "task", "input": {"description": "wait b", "prompt": "CHILD-B: wait"}}]},
                   {"text": "PARENT-DONE"}],
        "CHILD-A": child("a"), "CHILD-B": child("b")})


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def wait_for_both_children(child, workspace) -> None:
    """Each child's live line shows its running command; then both pid files are written."""
    seen = set()
    while seen != {"1", "2"}:
        child.expect(r"task (\d) general · wait [ab] · bash sleep 300")
        seen.add(child.match.group(1))
    for name in "ab":                         # the command writes its pid a moment after its line shows
        pid_file = workspace / f"{name}.pid"
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            child.expect([pexpect.TIMEOUT, r"\x00"], timeout=0.05)


def test_esc_stops_every_child_and_what_they_started(tmp_path, workspace, standin):
    standin.brain = slow_children()
    child = spawn_agent(base_env(tmp_path, standin), workspace, timeout=30)
    child.expect_exact(PROMPT)
    child.sendline("PARENT: wait for both")
    wait_for_both_children(child, workspace)
    pids = [int((workspace / f"{name}.pid").read_text()) for name in "ab"]
    child.send("\x1b")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    assert not any(alive(pid) for pid in pids)
    screen = child.logfile_read.getvalue()
    assert "task 1 general · wait a — interrupted" in screen or "task 2 general · wait b — interrupted" in screen
    standin.brain.scripts["PARENT"].insert(0, {"text": "AFTER-OK"})
    child.sendline("carry on")
    child.expect_exact("AFTER-OK")
    child.expect_exact(PROMPT)
    last = standin.requests[-1]["messages"]
    results = [b for m in last if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"]
    assert len(results) == 2 and all(r["is_error"] for r in results)
    child.sendline("/tasks")
    child.expect(r"task 1 general · wait a — (interrupted|stopped)")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_kill_9_during_a_child_resumes_with_the_task_interrupted(tmp_path, workspace, standin):
    standin.brain = slow_children()
    env = base_env(tmp_path, standin)
    child = spawn_agent(env, workspace, timeout=30)
    child.expect_exact(PROMPT)
    child.sendline("PARENT: wait for both")
    wait_for_both_children(child, workspace)
    pids = [int((workspace / f"{name}.pid").read_text()) for name in "ab"]
    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)
    for pid in pids:                      # what the killed session's commands left: not ours to test here
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    standin.brain.scripts["PARENT"].insert(0, {"text": "RESUMED-OK"})
    again = spawn_agent(env, workspace, "--continue", timeout=30)
    again.expect_exact(PROMPT)
    assert "damaged" not in again.logfile_read.getvalue()         # the task records are part of a sound log
    again.sendline("go on")
    again.expect_exact("RESUMED-OK")
    again.expect_exact(PROMPT)
    last = standin.requests[-1]["messages"]
    calls = [b for m in last if m["role"] == "assistant" and isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_use"]
    results = [b for m in last if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"]
    assert [c["name"] for c in calls] == ["task", "task"]
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    assert all(r["is_error"] for r in results)
    log = next((workspace / ".sessions").glob("*.jsonl"))
    records = [json.loads(line) for line in log.read_text().splitlines() if '"t": "task"' in line]
    assert {r["e"] for r in records} == {"start"}            # started, never reported
    from support.agents import run_agent                     # … and the inspector says so
    shown = run_agent("inspect", log.stem, "-w", str(workspace), env={**env, "COLUMNS": "250"},
                      capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and shown.stdout.count("interrupted (no report: the session stopped)") == 2
    again.sendcontrol("d")
    again.expect(pexpect.EOF)


def test_print_mode_shows_one_line_per_child_and_the_answer(tmp_path, workspace, standin):
    from support.agents import run_agent
    import subprocess
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [{"name": "task", "input": {"description": "look \x1b[2J around",
                                                              "prompt": "CHILD: look", "agent": "explore"}}]},
                   {"text": "PARENT-ANSWER"}],
        "CHILD": [{"text": "child report"}]})
    done = run_agent("-p", "PARENT: look", env=base_env(tmp_path, standin), cwd=workspace, capture_output=True,
                     text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stdout.strip() == "PARENT-ANSWER"
    assert "✓ task 1 explore · look" in done.stderr and "— done · 1 call ·" in done.stderr
    assert "\x1b[2J" not in done.stderr


def test_ctrl_o_at_the_prompt_opens_the_childrens_steps_and_keeps_the_line(tmp_path, workspace, standin):
    (workspace / "notes.txt").write_text("the answer is 42\n")
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [{"name": "task", "input": {"description": "read notes", "prompt": "CHILD: read"}}]},
                   {"text": "PARENT-DONE"}],
        "CHILD": [{"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}]}, {"text": "42"}]})
    child = spawn_agent(base_env(tmp_path, standin), workspace, timeout=30)
    child.expect_exact(PROMPT)
    child.sendline("PARENT: ask a child")
    child.expect_exact("PARENT-DONE")
    child.expect_exact(PROMPT)
    child.send("half a thought")
    child.expect_exact("half a thought")
    child.sendcontrol("o")
    child.expect(r"✓ task 1 general · read notes — done · 2 calls")
    child.expect(r"\d+\.\ds  read_file notes\.txt")            # its steps
    child.expect_exact(PROMPT)
    child.expect_exact("half a thought")                          # what was typed is back in the input
    standin.brain.scripts["PARENT"].insert(0, {"text": "GOT-IT"})
    child.sendline("")
    child.expect_exact("GOT-IT")
    child.expect_exact(PROMPT)
    assert "half a thought" in json.dumps(standin.requests[-1]["messages"][-1])
    child.sendcontrol("d")
    child.expect(pexpect.EOF)

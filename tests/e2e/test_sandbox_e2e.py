"""The sandbox from a new agent.py in -p: without it a read-only command is refused with the approval line;
a loop's orphans count towards MAX_PROCESSES."""

from __future__ import annotations


import pytest

from support.agents import base_env, run_agent
from tools.sandbox import probe
from support.processes import sleepers

ABI, PROBLEM = probe({})
kernel = pytest.mark.skipif(bool(PROBLEM), reason=f"no kernel sandbox here: {PROBLEM}")


def bash_call(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


def json_results(standin) -> list[str]:
    return [b["content"] if isinstance(b["content"], str) else str(b["content"])
            for m in standin.requests[-1]["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


@kernel
def test_in_print_mode_without_a_sandbox_a_read_only_command_is_refused_with_the_approval_line(
        tmp_path, workspace, standin):
    (workspace / "a.txt").write_text("hello\n")
    standin.queue(bash_call("cat a.txt"), {"text": "DONE"}, bash_call("cat a.txt"), {"text": "RAN"})
    env = base_env(tmp_path, standin, approval_mode="default", s08_sandbox_unavailable="1")
    proc = run_agent("-p", "read a.txt", env=env, cwd=workspace, text=True, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "DONE\n", proc.stderr
    assert "[approval needed] bash `cat a.txt` was not run" in proc.stderr
    assert "asked because S08_SANDBOX_UNAVAILABLE is set" in proc.stderr
    del env["S08_SANDBOX_UNAVAILABLE"]                  # with the sandbox, it runs without a question
    proc = run_agent("-p", "read a.txt", env=env, cwd=workspace, text=True, capture_output=True, timeout=60)
    assert proc.stdout == "RAN\n" and "approval needed" not in proc.stderr, proc.stderr
    assert "hello" in json_results(standin)[-1]


def test_orphans_of_a_loop_count_too_in_s08(tmp_path, workspace, standin):
    """`(setsid sleep &)` leaves orphans in sessions of their own: s08 adopts them (a subreaper) and counts them."""
    standin.queue(bash_call("for i in $(seq 5000); do (setsid sleep 987 &); done"), {"text": "STOPPED"})
    env = base_env(tmp_path, standin, max_processes="40", bash_timeout="60")
    proc = run_agent("-p", "loop", env=env, cwd=workspace, text=True, capture_output=True, timeout=90)
    assert proc.stdout == "STOPPED\n", proc.stderr
    result = json_results(standin)[-1]
    assert "more than 40 processes" in result and "too many processes" in result and "timed out" not in result
    assert not sleepers()

"""Hardening seen from a real pseudo-terminal: what the agent's commands left running ends with s08,
even a process that moved to its own session; a Ctrl-C ends such a process too."""

from __future__ import annotations

import os

import pexpect
import pytest

from support.processes import ended, gone, written_pid

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "


def test_background_processes_are_listed_and_ended_when_s08_exits(repl, standin, workspace):
    standin.queue({"tool_calls": [{"name": "bash", "input": {
        "command": "setsid sleep 300 > /dev/null 2>&1 & echo $! > bg.pid; nohup sleep 301 > /dev/null 2>&1 & echo ok"}}]},
        {"text": "Started them."})
    child = repl()
    child.sendline("start two servers")
    child.expect_exact("Started them.")
    child.expect_exact(PROMPT)
    pid = written_pid(workspace / "bg.pid")
    assert not gone(pid)
    child.sendeof()
    child.expect_exact("ended 2 background processes")
    child.expect(pexpect.EOF)
    assert ended(pid)


def test_ctrl_c_ends_a_process_the_command_moved_to_its_own_session(repl, standin, workspace):
    standin.queue({"tool_calls": [{"name": "bash", "input": {
        "command": "setsid sleep 300 & echo $! > bg.pid; sleep 300"}}]})
    child = repl()
    child.sendline("run it")
    child.expect_exact("running bash")
    pid = written_pid(workspace / "bg.pid")
    child.sendcontrol("c")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    assert ended(pid)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert os.path.exists(workspace / "bg.pid")

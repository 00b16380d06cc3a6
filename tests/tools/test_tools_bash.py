"""The bash tool: output, exit codes, timeouts that kill the whole group, refusals, huge output."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from support.processes import ended
from tools import ToolContext, run_tool
from tools.bash import MEMORY_CAP
from tools.bash_guard import dangerous_reason


@pytest.fixture
def ctx(workspace):
    return ToolContext(workspace=workspace, settings=SimpleNamespace(bash_timeout=2.0))


def bash(ctx, command):
    return run_tool("bash", {"command": command}, ctx)


def test_stdout_stderr_and_exit_code(ctx):
    r = bash(ctx, "echo out; echo err >&2; exit 3")
    assert r.content == "out\nerr\n[exit code 3]"
    assert not r.is_error


def test_runs_in_the_workspace(ctx, workspace):
    bash(ctx, "echo made > made.txt")
    assert (workspace / "made.txt").read_text() == "made\n"
    assert bash(ctx, "pwd").content.startswith(str(workspace.resolve()))


def test_no_output_is_said_plainly(ctx):
    assert bash(ctx, "true").content == "(no output)\n[exit code 0]"


def test_timeout_kills_the_whole_process_group(ctx, workspace):
    started = time.monotonic()
    r = bash(ctx, "(sleep 300 & echo $! > child.pid; wait; echo survived > survived.txt) & sleep 300")
    assert r.is_error and "timed out after 2s" in r.content
    assert time.monotonic() - started < 150           # far under the 300 s it would run: a busy machine is slow
    child = int((workspace / "child.pid").read_text())
    assert ended(child)
    assert not (workspace / "survived.txt").exists()


def test_background_job_does_not_hold_the_tool(ctx):
    started = time.monotonic()
    r = bash(ctx, "sleep 60 & echo started")
    assert "started" in r.content and time.monotonic() - started < 30


def test_huge_output_spills_to_a_file_with_head_and_tail(ctx, workspace):
    r = bash(ctx, f"seq 1 {MEMORY_CAP // 3}")
    assert "<persisted-output>" in r.content
    path = r.content.split("Full output saved to: ")[1].split()[0]
    saved = (workspace / path).read_text()
    assert saved.splitlines()[-1] == str(MEMORY_CAP // 3)       # nothing lost on disk
    assert "1\n2\n3\n" in r.content and str(MEMORY_CAP // 3) in r.content   # head and tail previewed
    assert len(r.content) < 5000


def test_binary_output_does_not_crash(ctx):
    r = bash(ctx, "printf '\\x00\\xff\\xfe abc'")
    assert "abc" in r.content and not r.is_error


@pytest.mark.parametrize("command", [
    "rm -rf /", "rm -rf /*", "sudo rm -rf / --no-preserve-root", "rm -fr ~", "rm -r -f /usr/",
    "mkfs.ext4 /dev/sda1", "mkfs -t ext4 /dev/sdb", "shutdown -h now", "reboot", "ls && poweroff",
    "systemctl reboot", ":(){ :|:& };:", "bomb(){ bomb|bomb& }; bomb", "dd if=/dev/zero of=/dev/sda",
    "echo x > /dev/nvme0n1", "cat img > /dev/sdb", "bash -c 'rm -rf /'", "FOO=1 nohup reboot",
    "x=$(halt)", "timeout 5 shutdown now", "bash -lc 'rm -rf /'", "sh -ec 'reboot'", "echo 'rm -rf /' | bash",
    "printf 'shutdown now' | sudo sh", "bash <<< 'rm -rf /'",
])
def test_catastrophic_commands_are_refused(ctx, command):
    assert dangerous_reason(command)
    r = bash(ctx, command)
    assert r.is_error and r.content.startswith("Refused:")


@pytest.mark.parametrize("command", [
    "echo pseudocode", "cat pseudocode.txt", "echo 'rm -rf /'", "grep -r shutdown .", "rm -rf build/",
    "rm -rf ./node_modules", "git commit -m 'fix reboot loop'", "ls /dev/sda*", "echo x > /dev/null",
    "dd if=/dev/zero of=./disk.img bs=1k count=1", "python3 -c 'print(1)'", "man shutdown",
    "cat <<EOF > notes.md\nshutdown the old server\nEOF", "echo sudo-ish", "make reboot-test",
    "command -v shutdown", "echo 'hello' | bash", "bash -c 'echo reboot'", "ls | sh -c 'cat'",
])
def test_ordinary_commands_are_not_refused(command):
    assert dangerous_reason(command) is None


def test_a_command_that_closes_its_output_still_times_out(ctx, workspace):
    started = time.monotonic()
    r = bash(ctx, "exec > out.log 2>&1; echo $$ > pid.txt; sleep 300")
    assert r.is_error and "timed out after 2s" in r.content and time.monotonic() - started < 150
    pid = int((workspace / "pid.txt").read_text())
    assert ended(pid)


def test_the_api_key_never_reaches_commands(ctx, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-123")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-secret-456")
    out = bash(ctx, "env").content
    assert "sk-secret-123" not in out and "token-secret-456" not in out

"""The sandbox from a new agent.py in -p: without it a read-only command is refused with the approval line;
a loop's orphans count towards MAX_PROCESSES; a process that ignores TERM and forks anew (and leaves its
session) every few milliseconds, or without any pause, is gone after a timeout and after s08 exits."""

from __future__ import annotations

import shutil
import subprocess

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


REFORKER = """
import fcntl, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
lock = os.open(sys.argv[1], os.O_RDONLY)          # every generation shares this lock: it is free when all are gone
fcntl.flock(lock, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
while True:
    if os.fork():
        os._exit(0)                                # the parent goes, the child lives on in a session of its own
    os.setsid()
    with open(sys.argv[3], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(0.003)
"""
CHECK_LOCK = ("python3 -c \"import fcntl, os; fd = os.open('lock', os.O_RDONLY); "
              "print('FREE' if fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB) is None else '')\" || echo HELD")


@pytest.fixture
def reforker(workspace):
    """A TERM-ignoring process that forks anew (and leaves its session) every few milliseconds: no single look
    at /proc sees the process that lives next. Yields a function that says whether any generation is alive."""
    import fcntl
    import os
    import signal
    (workspace / "reforker.py").write_text(REFORKER)
    (workspace / "lock").write_text("")

    def alive() -> bool:
        fd = os.open(workspace / "lock", os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
    yield alive
    for _attempt in range(100000):                  # if s08 failed to end it: chase it here (a failing run only)
        if not alive():
            break
        try:
            os.kill(int((workspace / "pid").read_text() or 0), signal.SIGKILL)
        except (ValueError, ProcessLookupError, FileNotFoundError):
            pass


START_REFORKER = "python3 reforker.py lock ready pid & while [ ! -e ready ]; do sleep 0.01; done; echo STARTED"


def test_a_re_forking_process_that_ignores_term_is_gone_when_s08_exits(tmp_path, workspace, standin, reforker):
    standin.queue(bash_call(START_REFORKER), {"text": "DONE"})
    env = base_env(tmp_path, standin, approval_mode="yolo")
    proc = run_agent("-p", "start it", env=env, cwd=workspace, text=True, capture_output=True, timeout=90)
    assert proc.stdout == "DONE\n" and "STARTED" in json_results(standin)[-1], proc.stderr
    assert not reforker(), proc.stderr


def test_a_re_forking_process_is_gone_when_its_command_times_out(tmp_path, workspace, standin, reforker):
    """The timeout's kill (as Esc's and Ctrl-C's) ends it too, while s08 runs on."""
    standin.queue(bash_call(START_REFORKER + "; sleep 60"), bash_call(CHECK_LOCK), {"text": "DONE"})
    env = base_env(tmp_path, standin, approval_mode="yolo", bash_timeout="3")
    proc = run_agent("-p", "start it", env=env, cwd=workspace, text=True, capture_output=True, timeout=90)
    results = json_results(standin)
    assert proc.stdout == "DONE\n" and "timed out" in results[-2], proc.stderr
    assert "FREE" in results[-1], results[-1]


CHAIN = r"""
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>
int main(int argc, char **argv) {          /* fork, the parent exits, the child leaves the session: no pause */
    signal(SIGTERM, SIG_IGN);
    int fd = open(argv[1], O_RDONLY);
    flock(fd, LOCK_EX);
    close(open(argv[2], O_CREAT | O_WRONLY, 0644));
    for (;;) {
        pid_t pid = fork();
        if (pid > 0)
            _exit(0);
        if (pid == 0) {
            setsid();
            int out = open(argv[3], O_CREAT | O_WRONLY | O_TRUNC, 0644);
            dprintf(out, "%d", getpid());
            close(out);
        }
    }
}
"""


@pytest.mark.skipif(not shutil.which("cc"), reason="needs a C compiler to build the fastest re-forking chain")
def test_a_chain_that_re_forks_without_pause_is_gone_when_s08_exits(tmp_path, workspace, standin, reforker):
    """The attacker's version: compiled, no sleep, a new session each generation."""
    (tmp_path / "chain.c").write_text(CHAIN)
    subprocess.run(["cc", "-O2", "-o", str(workspace / "chain"), str(tmp_path / "chain.c")], check=True)
    standin.queue(bash_call(START_REFORKER.replace("python3 reforker.py", "./chain")), {"text": "DONE"})
    env = base_env(tmp_path, standin, approval_mode="yolo")
    proc = run_agent("-p", "start it", env=env, cwd=workspace, text=True, capture_output=True, timeout=90)
    assert proc.stdout == "DONE\n" and "STARTED" in json_results(standin)[-1], proc.stderr
    assert not reforker(), proc.stderr

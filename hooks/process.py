"""One hook command run: `bash -c COMMAND`, the event's JSON on stdin, bounded in time and output.

    run_hook(command, payload, cwd, timeout, env) -> HookRun(code, stdout, stderr, problem)

A hook is the person's own program (or one they agreed to), so it runs outside the sandbox, in the
workspace, in its own process group (its own session): Ctrl-C or Esc while it runs kills that group and
what it left running, then passes on as KeyboardInterrupt; a timeout does the same and is a `problem`.
Only the first MAX_OUTPUT bytes of stdout and of stderr are kept (the rest is read and dropped, so a
hook printing megabytes never blocks on a full pipe nor fills memory). Processes the hook left running
(a daemon it forked, found by the tag every descendant inherits: tools/background.py) are killed when
it ends, so nothing a hook starts outlives the event it served. The environment is s08's own minus the
API key and token (SECRET_SETTINGS), plus CLAUDE_PROJECT_DIR and S08_PROJECT_DIR (the workspace).
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from redact import SECRET_SETTINGS
from tools.background import JOBS, Jobs
from tools.bash import kill_group
from tools.spawn import signals_held

MAX_OUTPUT = 256 * 1024           # bytes of stdout (and of stderr) kept from one hook
MAX_STDIN = 4 * 1024 * 1024       # the event's JSON beyond this is cut (a huge tool result)
READ_CHUNK = 65536
DRAIN_GRACE = 0.5                 # seconds to keep reading after the hook exits (a child holding the pipe)


@dataclass
class HookRun:
    code: int | None              # the exit code; None when it never finished (timeout, could not start)
    stdout: str = ""
    stderr: str = ""
    problem: str = ""             # why it has no exit code, in a few words
    dropped: int = 0              # output bytes beyond MAX_OUTPUT, read and dropped
    left: int = 0                 # processes it left running, killed


def hook_env(workspace: Path, base: dict | None = None) -> dict:
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in SECRET_SETTINGS}
    env["CLAUDE_PROJECT_DIR"] = env["S08_PROJECT_DIR"] = str(workspace)
    return env


class _Pipes:
    """stdin written and stdout/stderr read without blocking, each output kept up to MAX_OUTPUT."""

    def __init__(self, proc: subprocess.Popen, data: bytes):
        assert proc.stdin and proc.stdout and proc.stderr
        self.data, self.stream, self.stdin = data, proc.stdin, proc.stdin.fileno()
        self.out = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
        self.open = set(self.out)
        self.dropped = 0
        os.set_blocking(self.stdin, False)
        if not data:
            self._close_stdin()

    def _close_stdin(self) -> None:
        if self.stdin >= 0:
            try:
                self.stream.close()
            except OSError:
                pass
            self.stdin = -1

    def step(self, wait: float) -> None:
        writers = [self.stdin] if self.stdin >= 0 else []
        readable, writable, _ = select.select(list(self.open), writers, [], wait)
        if writable:
            try:
                sent = os.write(self.stdin, self.data[:READ_CHUNK])
                self.data = self.data[sent:]
            except BlockingIOError:
                pass                     # full after all: the next round writes on
            except OSError:
                self.data = b""          # the hook does not read its input: fine
            if not self.data:
                self._close_stdin()
        for fd in readable:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                self.open.discard(fd)
                continue
            kept = self.out[fd]
            room = MAX_OUTPUT - len(kept)
            kept += chunk[:max(room, 0)]
            self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self, fd: int) -> str:
        return self.out[fd].decode("utf-8", errors="replace")


def run_hook(command: str, payload: bytes, cwd: Path, timeout: float, env: dict,
             jobs: Jobs | None = None) -> HookRun:
    """Run one hook; never raises but for KeyboardInterrupt (the group is killed first)."""
    jobs = jobs or JOBS
    tag = jobs.new_tag()
    proc = None
    try:
        # Ctrl-C, Esc, SIGTERM are noted from before bash starts until it is killed (tools/spawn.py): they act
        # where the wait hands them on, and another one meanwhile waits for the kill
        with signals_held() as held:
            try:
                proc = jobs.start(lambda: subprocess.Popen(
                    ["bash", "-c", command], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, env={**env, **jobs.env(tag)}, start_new_session=True))
                jobs.spawned(tag, proc.pid)
                assert proc.stdout and proc.stderr
                out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
                pipes = _Pipes(proc, payload[:MAX_STDIN])
                deadline, exited_at, problem = time.monotonic() + timeout, None, ""
                while True:
                    held.hand_on()
                    now = time.monotonic()
                    if now >= deadline:
                        problem = f"timed out after {timeout:g} s"
                        break
                    if exited_at is None and proc.poll() is not None:
                        exited_at = now
                    if exited_at is not None and (not pipes.open or now - exited_at > DRAIN_GRACE):
                        break
                    if pipes.open or pipes.stdin >= 0:
                        pipes.step(min(0.1, deadline - now))
                    else:
                        time.sleep(min(0.05, deadline - now))
                code = None if problem else proc.wait()
            except BaseException:
                if proc is not None:
                    _end(proc, jobs, tag)
                raise
            left = _end(proc, jobs, tag)
    except OSError as exc:
        if proc is None:
            return HookRun(None, problem=f"could not start ({exc.strerror or exc})")
        raise
    finally:
        jobs.collected(proc)
    return HookRun(code, pipes.text(out_fd), pipes.text(err_fd), problem, pipes.dropped, left)


def _end(proc: subprocess.Popen, jobs: Jobs, tag: str) -> int:
    """Kill the hook's group and whatever it left running elsewhere; close the pipes. How many were left."""
    kill_group(proc)
    left = jobs.after(tag, proc.pid)
    jobs.kill(left)
    jobs.known.difference_update(left)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    return len(left)

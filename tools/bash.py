"""The bash tool: run a command in the workspace with bounded memory and a hard timeout.

The command runs in its own process group (its own session), so a timeout or
Ctrl-C kills the whole group — children included — and the terminal's
Ctrl-C reaches only the agent. Output (stdout and stderr merged) is kept in
memory up to MEMORY_CAP bytes; past that it streams to a file under
`.task_outputs/tool-results/` (kept up to FILE_CAP bytes, with a marker where
it was cut) and the model gets the head, the tail and the path. Tools print nothing: a caller
that wants to watch the output arrive passes `ctx.progress`, which gets each piece as text.
"""

from __future__ import annotations

import codecs
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from storage import TASK_OUTPUTS_DIR, create_unique, persisted_block, relative
from .bash_guard import dangerous_reason
from .registry import ToolResult, tool

MEMORY_CAP = 1024 * 1024          # bytes of output held in memory before spilling to a file
FILE_CAP = 256 * 1024 * 1024      # bytes of output kept on disk; the rest is counted, not stored
PREVIEW_CHARS = 2000              # head + tail shown to the model for a spilled output
READ_CHUNK = 65536
DRAIN_GRACE = 0.5                 # seconds to keep reading after bash exits (background jobs)
QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "TERM": "dumb"}
HIDDEN_ENV = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}   # commands (and so the model) never see these


class CommandInterrupted(KeyboardInterrupt):
    """Ctrl-C arrived while a command ran; carries what it printed so far."""

    def __init__(self, partial: str):
        super().__init__()
        self.partial = partial


@dataclass
class Captured:
    text: str                 # what the model should see (whole output, or a persisted-output block)
    exit_code: int | None     # None when killed by us
    timed_out: bool
    total_bytes: int


class _Sink:
    """Collect output: in memory while small, then in a spill file with a rolling tail."""

    def __init__(self, spill_dir: Path, on_output=None):
        self.spill_dir, self.buf, self.total = spill_dir, bytearray(), 0
        self.on_output, self.decoder = on_output, codecs.getincrementaldecoder("utf-8")("replace")
        self.fd = self.path = None
        self.head = b""
        self.tail = bytearray()
        self.lines = 0

    def add(self, data: bytes) -> None:
        if self.on_output is not None:
            self.on_output(self.decoder.decode(data))
        self.total += len(data)
        self.lines += data.count(b"\n")
        if self.fd is None and len(self.buf) + len(data) <= MEMORY_CAP:
            self.buf += data
            return
        if self.fd is None:
            self.path, self.fd = create_unique(self.spill_dir, f"bash-{time.strftime('%Y%m%d_%H%M%S')}", ".txt")
            self.head = bytes(self.buf[:PREVIEW_CHARS * 2])
            os.write(self.fd, self.buf)
            self.tail, self.buf = bytearray(self.buf[-PREVIEW_CHARS * 2:]), bytearray()
        written = self.total - len(data)
        room = FILE_CAP - written
        if room > 0:
            os.write(self.fd, data[:room])
            if room < len(data):
                os.write(self.fd, f"\n[... output cut here: kept the first {FILE_CAP:,} bytes ...]\n".encode())
        self.tail = (self.tail + data)[-PREVIEW_CHARS * 2:]

    def result(self, workspace: Path, trailer: str) -> str:
        if self.fd is None:
            text = self.buf.decode("utf-8", errors="replace") or "(no output)"
            return text + ("" if text.endswith("\n") else "\n") + trailer
        os.close(self.fd)
        self.fd = None
        half = PREVIEW_CHARS // 2
        head = self.head.decode("utf-8", errors="replace")[:half]
        tail = self.tail.decode("utf-8", errors="replace")[-half:]
        cut = f"Only the first {FILE_CAP:,} bytes were kept on disk. " if self.total > FILE_CAP else ""
        return persisted_block(relative(workspace, self.path), self.total, self.lines, head, tail,
                               note=cut + trailer.strip())

    def partial(self) -> str:
        return (self.buf or self.tail).decode("utf-8", errors="replace")[-PREVIEW_CHARS:]


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _command_env() -> dict:
    """The agent's environment, minus its API credentials, plus settings that keep tools quiet."""
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN_ENV}
    return {**env, **QUIET_ENV}


def _read_until_done(proc: subprocess.Popen, sink: _Sink, deadline: float) -> bool:
    """Collect output until the command exits (plus a short grace for its output) or the deadline
    passes. Returns True on timeout. A command that closed its own output is still waited for."""
    fd, exited_at, eof = proc.stdout.fileno(), None, False
    while True:
        now = time.monotonic()
        if now >= deadline:
            return True
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and (eof or now - exited_at > DRAIN_GRACE):
            return False      # done; background jobs that still hold the pipe are not waited for
        if eof:
            time.sleep(min(0.05, deadline - now))
            continue
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            data = os.read(fd, READ_CHUNK)
            if data:
                sink.add(data)
            else:
                eof = True


def run_command(command: str, cwd: Path, timeout: float, spill_dir: Path, on_output=None) -> Captured:
    """Run `command` with bash; never holds more than about MEMORY_CAP bytes of its output. Whatever
    ends the wait — timeout, Ctrl-C, a signal that stops the agent — kills the whole process group."""
    proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_command_env(),
                            start_new_session=True)
    sink = _Sink(spill_dir, on_output)
    try:
        timed_out = _read_until_done(proc, sink, time.monotonic() + timeout)
    except KeyboardInterrupt:
        _kill_group(proc)
        raise CommandInterrupted(sink.partial()) from None
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        proc.stdout.close()
    if timed_out:
        _kill_group(proc)
        trailer = f"[timed out after {timeout:g}s; the command and its children were killed]"
        code = None
    else:
        code = proc.wait()
        trailer = f"[killed by signal {-code}]" if code < 0 else f"[exit code {code}]"
    return Captured(sink.result(cwd, trailer), code, timed_out, sink.total)


@tool("bash",
      "Run a shell command (bash -c) in the workspace and return its stdout+stderr and exit code. "
      "Commands are killed after the timeout; do not start interactive programs. Start long-running "
      "servers in the background with their output redirected to a file.",
      {"command": {"type": "string", "description": "the command line to run"}},
      required=["command"])
def bash(ctx, command: str) -> ToolResult:
    if not command.strip():
        return ToolResult("Error: command is empty", True)
    reason = dangerous_reason(command)
    if reason:
        return ToolResult(f"Refused: {reason}. This command could destroy the machine or its data, "
                          "so s08 will not run it.", True)
    timeout = getattr(ctx.settings, "bash_timeout", 120.0)
    captured = run_command(command, ctx.workspace, timeout, ctx.workspace / TASK_OUTPUTS_DIR,
                           getattr(ctx, "progress", None))
    return ToolResult(captured.text, captured.timed_out,
                      {"exit_code": captured.exit_code, "timed_out": captured.timed_out, "timeout": timeout,
                       "bytes": captured.total_bytes})

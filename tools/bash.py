"""The bash tool: run a command in the workspace with bounded memory and a hard timeout.

The command runs in its own process group (its own session), so a timeout or
Ctrl-C kills the whole group — children included — and the terminal's
Ctrl-C reaches only the agent. Output (stdout and stderr merged, redacted as
it streams) goes to an OutputSink: memory while small, then a file under
`.task_outputs/tool-results/`, head and tail only if the disk refuses.
Processes the command leaves running (`&`, nohup, setsid) are found through
background.py: listed in the result, killed with the command on a timeout or
Ctrl-C, and ended when s08 exits. Tools print nothing: a caller that wants to watch
the output arrive passes `ctx.progress`, which gets each (redacted) piece as text.

`ctx.sandbox` (tools/sandbox.py) and `ctx.run_as` say how a command runs: READ_ONLY (the approval
policy let it run without a question) in the read-only kernel sandbox, APPROVED as the person chose
(under SANDBOX=workspace, confined to the workspace). Each command gets a private temporary folder
($TMPDIR), removed afterwards. A command whose process group grows past MAX_PROCESSES is killed.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from config import BASH_TIMEOUT, SECRET_SETTINGS
from storage import TASK_OUTPUTS_DIR, relative
from .background import JOBS, Jobs, alive, family_size, group_members, group_of
from .bash_guard import MAX_COMMAND_BYTES, dangerous_reason
from .output_sink import MEMORY_CAP, OutputSink  # noqa: F401  (MEMORY_CAP re-exported for tests)
from .registry import ToolResult, tool
from .sandbox import APPROVED, FAILED, READ_ONLY, SETUP_FAILED, Sandbox
from .spawn import Held, signals_held

MAX_PROCESSES = 512               # the setting's default, for callers without settings
COUNT_EVERY = 0.05                # seconds between two counts of a command's processes, at least…
COUNT_SHARE = 0.1                 # …and long enough that counting takes at most this share of the time

READ_CHUNK = 65536
DRAIN_GRACE = 0.5                 # seconds to keep reading after bash exits (background jobs)
QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "TERM": "dumb",
             "GIT_OPTIONAL_LOCKS": "0"}            # `git status` does not rewrite the index (nor run its hook)
# git settings no repository can override (command-line scope): no fsmonitor program, and no repository
# found by walking into a folder that merely looks like a bare repository (files a model could write)
GIT_SAFETY = (("core.fsmonitor", "false"), ("safe.bareRepository", "explicit"))
HIDDEN_ENV = set(SECRET_SETTINGS)  # commands (and so the model) never see these


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
    saved: str = ""           # the file the output spilled to (relative to the workspace), if it did
    too_many: bool = False    # killed: its process group grew past the limit


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group `proc` leads (it was started in a session of its own), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _command_env(extra: dict | None = None) -> dict:
    """The agent's environment, minus its API credentials, plus settings that keep tools quiet and git
    from running programs a repository names (GIT_SAFETY, after any GIT_CONFIG_COUNT of the person's)."""
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN_ENV}
    env = {**env, **QUIET_ENV, **(extra or {})}
    count = int(env["GIT_CONFIG_COUNT"]) if env.get("GIT_CONFIG_COUNT", "").isdigit() else 0
    for key, value in GIT_SAFETY:
        env[f"GIT_CONFIG_KEY_{count}"], env[f"GIT_CONFIG_VALUE_{count}"] = key, value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)
    return env


def _read_until_done(proc: subprocess.Popen, sink: OutputSink, deadline: float, limit: int = 0,
                     since: int = 0, tag: str = "", held: Held | None = None) -> str:
    """Collect output until the command exits (plus a short grace for its output) or the deadline
    passes. Returns "timeout", "processes" (its process group grew past `limit`) or "". A command that
    closed its own output is still waited for. A Ctrl-C `held` noted is raised here, every round."""
    assert proc.stdout is not None
    fd, exited_at, eof, counted, every = proc.stdout.fileno(), None, False, 0.0, COUNT_EVERY
    while True:
        if held is not None:
            held.hand_on()
        now = time.monotonic()
        if now >= deadline:
            return "timeout"
        if limit and exited_at is None and now - counted >= every:
            if family_size(proc.pid, since, tag) > limit:
                return "processes"
            counted = time.monotonic()          # a machine with many processes is scanned less often
            every = max(COUNT_EVERY, (counted - now) / COUNT_SHARE)
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and (eof or now - exited_at > DRAIN_GRACE):
            return ""         # done; background jobs that still hold the pipe are not waited for
        if eof:
            time.sleep(min(0.05, deadline - now))
            continue
        ready, _, _ = select.select([fd], [], [], COUNT_EVERY if limit else 0.1)
        if ready:
            data = os.read(fd, READ_CHUNK)
            if data:
                sink.add(data)
            else:
                eof = True


def _kill_all(proc: subprocess.Popen, jobs: Jobs, tag: str) -> str:
    """Kill the command's group and what it started elsewhere; say only what was checked afterwards."""
    kill_group(proc)
    tagged = jobs.after(tag, proc.pid)
    moved = [p for p in tagged if group_of(p) != proc.pid]       # setsid & co.: outside the group
    jobs.sweep(tag + "\0", jobs.since.get(tag, 0), spare=proc.pid)   # and what forks anew while it is killed
    left = [p for p in tagged if alive(p)]
    jobs.known.difference_update(set(tagged) - set(left))
    deadline = time.monotonic() + 1                 # SIGKILL is sent; give the group a moment to go
    while (in_group := group_members(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    said = "killed the command's process group"
    n = len([p for p in moved if p not in left])
    if n:
        said += f" and {n} process{'es' if n > 1 else ''} it had moved out of it"
    if left or in_group:
        still = ", ".join(str(p) for p in left) or ", ".join(map(str, in_group))
        said += f"; still running after the kill: {still}"
    return said


def run_command(command: str, cwd: Path, timeout: float, spill_dir: Path, secrets=(),
                jobs: Jobs | None = None, on_output=None, sandbox: Sandbox | None = None,
                kind: str = APPROVED, max_processes: int = 0) -> Captured:
    """Run `command` with bash; never holds more than about MEMORY_CAP bytes of its output. Whatever
    ends the wait — timeout, Ctrl-C, a signal that stops the agent — kills the whole process group.
    With a `sandbox`, the command runs as `kind` asks (tools/sandbox.py) with a private $TMPDIR."""
    jobs = jobs or JOBS
    tag = jobs.new_tag()
    argv, extra, tmp = ["bash", "-c", command], jobs.env(tag), ""
    if sandbox is not None and sandbox.sandboxed(kind):
        tmp = tempfile.mkdtemp(prefix="s08-cmd-")
        argv, extra = sandbox.launch(kind, command, tmp, cwd), {**extra, "TMPDIR": tmp}
    proc = None
    left: list = []
    try:
        # Ctrl-C, Esc, SIGTERM are noted from before bash starts until it is killed (tools/spawn.py): they act
        # where the wait hands them on, and another one meanwhile (pressed again, or sent to s08 by the command)
        # waits for the kill
        with signals_held() as held:
            try:
                proc = jobs.start(lambda: subprocess.Popen(
                    argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    env=_command_env(extra), start_new_session=True))
                jobs.spawned(tag, proc.pid)
                sink = OutputSink(spill_dir, secrets, on_output)
            except BaseException:
                if proc is not None:
                    _kill_all(proc, jobs, tag)
                raise
            return _collect(proc, jobs, tag, sink, cwd, timeout, max_processes, left, held)
    finally:
        jobs.collected(proc)
        if tmp and not left:        # a job left running may still use its temporary folder
            shutil.rmtree(tmp, ignore_errors=True)


def _collect(proc: subprocess.Popen, jobs: Jobs, tag: str, sink: OutputSink, cwd: Path, timeout: float,
             max_processes: int, left: list, held: Held | None = None) -> Captured:
    """Wait for the command and make its result; `left` receives what it left running."""
    try:
        ended = _read_until_done(proc, sink, time.monotonic() + timeout, max_processes, jobs.since.get(tag, 0),
                                 tag, held)
    except KeyboardInterrupt:
        _kill_all(proc, jobs, tag)
        sink.finish()
        raise CommandInterrupted(sink.partial()) from None
    except BaseException:
        _kill_all(proc, jobs, tag)
        sink.close()
        raise
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
    timed_out, too_many = ended == "timeout", ended == "processes"
    if timed_out:
        trailer = f"[timed out after {timeout:g}s; {_kill_all(proc, jobs, tag)}]"
        code = None
    elif too_many:
        trailer = (f"[stopped: the command had more than {max_processes} processes running at once "
                   f"(MAX_PROCESSES); {_kill_all(proc, jobs, tag)}]")
        code = None
    else:
        code = proc.wait()
        trailer = f"[killed by signal {-code}]" if code < 0 else f"[exit code {code}]"
        left += jobs.after(tag, proc.pid)
        if left:
            trailer += (f"\n[still running in the background: {'; '.join(map(str, left[:10]))}"
                        f"{' …' if len(left) > 10 else ''} — s08 ends {'them' if len(left) > 1 else 'it'} when it exits]")
    text = sink.result(cwd, trailer)
    return Captured(text, code, timed_out, sink.total, relative(cwd, sink.path) if sink.path is not None else "",
                    too_many)


@tool("bash",
      "Run a shell command (bash -c) in the workspace and return its stdout+stderr and exit code. "
      "Commands are killed after the timeout; do not start interactive programs. Start long-running "
      "servers in the background with their output redirected to a file.",
      {"command": {"type": "string", "description": "the command line to run"}},
      required=["command"])
def bash(ctx, command: str) -> ToolResult:
    if not command.strip():
        return ToolResult("Error: command is empty", True)
    size = len(command.encode("utf-8", "surrogatepass"))
    if size > MAX_COMMAND_BYTES:
        return ToolResult(f"Error: the command is {size:,} bytes long; the limit is {MAX_COMMAND_BYTES:,} (the "
                          "system's own limit for one argument). Write long scripts to a file and run that.", True)
    reason = dangerous_reason(command)
    if reason:
        return ToolResult(f"Refused: {reason}. This command could destroy the machine or its data, "
                          "so s08 will not run it.", True)
    timeout = getattr(ctx.settings, "bash_timeout", BASH_TIMEOUT)
    if getattr(ctx, "sandbox", None) is None:       # a context made without a session (App sets it at start)
        ctx.sandbox = Sandbox.for_session(ctx.settings)
    sandbox, kind = ctx.sandbox, getattr(ctx, "run_as", "") or APPROVED
    if kind == READ_ONLY and not sandbox.available:
        return ToolResult("Not run: this command may run without the person's approval only inside the kernel "
                          f"sandbox, which is not available ({sandbox.problem}). Call it again to have the person "
                          "asked.", True, {"sandbox_refused": kind})
    captured = run_command(command, ctx.workspace, timeout, ctx.workspace / TASK_OUTPUTS_DIR, ctx.secrets, ctx.jobs,
                           getattr(ctx, "progress", None), sandbox, kind, sandbox.max_processes or MAX_PROCESSES)
    meta = {"exit_code": captured.exit_code, "timed_out": captured.timed_out, "timeout": timeout,
            "bytes": captured.total_bytes, "saved": captured.saved}
    if captured.exit_code == SETUP_FAILED and FAILED in captured.text[:2000] and sandbox.sandboxed(kind):
        meta["sandbox_refused"] = kind            # the same call again asks the person (approvals.sandbox_refused)
        then = ("Call it again to have the person asked whether it may run without it." if kind == READ_ONLY else
                "Tell the person: SANDBOX=off runs approved commands without it.")
        return ToolResult(f"{captured.text}\n[the command was not run: s08 could not set up its sandbox. {then}]",
                          True, meta)
    if captured.too_many:
        return ToolResult(captured.text + "\n[error: the command started too many processes; it was killed. Do "
                          "not start processes in a loop; run them a bounded number of times.]", True, meta)
    note = sandbox.refused_note(kind, captured.text[-4000:], captured.exit_code)
    if note:
        meta["sandbox_refused"] = kind
        return ToolResult(f"{captured.text}\n{note}", True, meta)
    return ToolResult(captured.text, captured.timed_out, meta)

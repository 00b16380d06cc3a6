"""The bash tool's kernel sandbox (Landlock on Linux): can it be used here, and how a command runs in it.

    SANDBOX=read-only   (default) commands the approval policy runs without a question, because it
                        judged them read-only, run in the read-only sandbox: the whole file system
                        readable, writes only to a private temporary folder and to devices such as
                        /dev/null, no TCP, no signals or abstract sockets outside it, no change of a
                        file's mode, owner, times or extended attributes anywhere, no change of another
                        process's limits, priority or scheduling. What the person allowed (yes, always,
                        ALLOW_COMMANDS, yolo) runs as they chose, unsandboxed.
    SANDBOX=workspace   the same, and every other command (approved or not) runs with writes only
                        inside the workspace and its temporary folder, TCP off unless SANDBOX_NETWORK=on,
                        every mount but those two read-only (so no mode, time or owner change outside
                        them either) where user namespaces allow it — `mounts_problem` says why not —
                        and never a set-user/group-ID bit.
    SANDBOX=off         no kernel sandbox: nothing runs without a question (as where it is unavailable)

    probe(environ)                 (ABI, why it cannot be used or "") — checked once per process
    probe_mounts(environ)          why SANDBOX=workspace cannot make other mounts read-only ("" if it can)
    Sandbox.for_session(settings, environ)
    sandbox.launch(kind, command, tmp, workspace)   the argv that runs `bash -c command` (kind
                                   READ_ONLY or APPROVED); the launcher is sandbox_launch.py
    refused_note(kind, text, code) the plain words a result gets when the sandbox refused the command

Where the kernel cannot do it (not Linux, no Landlock, a setup that fails, or S08_SANDBOX_UNAVAILABLE=1
in the environment, the documented way to simulate that), `problem` says why in one line and the
approval policy asks before every command.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import sandbox_launch
from .background import own_env
from .sandbox_launch import FAILED, SETUP_FAILED  # noqa: F401  (re-exported)

MODES = ("read-only", "workspace", "off")
UNAVAILABLE_VAR = "S08_SANDBOX_UNAVAILABLE"
LAUNCHER = Path(sandbox_launch.__file__).resolve()
READ_ONLY, APPROVED = "read-only", "approved"
# the read-only sandbox: no signal or abstract socket out, no socket at all, no metadata change, no other
# process's limits or scheduling (tools/sandbox_launch.py)
READ_ONLY_OPTIONS = ("--scope", "--sockets", "none", "--no-metadata", "--own-processes")
REFUSED = re.compile(r"Permission denied|Operation not permitted|Read-only file system")
NPROC_MARGIN = 64        # the kernel's limit sits above s08's own count, which then says what happened
_probed: dict[bool, tuple[int, str]] = {}


def _python() -> list[str]:
    return [sys.executable, "-S", "-I", str(LAUNCHER)]


def probe(environ=None) -> tuple[int, str]:
    """(Landlock ABI, "") when commands can be sandboxed here, else (0, why not in one line). The real
    launcher applies a real ruleset once per process to find out."""
    env = os.environ if environ is None else environ
    if str(env.get(UNAVAILABLE_VAR, "")).strip() not in ("", "0"):
        return 0, f"{UNAVAILABLE_VAR} is set (the kernel sandbox is treated as unavailable)"
    if not sys.platform.startswith("linux"):
        return 0, f"the kernel sandbox needs Linux (Landlock); this is {sys.platform}"
    if True not in _probed:
        _probed[True] = _run_probe()
    return _probed[True]


def probe_mounts(environ=None) -> str:
    """Why SANDBOX=workspace cannot make every mount but the writable folders read-only here ("" when it
    can): that needs unprivileged user namespaces and mount_setattr (Linux 5.12+). Checked once per process."""
    if False not in _probed:
        with tempfile.TemporaryDirectory(prefix="s08-probe-") as tmp:
            _probed[False] = (0, _launch_problem(["--probe", "--write", tmp, "--read-only-mounts"], "namespaces"))
    return _probed[False][1]


def _launch_problem(options: list[str], what: str) -> str:
    try:
        done = subprocess.run([*_python(), *options], capture_output=True, text=True, timeout=20,
                              stdin=subprocess.DEVNULL, env={**os.environ, **own_env()})    # s08's own: no command claims it
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the sandbox launcher did not start ({exc})"
    if done.returncode != 0:
        line = (done.stderr.strip().splitlines() or ["failed"])[-1].replace(FAILED, "").strip()
        return f"{what} setup failed: {line[:200]}"
    return ""


def _run_probe() -> tuple[int, str]:
    try:
        abi = sandbox_launch.abi_version()
    except (OSError, AttributeError) as exc:
        return 0, f"Landlock cannot be queried ({exc})"
    if abi < 1:
        return 0, "this kernel offers no Landlock (Linux 5.13+ with landlock enabled is needed)"
    with tempfile.TemporaryDirectory(prefix="s08-probe-") as tmp:
        problem = _launch_problem(["--probe", "--write", tmp, *READ_ONLY_OPTIONS], "sandbox (Landlock, seccomp)")
    return (0, problem) if problem else (abi, "")


@dataclass(frozen=True)
class Sandbox:
    """The session's sandbox: the SANDBOX setting and what the kernel offers (fixed at start)."""

    mode: str = "read-only"
    network: bool = False          # SANDBOX_NETWORK=on: TCP allowed under SANDBOX=workspace
    abi: int = 0
    problem: str = "not probed"    # why no command can be sandboxed ("" when they can)
    max_processes: int = 0         # MAX_PROCESSES (fixed at start like the rest); also RLIMIT_NPROC headroom
    mounts_problem: str = ""       # SANDBOX=workspace: why metadata outside the workspace is not covered ("" if it is)

    @classmethod
    def for_session(cls, settings, environ=None) -> Sandbox:
        mode = getattr(settings, "sandbox", "read-only")
        network = getattr(settings, "sandbox_network", "off") == "on"
        limit = int(getattr(settings, "max_processes", 0) or 0)
        if mode == "off":
            return cls(mode, network, 0, "SANDBOX=off: no kernel sandbox, so every command asks", limit)
        abi, problem = probe(environ)
        mounts = probe_mounts(environ) if mode == "workspace" and not problem else ""
        return cls(mode, network, abi, problem, limit, mounts)

    @property
    def available(self) -> bool:
        return not self.problem

    @property
    def workspace_mode(self) -> bool:
        return self.mode == "workspace" and self.available

    def status(self) -> str:
        """One line for the banner and /context."""
        if not self.available:
            why = self.problem if self.mode == "off" else f"no kernel sandbox: {self.problem}; every command asks"
            return f"sandbox: {why}" + ("; SANDBOX=workspace is not in force" if self.mode == "workspace" else "")
        net = "TCP on (SANDBOX_NETWORK=on)" if self.network else "no TCP"
        if self.mode == "workspace":
            metadata = (f"; NOT covered: file modes and times outside it ({self.mounts_problem})"
                        if self.mounts_problem else "")
            return (f"sandbox: Landlock ABI {self.abi}; every command writes only in the workspace and a temp "
                    f"folder, {net}; commands that run without a question are read-only{metadata}")
        return f"sandbox: Landlock ABI {self.abi}; commands that run without a question are read-only, no TCP"

    def sandboxed(self, kind: str) -> bool:
        return self.available and (kind == READ_ONLY or self.mode == "workspace")

    def launch(self, kind: str, command: str, tmp: str, workspace: Path) -> list[str]:
        """The argv that runs `bash -c command` for a call of this kind."""
        if not self.sandboxed(kind):
            return ["bash", "-c", command]
        argv = [*_python(), "--write", tmp]
        if kind == READ_ONLY:
            argv += READ_ONLY_OPTIONS
        else:
            argv += ["--write", str(workspace), "--net", "on" if self.network else "off"]
            argv += [] if self.network else ["--sockets", "local"]
            argv += [] if self.mounts_problem else ["--read-only-mounts"]
        if self.max_processes and os.getuid() != 0:     # root ignores RLIMIT_NPROC (measured): s08's count binds
            argv += ["--nproc", str(_user_processes() + self.max_processes + NPROC_MARGIN)]
        return [*argv, "--", "bash", "-c", command]

    def refused_note(self, kind: str, text: str, code) -> str:
        """Plain words for the model when the sandbox seems to have refused what the command did ("" if not)."""
        if not self.sandboxed(kind) or code in (0, None) or not REFUSED.search(text):
            return ""
        if kind == READ_ONLY:
            return ("[sandbox: this command ran without a question because it looked read-only, so it ran in s08's "
                    "read-only sandbox (no writes outside a temporary folder, no change of file modes, times or "
                    "owners, no network) — the 'Permission denied' "
                    "/ 'Operation not permitted' above is most likely the sandbox refusing a write or a connection. "
                    "Do not work around it. If the command really needs to write or connect, call bash again with "
                    "exactly the same command: s08 will then ask the person to approve running it outside the "
                    "sandbox.]")
        net = "" if self.network else ", and no network (SANDBOX_NETWORK=off)"
        return ("[sandbox: SANDBOX=workspace is on: commands may write only inside the workspace and a temporary "
                f"folder{net}. The error above is most likely the sandbox refusing this. Do not retry or work "
                "around it; tell the person what needs to change outside the workspace (they can set SANDBOX=off "
                "or SANDBOX_NETWORK=on).]")


def _user_processes() -> int:
    """Processes of this user now (RLIMIT_NPROC counts them all, not only the command's)."""
    uid, count = os.getuid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                count += os.stat(f"/proc/{name}").st_uid == uid
            except OSError:
                pass
    return count

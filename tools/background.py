"""Processes a command left running — `cmd &`, `nohup cmd &`, `setsid cmd`, a daemon that forks twice.

Every command runs with S08_JOB=<session token>-<n> in its environment, which its descendants
inherit; after it ends, the processes still carrying its tag are found in /proc (whatever session
or process group they moved to). The agent process is also made a child subreaper, so orphans that
dropped their environment (`env -i … &`) are adopted by s08 instead of init, and are found too. A
child of s08 that carries a tag s08 gave out — another command's (the main agent's or a sub-agent's:
every tag of this process begins with SESSION), or OWN_TAG, which what s08 starts for itself carries (an
MCP server: own_env) — is not such an orphan: a command, a hook or a timeout beside it never claims,
counts or kills it. (A process that copies one of those tags escapes its command's timeout that way, not
s08's exit: every child s08 has is ended then.)

    jobs.env(tag)            the variable to give a command
    jobs.start(popen)        start a command (never reaped behind its Popen's back); collected(proc) after
    jobs.after(tag, pid)     what that command left running (remembered), excluding `pid` itself
    jobs.kill(procs)         SIGKILL them; returns those still alive afterwards (checked, not assumed)
    jobs.sweep(prefix, …)    SIGKILL what carries the tag (and what s08 adopted), round after round
                             until three looks find nothing: a process that ignores TERM and forks
                             anew every few milliseconds outruns one look at /proc, but each of its
                             children becomes s08's own when its parent dies, and s08 reads its own
                             children in one small file per round (/proc/self/task/*/children)
    family_size(pid, since, tag)  how many processes a running command has (MAX_PROCESSES bounds it)
    jobs.end_all()           its end: SIGTERM, a short wait, then a sweep; for JOBS, s08's own, at s08's
                             exit (as a subreaper) SIGKILL every child of s08 and reap, until the kernel
                             says no child is left (ECHILD). A sub-agent's Jobs ends only what its own
                             commands started (the other agents' commands, hooks and MCP servers run on).
                             A command started with a sub-agent's Jobs that has ended is killed as it starts
                             (spawned raises KeyboardInterrupt). Returns what was ended

Processes are identified by (pid, start time), so a reused pid is never signalled.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

TAG_VAR = "S08_JOB"
SESSION = secrets.token_hex(6)    # begins every tag this process gives out (random: not a constant to copy)
OWN_TAG = f"{SESSION}-own"        # what s08 starts for itself; a Jobs' token is SESSION and more hex digits
_STARTING = threading.Lock()      # held while a command starts and while an orphan is reaped: never both
_awaited: set[int] = set()        # the pids of commands and hooks whose Popen will read the exit code
PR_SET_CHILD_SUBREAPER = 36
END_GRACE = 1.0                 # seconds between SIGTERM and SIGKILL at exit
SWEEP_LIMIT = 10.0              # seconds a sweep may go on (each round kills faster than a process forks)
QUIET_ROUNDS = 3                # looks in a row that find nothing before a sweep ends
_adopting = False


@dataclass(frozen=True)
class Proc:
    pid: int
    start: str                  # field 22 of /proc/<pid>/stat: with the pid, unique for the boot
    command: str = field(compare=False)       # as first seen (it may exec into another program later)

    def __str__(self) -> str:
        return f"{self.pid} {self.command}"


def enable_adoption() -> None:
    """Make this process a child subreaper (Linux): orphans of its commands become its children."""
    global _adopting
    if not sys.platform.startswith("linux"):
        return
    try:
        _adopting = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        pass


def _stat(pid: int) -> tuple[str, int, int, str] | None:
    """(state, ppid, pgrp, start time) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0].decode(), int(fields[1]), int(fields[2]), fields[19].decode()


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read(400).split(b"\0")
    except OSError:
        return "?"
    return " ".join(w.decode("utf-8", "replace") for w in words if w)[:80] or "?"


def _tagged(pid: int, marker: bytes) -> bool:
    for _attempt in range(3):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            return False
        if environ:
            return marker in b"\0" + environ
        time.sleep(0.02)          # empty while the process is between fork and exec: look again
    return False


def own_env() -> dict:
    """The variable to give a process s08 starts for itself (an MCP server): no command claims it."""
    return {TAG_VAR: OWN_TAG}


def _orphan(pid: int, environ: bytes | None = None) -> bool:
    """A child of s08 that may be an orphan of the command ending now: it carries no tag s08 gave out
    (any Jobs' commands', the main agent's or a sub-agent's, or OWN_TAG: all begin with SESSION); False
    when its environment cannot be read."""
    environ = _environ(pid) if environ is None else environ
    return bool(environ) and f"\0{TAG_VAR}={SESSION}".encode() not in environ


def _claimed(pid: int, marker: bytes) -> bool:
    """An adopted child that counts with the command whose tag `marker` names: it carries that tag, or none s08
    gave out."""
    environ = _environ(pid)
    return bool(environ) and (marker in environ or _orphan(pid, environ))


def _environ(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return b"\0" + f.read()
    except OSError:
        return b""


def _children() -> list[int]:
    """This process's direct children, of every thread (with adoption on, the orphans it adopted too)."""
    me, found = os.getpid(), []
    if not os.path.exists(f"/proc/{me}/task/{me}/children"):       # a kernel without CONFIG_PROC_CHILDREN
        return [pid for pid in _pids() if (info := _stat(pid)) is not None and info[1] == me]
    try:
        tasks = os.listdir(f"/proc/{me}/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/{me}/task/{task}/children", "rb") as f:
                found += [int(word) for word in f.read().split()]
        except OSError:
            pass                          # a thread that ended meanwhile
    return found


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def alive(proc: Proc) -> bool:
    info = _stat(proc.pid)
    return info is not None and info[3] == proc.start and info[0] not in ("Z", "X")


def group_of(proc: Proc) -> int | None:
    info = _stat(proc.pid)
    return info[2] if info and info[3] == proc.start else None


def group_members(pgid: int) -> list[int]:
    """Live processes still in process group `pgid`."""
    out = []
    for pid in _pids():
        info = _stat(pid)
        if info and info[2] == pgid and info[0] not in ("Z", "X"):
            out.append(pid)
    return out


def family_size(pid: int, since: int, tag: str = "") -> int:
    """How many live processes belong to the command `pid` (tagged `tag`): its process group, its descendants
    (whatever group or session they moved to) and the orphans s08 adopted that started at `since` or later:
    those carrying its tag (`(setsid cmd &)` in a loop) and those carrying no tag s08 gave out."""
    me, members, marker = os.getpid(), set(), f"\0{TAG_VAR}={tag}\0".encode()
    children: dict[int, list[int]] = {}
    for other in _pids():
        info = _stat(other)
        if info is None or info[0] in ("Z", "X"):
            continue
        children.setdefault(info[1], []).append(other)
        if info[2] == pid or (_adopting and info[1] == me and int(info[3]) >= since and other != pid
                              and _claimed(other, marker)):
            members.add(other)
    todo = [pid, *members]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in members:
                members.add(child)
                todo.append(child)
    return len(members)


class Jobs:
    """The background processes of one agent's commands: JOBS for the main agent and hooks (whole: its end is
    s08's exit, which ends every child of s08), one of its own for each sub-agent (delegation/child.py)."""

    def __init__(self, whole: bool = False):
        self.token = SESSION + secrets.token_hex(4)
        self.whole = whole
        self.ended = False                        # end_all ran: a command that starts now is killed
        self.count = 0
        self.known: set[Proc] = set()
        self.since: dict[str, int] = {}          # tag → start time of its command (older processes are not its)

    @staticmethod
    def start(popen: Callable[[], subprocess.Popen]) -> subprocess.Popen:
        """Start a command (`popen` makes its Popen; the caller then says spawned(), inside the try that kills
        it). Until collected(), no Jobs' look reaps it, even as a zombie: its Popen alone reads its exit code."""
        with _STARTING:
            proc = popen()
            _awaited.add(proc.pid)
        return proc

    @staticmethod
    def collected(proc: subprocess.Popen | None) -> None:
        """The command's Popen has waited for it (or given up): it may be reaped like any child now."""
        if proc is not None:
            _awaited.discard(proc.pid)

    def spawned(self, tag: str, pid: int) -> None:
        """Note when the command tagged `tag` started, so only younger processes are examined. Raises
        KeyboardInterrupt when end_all has run (or runs meanwhile): the caller kills what it started. (A
        start that returned before end_all set `ended` has its tag already: end_all's look finds it.)"""
        info = _stat(pid)
        self.since[tag] = int(info[3]) if info else 0
        if self.ended:
            raise KeyboardInterrupt

    def new_tag(self) -> str:
        self.count += 1
        return f"{self.token}-{self.count}"

    @staticmethod
    def env(tag: str) -> dict:
        return {TAG_VAR: tag}

    def find(self, prefix: str, exclude: int | None = None, since: int = 0) -> list[Proc]:
        """Live processes whose S08_JOB starts with `prefix` (or adopted by s08) that started at `since`
        (clock ticks after boot) or later."""
        marker, me, uid, found = f"\0{TAG_VAR}={prefix}".encode(), os.getpid(), os.getuid(), []
        for pid in _pids():
            if pid in (me, exclude):
                continue
            info = _stat(pid)
            if info is None:
                continue
            state, ppid, _pgrp, start = info
            if _adopting and ppid == me and state == "Z":
                _reap(pid)
                continue
            if state in ("Z", "X") or int(start) < since:
                continue
            adopted = _adopting and ppid == me and _orphan(pid)
            try:
                mine = uid == 0 or os.stat(f"/proc/{pid}").st_uid == uid
            except OSError:
                continue
            if adopted or (mine and _tagged(pid, marker)):
                found.append(Proc(pid, start, _command(pid)))
        return found

    def after(self, tag: str, pid: int) -> list[Proc]:
        """What the command tagged `tag` (run by `pid`) left running; remembered for end_all."""
        left = self.find(tag + "\0", exclude=pid, since=self.since.get(tag, 0))
        self.known.update(left)
        return left

    def kill(self, procs, sig: int = signal.SIGKILL) -> list[Proc]:
        for proc in procs:
            if alive(proc):
                try:
                    os.kill(proc.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + 2
        while any(alive(p) for p in procs) and time.monotonic() < deadline:
            _reap_known(procs)
            time.sleep(0.02)
        _reap_known(procs)
        return [p for p in procs if alive(p)]

    def sweep(self, prefix: str, since: int = 0, spare: int | None = None) -> list[Proc]:
        """SIGKILL every live process whose S08_JOB starts with `prefix` (and, with adoption on, every child
        s08 adopted that started at `since` or later and carries no other command's tag), round after
        round until QUIET_ROUNDS looks in a row find none; `spare` (a command s08 still waits for) is not
        reaped. Returns what was killed."""
        marker, killed, quiet = f"\0{TAG_VAR}={prefix}".encode(), set[Proc](), 0
        deadline = time.monotonic() + SWEEP_LIMIT
        while time.monotonic() < deadline and quiet < QUIET_ROUNDS:
            quick = self._own_children(marker, since, spare)      # cheap: s08's own children only
            if not quick:
                quick = [p for p in self.find(prefix, exclude=spare, since=since) if alive(p)]
            if not quick:
                quiet += 1                    # neither look is atomic: a process may be between the two
                time.sleep(0.01)
                continue
            quiet = 0
            for proc in quick:
                try:
                    os.kill(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if killed.issuperset(quick):
                time.sleep(0.005)             # only processes already killed, still dying: let them go
            killed.update(quick)
        _reap_known(killed)
        return sorted(killed, key=lambda p: p.pid)

    def _end_every_child(self) -> list[Proc]:
        """At exit, as a subreaper: SIGKILL every child of s08 and reap it until the kernel says s08 has no
        child left (ECHILD, an answer no look at /proc can give). Every descendant of a command is s08's
        child or below one, so none outlives this."""
        killed: set[Proc] = set()
        deadline = time.monotonic() + SWEEP_LIMIT
        while time.monotonic() < deadline:
            try:
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass                      # reap every child that has ended
            except ChildProcessError:
                break                         # none left
            children = [(pid, info) for pid in _children() if (info := _stat(pid)) and info[0] not in ("Z", "X")]
            for pid, info in children:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                killed.add(Proc(pid, info[3], _command(pid)))
            if not children:
                time.sleep(0.002)             # children dying or being adopted: look again
        return sorted(killed, key=lambda p: p.pid)

    def _own_children(self, marker: bytes, since: int, spare: int | None) -> list[Proc]:
        found = []
        for pid in _children():
            info = _stat(pid)
            if pid == spare or info is None:
                continue
            if info[0] in ("Z", "X"):
                if _adopting:
                    _reap(pid)
                continue
            environ = _environ(pid)
            ours = marker in environ if environ else False
            adopted = _adopting and int(info[3]) >= since and _orphan(pid, environ)
            if ours or adopted:
                found.append(Proc(pid, info[3], _command(pid)))
        return found

    def end_all(self) -> list[Proc]:
        """End every background process of these commands (TERM, a short wait, then sweep). For the whole
        process's Jobs (JOBS, at s08's exit) with adoption on, every child of s08 is ended; a sub-agent's
        ends what carries its tags and the untagged orphans adopted since its first command."""
        self.ended = not self.whole          # s08's own Jobs ends at its exit; a process that goes on (tests) may run more
        running = [p for p in set(self.known) | set(self.find(self.token + "-")) if alive(p)]
        for proc in running:
            try:
                os.kill(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + END_GRACE
        while any(alive(p) for p in running) and time.monotonic() < deadline:
            _reap_known(running)
            time.sleep(0.02)
        if _adopting and self.whole:
            swept = self._end_every_child()
        else:
            swept = self.sweep(self.token + "-", min(self.since.values(), default=sys.maxsize))
        ended = set(running) | set(swept)
        self.known.clear()
        return sorted(ended, key=lambda p: p.pid)


def _reap(pid: int) -> None:
    """Collect an adopted orphan's exit — never a command's or a hook's own bash, whose Popen reads its exit
    code (reaped here, Popen would see ECHILD and say 0: a hook's exit 2, which blocks a tool call, would
    pass)."""
    with _STARTING:
        if pid in _awaited:
            return
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def _reap_known(procs) -> None:
    """Collect the exit of adopted children among `procs` (so they do not linger as zombies)."""
    if not _adopting:
        return
    me = os.getpid()
    for proc in procs:
        info = _stat(proc.pid)
        if info and info[1] == me and info[0] == "Z":
            _reap(proc.pid)


JOBS = Jobs(whole=True)

"""Processes as /proc shows them, for the tests that bound what commands may start, whether one has
ended (gone, ended), and the pid a command writes to a file (written_pid)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def sleepers() -> list[int]:
    """Live `sleep 987` processes (the loops' own: no other test sleeps that long)."""
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if f.read() == b"sleep\x00987\x00":
                    with open(f"/proc/{name}/stat", "rb") as g:
                        if g.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X"):
                            found.append(int(name))
        except (OSError, IndexError):
            pass
    return found


def written_pid(path: Path, bound: float = 60.0) -> int:
    """The pid a running command writes with `echo $$ > path`, once the whole line is there: the shell
    creates the file before echo writes to it, so the file existing is not yet the pid written."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        try:
            text = path.read_text()
        except FileNotFoundError:
            text = ""
        if text.endswith("\n"):
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"no pid written to {path} within {bound:.0f} s")


def gone(pid: int) -> bool:
    """Dead (a zombie waiting for its reaper counts: it runs nothing)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def ended(pid: int, bound: float = 60.0) -> bool:
    """The kill was sent: wait for the kernel to finish it (a busy machine can take a while), up to `bound`."""
    deadline = time.monotonic() + bound
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return gone(pid)

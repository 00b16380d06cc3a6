"""Processes as /proc shows them, for the tests that bound what commands may start."""

from __future__ import annotations

import os


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

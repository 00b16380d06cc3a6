"""Project instructions: AGENTS.md (or CLAUDE.md when there is none) in the workspace root.

    AGENTS.md ──read at start, checked again before every turn──► the system prompt

In the system prompt no compaction layer ever touches them, and the prompt cache keeps them cheap:
the standing rules of a project ("never touch legacy/", "tabs in the Makefile") cannot be compacted
away. The file is the same one Codex, opencode (AGENTS.md) and Claude Code (CLAUDE.md) users already
keep. A missing file is fine; an unreadable one costs one line; a huge one is cut at MAX_CHARS with
one line saying so. Under a small window it is cut to WINDOW_SHARE of the window (about 1,400
characters at 4,096 tokens), its head kept and a pointer in its place: "shortened here … whole in
AGENTS.md" — the model reads the rest with read_file when it needs it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

FILE_NAMES = ("AGENTS.md", "CLAUDE.md")       # the first that exists is used
MAX_CHARS = 32_000                            # Codex caps its project docs at 32 KiB as well
WINDOW_SHARE = 0.1                            # and at most this share of the model's window
CHARS_PER_TOKEN = 3.5


def max_chars(window: int | None = None) -> int:
    """How much of the file goes into the system prompt for a model with this window (tokens)."""
    return MAX_CHARS if not window else min(MAX_CHARS, int(window * CHARS_PER_TOKEN * WINDOW_SHARE))


@dataclass(frozen=True)
class Instructions:
    path: Path | None = None      # the file used, if any
    text: str = ""                # what goes into the system prompt (capped)
    size: int = 0                 # bytes on disk
    warning: str = ""             # one line, when the file could not be used whole
    stamp: tuple = ()             # what `changed` compares

    def prompt_section(self) -> str:
        if not self.text.strip():
            return ""
        return (f"\n\n# Project instructions ({self.path.name} in the workspace root; the person's standing "
                f"rules for this project — follow them)\n{self.text.strip()}")


def _stamp(workspace: Path) -> tuple:
    for name in FILE_NAMES:
        try:
            link, st = os.lstat(workspace / name), os.stat(workspace / name)
        except OSError:
            continue
        return name, st.st_mtime_ns, st.st_size, st.st_ino, link.st_ino
    return ()


def _open(workspace: Path, path: Path) -> int:
    """An fd of the file, which must be a regular file inside the workspace (a link to a file in it,
    such as AGENTS.md → CLAUDE.md, is fine): a repository could ship AGENTS.md as a link to your key
    file, or as a FIFO that would hang s08 at start-up."""
    real = path.resolve()
    root = workspace.resolve()
    if real != root and root not in real.parents:
        raise OSError(0, "it is a link to a file outside the workspace")
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(0, "it is not a regular file")
    return fd


def load_instructions(workspace: Path, window: int | None = None) -> Instructions:
    """The file's text for the system prompt, within max_chars(window)."""
    cap = max_chars(window)
    stamp = _stamp(workspace)
    if not stamp:
        return Instructions()
    path = workspace / stamp[0]
    try:
        with os.fdopen(_open(workspace, path), "rb") as f:
            raw = f.read(MAX_CHARS * 4 + 4)
    except OSError as exc:
        return Instructions(path, "", stamp[2], f"cannot read {path.name} ({exc.strerror or exc}); going on "
                                               "without project instructions", stamp)
    text = raw.decode("utf-8", errors="replace")
    warning = ""
    if cap < MAX_CHARS and len(text) > cap:
        total = len(text)
        text = (text[:cap] + f"\n[… {path.name} is shortened here to fit the model's window: {total - cap:,} of "
                f"its {total:,} characters are left out; it is whole in {path.name} (read_file it) …]")
        warning = (f"{path.name} is {stamp[2]:,} bytes; its first {cap:,} characters fit a {window:,}-token window "
                   "as project instructions, the model reads the rest with read_file")
    elif len(text) > MAX_CHARS or stamp[2] > len(raw):
        text = text[:MAX_CHARS]
        warning = (f"{path.name} is {stamp[2]:,} bytes; only its first {MAX_CHARS:,} characters are used as "
                   "project instructions")
    return Instructions(path, text, stamp[2], warning, stamp)


def changed(current: Instructions, workspace: Path) -> bool:
    """Has the file (or which file is used) changed since `current` was loaded?"""
    return _stamp(workspace) != current.stamp

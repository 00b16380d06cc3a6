"""@path mentions: a file the person names with @ in a message is attached to it.

    mentioned(text)                         the paths a message mentions: `@src/app.py`, `@"a b.txt"`
    attach(text, workspace, budget, redact) -> Attached
        the files' contents as text blocks that follow the message, within `budget` characters for all
        of them (budget_for: a quarter of CONTEXT_LIMIT; a file that does not fit is sent as its head and
        tail, with its path and how to read the rest — the big-input rule of big_input.py); the paths
        attached; one line for each mention that was refused

A mention is confined like read_file (tools/workspace.py and tools/safe_fs.py: inside the workspace,
no link followed that leads out or appeared after the check), binary files are refused with a line, and
what is attached is redacted like every tool result (a key in `.env` shows as [redacted]). A word
after @ that names no file (`@decorator`, `user@host`) is left as text: only a mention that looks like
a path and names nothing is reported.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from compaction.markers import ATTACHED_OPEN
from storage import relative
from tools.safe_fs import open_file
from tools.workspace import ToolError, resolve_in_workspace

MENTION = re.compile(r'(?:(?<=\s)|^)@(?:"([^"\n]+)"|(\S+))')
TRAILING = ",.;:!?)]}'\""              # punctuation after a mention that is not part of the path
BINARY_SNIFF_BYTES = 8192
READ_MOST = 4 * 1024 * 1024            # bytes read of one file; the rest is only pointed at
MAX_SHARE = 0.25                       # of CONTEXT_LIMIT (in characters), for all mentions of a message
CHARS_PER_TOKEN = 3.5
MAX_MENTIONS = 20
MIN_PREVIEW = 200                      # characters of head (and of tail) below which only the path is sent


@dataclass
class Attached:
    blocks: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def budget_for(limit_tokens: int) -> int:
    """Characters all the files of one message may take: a quarter of the context that compaction keeps
    (CONTEXT_LIMIT, or less under a window the API stated), so a mention never sets off a compaction."""
    return int(limit_tokens * CHARS_PER_TOKEN * MAX_SHARE)


def mentioned(text: str) -> list[str]:
    out = []
    for quoted, bare in MENTION.findall(text):
        out.append(quoted or bare)
    return list(dict.fromkeys(out))


def _looks_like_path(word: str) -> bool:
    return "/" in word or "." in word


def _resolve(workspace: Path, word: str) -> tuple[Path | None, str, str]:
    """(the file `word` names, the name as written, why not): trailing punctuation is dropped when that
    is what makes it a file."""
    bare = word.rstrip(TRAILING)
    why = ""
    for candidate in dict.fromkeys([word, bare]):
        if not candidate:
            continue
        try:
            target = resolve_in_workspace(workspace, candidate)
        except ToolError as exc:
            why = why or str(exc)
            continue
        if target.exists():
            return target, candidate, ""
    return None, word, why


def attach(text: str, workspace: Path, budget: int, redact: Callable[[str], str] = lambda t: t) -> Attached:
    root = workspace.resolve()
    out = Attached()
    for word in mentioned(text)[:MAX_MENTIONS]:
        target, name, why = _resolve(root, word)
        if target is None:
            if _looks_like_path(word):
                out.refused.append(f"@{word}: not attached — {why}" if why else
                                   f"@{word}: no such file in the workspace; sent as text")
            continue
        shown = relative(root, target)
        if target.is_dir():
            out.refused.append(f"@{name}: {shown} is a folder; mention files inside it (Tab completes them)")
            continue
        if shown in out.paths:
            continue
        try:
            block = _read(root, target, shown, budget, redact)
        except (ToolError, OSError) as exc:
            out.refused.append(f"@{name}: not attached — {getattr(exc, 'strerror', None) or exc}")
            continue
        if block is None:
            out.refused.append(f"@{name}: {shown} is a binary file; not attached (only text is)")
            continue
        budget = max(0, budget - len(block))
        out.blocks.append(block)
        out.paths.append(shown)
    return out


def _read(root: Path, target: Path, shown: str, budget: int, redact) -> str | None:
    with os.fdopen(open_file(root, target), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        data = f.read(READ_MOST)
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None
    text = redact(data.decode("utf-8", errors="replace"))
    head = f'{ATTACHED_OPEN}path="{shown}" mentioned-by="user" size="{size:,} bytes">\n'
    tail = "\n</attached-file>"
    room = budget - len(head) - len(tail) - 400
    if size <= READ_MOST and len(text) <= room:
        return head + text.rstrip("\n") + tail
    half = room // 2
    read = f"read_file(path=\"{shown}\", offset=<first line>, limit=<lines>)"
    if half < MIN_PREVIEW:
        return head + (f"[No room is left for this file in the message ({size:,} bytes; the files mentioned "
                       f"before it took the budget). Read it with {read}.]") + tail
    note = (f"[The file is too large to attach whole ({size:,} bytes): its first and last {half:,} characters "
            f"are here. Read the rest with {read}.]")
    body = text[:half] + f"\n[… the middle of {shown} is left out …]\n" + text[-half:]
    return head + note + ("\n" + body if body else "") + tail

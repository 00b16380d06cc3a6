"""Reading the folders commands and skills live in, the safe way, and their frontmatter.

    markdown_files(root, parts, depth)   (relative parts, text) of the `*.md` files under root/parts…
    read_file_at(root, parts, limit)     one file's text, or None
    frontmatter(text) -> (fields, body)  the `---` block on top, as plain strings (nothing evaluated)

Every folder and file is opened relative to its parent without following a link (O_NOFOLLOW), so a
repository's `.claude` or `SKILL.md` that is a link (to ~/.ssh, to /dev/zero) is never read; only
regular files are read, each up to MAX_FILE bytes, at most MAX_FILES per folder tree. Names keep only
letters, digits and `_ . -`: a file name with control characters or escape sequences is skipped.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

MAX_FILE = 256 * 1024             # bytes read of one command or SKILL.md
MAX_FILES = 500                   # files looked at under one folder
MAX_FRONTMATTER = 8 * 1024        # characters of the --- block; a longer one is not frontmatter
MAX_FIELD = 1_000                 # characters kept of one field
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_dir(root: Path, parts) -> int | None:
    try:
        fd = os.open(root, FLAGS | os.O_DIRECTORY)
    except OSError:
        return None
    for part in parts:
        try:
            inner = os.open(part, FLAGS | os.O_DIRECTORY, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = inner
    return fd


def _read_at(dir_fd: int, name: str, limit: int) -> str | None:
    try:
        fd = os.open(name, FLAGS | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def read_file_at(root: Path, parts, limit: int = MAX_FILE) -> str | None:
    *folders, name = parts
    fd = _open_dir(root, folders)
    if fd is None:
        return None
    try:
        return _read_at(fd, name, limit)
    finally:
        os.close(fd)


def list_files(root: Path, parts, depth: int = 3, limit: int = MAX_FILES) -> list[tuple[str, ...]]:
    """Relative parts of the regular files (not links) under root/parts, breadth first, names checked."""
    found: list[tuple[str, ...]] = []
    todo: list[tuple[str, ...]] = [()]
    while todo and len(found) < limit:
        rel = todo.pop(0)
        fd = _open_dir(root, (*parts, *rel))
        if fd is None:
            continue
        try:
            entries = sorted(os.scandir(fd), key=lambda e: e.name)[:limit]
        except OSError:
            entries = []
        finally:
            os.close(fd)
        for entry in entries:
            if not NAME.fullmatch(entry.name):
                continue
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False) and len(rel) + 1 < depth:
                    todo.append((*rel, entry.name))
                elif entry.is_file(follow_symlinks=False):
                    found.append((*rel, entry.name))
            except OSError:
                continue
    return found[:limit]


def markdown_files(root: Path, parts, depth: int = 3) -> list[tuple[tuple[str, ...], str]]:
    out = []
    for rel in list_files(root, parts, depth):
        if rel[-1].endswith(".md"):
            text = read_file_at(root, (*parts, *rel))
            if text is not None:
                out.append((rel, text))
    return out


def frontmatter(text: str) -> tuple[dict[str, str], str]:
    """The `key: value` lines between a first line `---` and the next `---` (an indented line continues
    the value before it; quotes around a value are dropped; `[a, b]` stays text) and the rest."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0 or end > MAX_FRONTMATTER:
        return {}, text
    block, body = text[3:end], text[end + 4:]
    body = body.split("\n", 1)[1] if "\n" in body else ""
    fields: dict[str, str] = {}
    key = ""
    for line in block.splitlines():
        if key and line[:1] in (" ", "\t") and line.strip():
            fields[key] = (fields[key] + " " + line.strip()).strip()[:MAX_FIELD]
            continue
        name, sep, value = line.partition(":")
        if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,40}", name.strip()):
            key = ""
            continue
        key, value = name.strip(), value.strip()
        if value in (">", "|", ">-", "|-"):
            value = ""
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        fields[key] = value[:MAX_FIELD]
    return fields, body.lstrip("\n")


def plain(value: str, limit: int) -> str:
    """A one-line field for /help and the system prompt: no control characters or bidi overrides."""
    value = CONTROL.sub(" ", value).strip()
    return value if len(value) <= limit else value[:limit] + "…"

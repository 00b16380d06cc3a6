"""Every file s08 writes for itself goes through here: `.task_outputs/` and `.transcripts/`.

Names are made unique by creating the file exclusively (O_EXCL), so two
outputs with the same tool_use id, two transcripts in the same second, or two
sessions in one workspace never overwrite each other. Tests point the root
at a temp dir simply by using a temp workspace. Everything s08 creates for
itself is owner-only (files 0600, folders 0700): outputs and transcripts hold
what the person's commands printed.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from pathlib import Path

TASK_OUTPUTS_DIR = ".task_outputs/tool-results"
SESSIONS_DIR = ".sessions"
TRANSCRIPTS_DIR = ".transcripts"
SNIPPED, SUMMARIZED = "snipped", "transcript"     # transcript kinds: .transcripts/<kind>_<time>_<id>.jsonl
PERSISTED_OPEN, PERSISTED_CLOSE = "<persisted-output>", "</persisted-output>"   # an output moved to disk
SAVED_TO = "Full output saved to: "        # then its path, in a persisted block (micro_compact and ui/ read it)
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_stem(text: str, max_len: int = 64) -> str:
    """A file-name-safe version of an id; never empty."""
    return _SAFE.sub("_", text).strip("._")[:max_len] or "output"


FILE_MODE, FOLDER_MODE = 0o600, 0o700


def make_private_folders(folder: Path) -> None:
    """mkdir -p, each folder it creates owner-only (pathlib's parents=True ignores the mode)."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            pass


def private_file(path: Path) -> Path:
    """Make sure `path` exists, created owner-only (with its folders) if it did not."""
    make_private_folders(path.parent)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE))
    return path


def ensure_folder(folder: Path) -> Path:
    """Create one of s08's folders, with a .gitignore so a `git add -A` never commits its contents."""
    make_private_folders(folder)
    folder.mkdir(mode=FOLDER_MODE, exist_ok=True)      # raises if something else is in the way
    ignore = folder / ".gitignore"
    if not ignore.exists():
        try:
            with os.fdopen(os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE), "w") as f:
                f.write("# written by s08: outputs, transcripts and sessions stay out of git\n*\n")
        except OSError:
            pass
    return folder


def create_unique(folder: Path, stem: str, suffix: str) -> tuple[Path, int]:
    """Create and open a new file `<stem><suffix>` (or `<stem>-2…`) exclusively; return (path, fd)."""
    ensure_folder(folder)
    for n in range(1, 10_000):
        name = f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}"
        if n > 50:
            name = f"{stem}-{secrets.token_hex(4)}{suffix}"
        path = folder / name
        try:
            return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            continue
    raise OSError(f"could not create a unique file for {stem!r} in {folder}")


def write_new_text(folder: Path, stem: str, suffix: str, text: str) -> Path:
    """Write text to a brand-new file; never overwrites. Returns the path."""
    path, fd = create_unique(folder, safe_stem(stem), suffix)
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
        f.write(text)
    return path


def write_transcript(workspace: Path, messages: list[dict]) -> Path:
    """Save a history as JSONL (one API-shaped message per line), atomically, never overwriting."""
    final = reserve_transcript(workspace, SUMMARIZED)
    tmp = final.parent / f".{final.name}.tmp"    # fill it via rename: a reader never sees half a file
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE), "w", encoding="utf-8",
                   errors="replace") as f:
        f.write("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    return final


def reserve_transcript(workspace: Path, kind: str) -> Path:
    """Create a new, empty, uniquely named `.transcripts/<kind>_<time>_<id>.jsonl` and return it."""
    path, fd = create_unique(workspace / TRANSCRIPTS_DIR, f"{kind}_{time.strftime('%Y%m%d_%H%M%S')}_"
                             f"{secrets.token_hex(3)}", ".jsonl")
    os.close(fd)
    return path


def append_transcript(workspace: Path, messages: list[dict], path: Path | None = None) -> Path:
    """Append messages (JSONL, one per line) to `path`, or to a new unique transcript."""
    path = path or reserve_transcript(workspace, SNIPPED)
    with open(path, "a", encoding="utf-8", errors="replace") as f:
        f.write("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages))
        f.flush()
        os.fsync(f.fileno())
    return path


def relative(workspace: Path, path: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def persisted_block(shown_path: str, total_chars: int, total_lines: int, head: str, tail: str,
                    note: str = "") -> str:
    """The `<persisted-output>` text that replaces an output too large for the context."""
    omitted = max(0, total_chars - len(head) - len(tail))
    parts = [
        PERSISTED_OPEN,
        f"Output too large for the context ({total_chars:,} chars, {total_lines:,} lines). "
        f"{SAVED_TO}{shown_path}",
        f"Read more with read_file(path=\"{shown_path}\", offset=<first line>, limit=<lines>) "
        "(for very long lines use bash: head -c / cut -c).",
    ]
    if note:
        parts.append(note)
    parts += ["", f"Preview (first {len(head):,} chars):", head.rstrip("\n")]
    if tail:
        parts += [f"... [{omitted:,} chars omitted] ...", f"Preview (last {len(tail):,} chars):",
                  tail.rstrip("\n")]
    parts.append(PERSISTED_CLOSE)
    return "\n".join(parts)

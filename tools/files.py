"""File tools: read_file (in pieces, text only), write_file (atomic), edit_file (unique match).

Reading streams the file line by line with a cap per line and per call, so a
huge file or a file with no newlines never has to fit in memory. Writes go to
a temporary file in the same folder and are renamed into place, so a crash
never leaves a half-written file. Every file is opened through safe_fs.py
(no link followed that appeared after the path was checked); s08's settings
files and .sessions/ are refused to write_file and edit_file. read_file may
read .env: what it returns is redacted like every tool result.
"""

from __future__ import annotations

import os
from pathlib import Path

from .registry import tool
from .safe_fs import check_replaceable, open_file, replace_file
from .workspace import ToolError, display_path, refuse_s08_files, resolve_in_workspace

READ_DEFAULT_LINES = 2000      # lines returned when no limit is given
READ_MAX_CHARS = 25_000        # per call; stays under the persist threshold so reads are never persisted
MAX_LINE_CHARS = 4_000         # a longer line is cut, with a marker
BINARY_SNIFF_BYTES = 8192
EDIT_MAX_BYTES = 10 * 1024 * 1024


def _looks_binary(f) -> bool:
    sniff = f.read(BINARY_SNIFF_BYTES)
    f.seek(0)
    return b"\x00" in sniff


def _checked_file(ctx, path: str) -> tuple[Path, str]:
    target = resolve_in_workspace(ctx.workspace, path)
    shown = display_path(ctx.workspace, target)
    if not target.exists():
        raise ToolError(f"{shown}: no such file")
    if target.is_dir():
        raise ToolError(f"{shown} is a directory; use bash (ls) to list it")
    if not target.is_file():
        raise ToolError(f"{shown} is not a regular file")
    return target, shown


def _read_line(f, limit_bytes: int) -> tuple[bytes, bool]:
    """One line, at most limit_bytes of it; the rest of an over-long line is skipped."""
    line = f.readline(limit_bytes)
    if len(line) < limit_bytes or line.endswith(b"\n"):
        return line, False
    while True:  # discard the remainder without holding it
        rest = f.readline(1 << 16)
        if not rest or rest.endswith(b"\n"):
            return line + (b"\n" if rest else b""), True


@tool("read_file",
      "Read a text file in the workspace. Large files are returned in pieces: pass offset "
      "(1-based line number) and limit (number of lines) to read more. Binary files are refused.",
      {"path": {"type": "string", "description": "file path, relative to the workspace"},
       "offset": {"type": "integer", "description": "first line to return (1-based)", "minimum": 1},
       "limit": {"type": "integer", "description": f"number of lines (default {READ_DEFAULT_LINES})",
                 "minimum": 1}},
      required=["path"])
def read_file(ctx, path: str, offset: int = 1, limit: int = READ_DEFAULT_LINES) -> str:
    target, shown = _checked_file(ctx, path)
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be at least 1")
    out: list[str] = []
    chars, lineno = 0, 0
    cut_lines, bad_utf8, stopped_at = 0, False, None
    with os.fdopen(open_file(ctx.workspace.resolve(), target), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if _looks_binary(f):
            raise ToolError(f"{shown} is a binary file ({size:,} bytes); read_file only reads text. "
                            "Inspect it with bash instead (e.g. `file`, `xxd | head`).")
        while True:
            raw, cut = _read_line(f, MAX_LINE_CHARS * 4)
            if not raw:
                break
            lineno += 1
            if lineno < offset:
                continue
            if lineno >= offset + limit:
                stopped_at = lineno
                break
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text, bad_utf8 = raw.decode("utf-8", errors="replace"), True
            text = ctx.redact(text)          # before cutting, so no part of a key is left
            if len(text) > MAX_LINE_CHARS or cut:
                text = text[:MAX_LINE_CHARS].rstrip("\n") + f" [... line {lineno} cut at {MAX_LINE_CHARS} chars]\n"
                cut_lines += 1
            if out and chars + len(text) > READ_MAX_CHARS:
                stopped_at = lineno
                break
            out.append(text)
            chars += len(text)
    if lineno < offset and not out:
        if lineno == 0:
            return f"({shown} is empty)"
        raise ToolError(f"{shown} has only {lineno} lines; offset {offset} is past the end")
    body = "".join(out)
    notes = []
    if stopped_at is not None:
        notes.append(f"showing lines {offset}-{stopped_at - 1} of {shown} ({size:,} bytes); more follows — "
                     f"call read_file with offset={stopped_at} to continue")
    elif offset > 1:
        notes.append(f"showing lines {offset}-{lineno} of {shown} (end of file)")
    if cut_lines:
        notes.append(f"{cut_lines} over-long line(s) were cut")
    if bad_utf8:
        notes.append("the file is not valid UTF-8; undecodable bytes are shown as \ufffd")
    if notes:
        body = body + ("" if body.endswith("\n") else "\n") + "".join(f"[{n}]\n" for n in notes)
    return body


def _holds_a_key_the_content_lacks(ctx, target: Path, content: str) -> bool:
    """The model sees a key as [redacted]; writing back what it read would destroy the real one."""
    if not ctx.secrets or not target.is_file():
        return False
    try:
        with os.fdopen(open_file(ctx.workspace.resolve(), target), "rb") as f:
            old = f.read(EDIT_MAX_BYTES).decode("utf-8", "replace")
    except (OSError, ToolError):
        return False
    return any(key in old and key not in content for key in ctx.secrets)


@tool("write_file",
      "Create or overwrite a text file in the workspace with the given content. Parent folders are created.",
      {"path": {"type": "string", "description": "file path, relative to the workspace"},
       "content": {"type": "string", "description": "the complete new content of the file"}},
      required=["path", "content"])
def write_file(ctx, path: str, content: str) -> str:
    target = resolve_in_workspace(ctx.workspace, path)
    shown = display_path(ctx.workspace, target)
    refuse_s08_files(ctx.workspace, target, ctx.settings_files)
    if target.is_dir():
        raise ToolError(f"{shown} is a directory")
    if _holds_a_key_the_content_lacks(ctx, target, content):
        raise ToolError(f"{shown} contains the API key (shown to you as [redacted]); writing it whole would "
                        "replace the key — change the other parts with edit_file instead")
    data = content.encode("utf-8", errors="replace")
    existed = replace_file(ctx.workspace.resolve(), target, data)
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return f"{'Overwrote' if existed else 'Created'} {shown} ({len(data):,} bytes, {lines} line{'s' * (lines != 1)})"


@tool("edit_file",
      "Replace one exact occurrence of old_text with new_text in a file. old_text must match the file "
      "exactly (whitespace included) and occur exactly once; include surrounding lines to make it unique.",
      {"path": {"type": "string", "description": "file path, relative to the workspace"},
       "old_text": {"type": "string", "description": "exact text to replace; must occur exactly once"},
       "new_text": {"type": "string", "description": "replacement text"}},
      required=["path", "old_text", "new_text"])
def edit_file(ctx, path: str, old_text: str, new_text: str) -> str:
    target, shown = _checked_file(ctx, path)
    refuse_s08_files(ctx.workspace, target, ctx.settings_files)
    if old_text == "":
        raise ToolError("old_text is empty; to create or replace a whole file use write_file")
    if old_text == new_text:
        raise ToolError("old_text and new_text are identical; nothing to change")
    with os.fdopen(open_file(ctx.workspace.resolve(), target), "rb") as f:
        st = os.fstat(f.fileno())
        check_replaceable(ctx.workspace.resolve(), target, st)
        if st.st_size > EDIT_MAX_BYTES:
            raise ToolError(f"{shown} is too large to edit here ({st.st_size:,} bytes); use bash (sed)")
        raw = f.read(EDIT_MAX_BYTES + 1)
    if b"\x00" in raw[:BINARY_SNIFF_BYTES]:
        raise ToolError(f"{shown} is a binary file; edit_file only edits text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not valid UTF-8; editing it here could corrupt it — use bash") from None
    count = text.count(old_text)
    if count == 0 and "\r\n" in text and "\r\n" not in old_text:
        old_text, new_text = old_text.replace("\n", "\r\n"), new_text.replace("\n", "\r\n")
        count = text.count(old_text)
    if count == 0:
        raise ToolError(f"old_text was not found in {shown} (found 0 times). Check whitespace and "
                        "indentation, or read the file again — it may have changed.")
    if count > 1:
        raise ToolError(f"old_text was found {count} times in {shown}; it must occur exactly once. "
                        "Include more surrounding lines to make it unique.")
    at = text.index(old_text)
    replace_file(ctx.workspace.resolve(), target, text.replace(old_text, new_text, 1).encode("utf-8"),
                 expect_inode=st.st_ino)
    first = text.count("\n", 0, at) + 1
    before, after = old_text.count("\n") + 1, new_text.count("\n") + 1
    return f"Edited {shown}: replaced 1 occurrence at line {first} ({before} line{'s' * (before != 1)} → " \
           f"{after} line{'s' * (after != 1)})"

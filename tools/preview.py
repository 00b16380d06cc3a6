"""What a write_file or edit_file call would change, worked out before it runs (for approval and diffs).

`planned_change(ctx, name, args)` returns a FileChange (the path as shown, the text before — None for
a new file — and the text after) or None when there is nothing to show: another tool, a call the tool
itself will refuse, a binary or very large file. `target_path(ctx, name, args)` is where the call's
path resolves (links followed), for the approval rule about files that configure commands. Both only
read; the tool does the writing and its own checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage import relative
from .workspace import ToolError, resolve_in_workspace

MAX_PREVIEW_BYTES = 1024 * 1024


@dataclass
class FileChange:
    path: str
    before: str | None             # None: the file does not exist yet
    after: str


def _current_text(target) -> str | None:
    if not target.is_file():
        return None
    if target.stat().st_size > MAX_PREVIEW_BYTES:
        raise ValueError("too large to preview")
    raw = target.read_bytes()
    if b"\x00" in raw[:8192]:
        raise ValueError("binary")
    return raw.decode("utf-8", errors="replace")


def target_path(ctx, name: str, args) -> str:
    """Where a write_file or edit_file call's path resolves in the workspace (links followed), or ""."""
    if name not in ("write_file", "edit_file") or not isinstance(args, dict):
        return ""
    try:
        return relative(ctx.workspace, resolve_in_workspace(ctx.workspace, args.get("path")))
    except (ToolError, OSError, ValueError):
        return ""


def planned_change(ctx, name: str, args) -> FileChange | None:
    if name not in ("write_file", "edit_file") or not isinstance(args, dict):
        return None
    try:
        target = resolve_in_workspace(ctx.workspace, args.get("path"))
        before = _current_text(target)
        shown = relative(ctx.workspace, target)
    except (ToolError, OSError, ValueError):
        return None
    if name == "write_file":
        content = args.get("content")
        return FileChange(shown, before, content) if isinstance(content, str) else None
    old, new = args.get("old_text"), args.get("new_text")
    if before is None or not isinstance(old, str) or not isinstance(new, str) or not old:
        return None
    if before.count(old) != 1 and "\r\n" in before and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")     # as edit_file does
    if before.count(old) != 1:
        return None
    return FileChange(shown, before, before.replace(old, new, 1))

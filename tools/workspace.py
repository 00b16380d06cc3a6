"""Workspace confinement: every file path a tool touches must resolve inside it.

Paths are resolved with symlinks followed, so `..`, absolute paths elsewhere
and links that lead out are all refused the same way. (safe_fs.py then opens
the resolved path without following links, so a link swapped in after this
check is not followed either.) s08's own files are refused to the writing
tools: its settings files (they hold the key and the endpoint) and `.sessions/`.
"""

from __future__ import annotations

import os
from pathlib import Path

from config import user_settings_file
from storage import SESSIONS_DIR


class ToolError(Exception):
    """A tool refused or failed; the message is shown to the model as an is_error result."""


def resolve_in_workspace(workspace: Path, path: object) -> Path:
    """Return the real path of `path` (relative to the workspace or absolute) if it is inside."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path must be a non-empty string")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    root = workspace.resolve()
    try:
        candidate = Path(path).expanduser() if path.startswith("~") else Path(path)
    except RuntimeError:                  # ~someone who does not exist
        raise ToolError(f"{path}: no such home directory; give a path inside the workspace") from None
    target = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if target != root and root not in target.parents:
        raise ToolError(f"{path}: outside the workspace ({root}); only files inside it can be used")
    return target


def display_path(workspace: Path, target: Path) -> str:
    """The path as the model should write it: relative to the workspace."""
    try:
        return str(target.relative_to(workspace.resolve())) or "."
    except ValueError:
        return str(target)


def refuse_s08_files(workspace: Path, target: Path, settings_files=()) -> None:
    """Raise if `target` (a resolved path) is one of s08's settings files or inside .sessions/."""
    root = workspace.resolve()
    shown = display_path(workspace, target)
    if target.is_relative_to(root / SESSIONS_DIR):
        raise ToolError(f"{shown}: {SESSIONS_DIR}/ holds s08's session logs; file tools do not write there")
    candidates = [root / ".env", *map(Path, settings_files), user_settings_file(os.environ)]
    protected = {p for c in candidates for p in (c, c.resolve())}
    if target in protected:
        raise ToolError(f"{shown} is s08's own settings file (key, endpoint, model); file tools do not change "
                        "it — the person edits it themselves")

"""Workspace confinement: every file path a tool touches must resolve inside it.

Paths are resolved with symlinks followed, so `..`, absolute paths elsewhere
and links that lead out are all refused the same way.
"""

from __future__ import annotations

from pathlib import Path


class ToolError(Exception):
    """A tool refused or failed; the message is shown to the model as an is_error result."""


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """Return the real path of `path` (relative to the workspace or absolute) if it is inside."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path must be a non-empty string")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    root = workspace.resolve()
    candidate = Path(path).expanduser() if path.startswith("~") else Path(path)
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

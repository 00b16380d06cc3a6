"""s08's version and the command people type to start it: one place for --version and for hints
such as "resume it with: s08 -c"."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

__version__ = "0.8.0"


def _shown(path: str) -> str:
    """A path as the person would type it from here: relative when it is below the current folder."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return relative if not relative.startswith("..") else path


def program_name(argv0: str | None = None, executable: str | None = None, exact: bool = False) -> str:
    """`s08` when started through the installed command; else `python agent.py` (for --help), or with
    `exact` the interpreter and script as they were used (`.venv/bin/python agent.py`), so that a hint
    to run it again works as written."""
    script = argv0 if argv0 is not None else (sys.argv[0] if sys.argv else "agent.py")
    if Path(script).name == "s08":
        return "s08"
    if not exact:
        return "python agent.py"
    python = executable if executable is not None else (sys.executable or "python3")
    return f"{shlex.quote(_shown(python))} {shlex.quote(script or 'agent.py')}"

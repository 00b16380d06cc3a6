"""s08's version and the command people type to start it: one place for --version and for hints
such as "resume with: s08 -c"."""

from __future__ import annotations

import sys
from pathlib import Path

__version__ = "0.8.0"


def program_name(argv0: str | None = None) -> str:
    """`s08` when started through the installed command, else `python agent.py`."""
    name = Path(argv0 if argv0 is not None else (sys.argv[0] if sys.argv else "")).name
    return "s08" if name == "s08" else "python agent.py"

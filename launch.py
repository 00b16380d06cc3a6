"""The installed `s08` command (pyproject.toml: `s08 = "s08.launch:main"`).

`pipx install .` puts this repository's modules in one folder, `s08/`, in
site-packages — nothing else at the top level, so names like `config` or
`tools` never collide with other packages. The modules import each other by
their plain names (`from config import …`), as they do when run from the
clone, so this launcher puts that folder first on `sys.path` of the s08
process only, guards the key (access/keyguard.py may re-exec the process: before the
heavy imports, not after), then runs cli.py's main in the current folder.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> None:
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from access.keyguard import keep_key_from_children
    keep_key_from_children()
    from cli import main as cli_main
    try:
        sys.exit(cli_main(prog="s08"))
    except KeyboardInterrupt:
        sys.exit(130)

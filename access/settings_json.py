"""The JSON settings files people keep from Claude Code, read as they are.

    ~/.config/s08/settings.json    the person's own ($XDG_CONFIG_HOME/s08/ when that is set)
    .s08/settings.json             the project's: whatever the repository ships, not the person's

Claude Code's schema is kept: `{"permissions": {"allow": [...]}, "hooks": {EVENT: [...]}, ...}`. This
module only finds and reads the files; what each key means is decided by its reader (the approvals read
`permissions` from the person's file only; hooks read `hooks` from both, a project's only after the
person agreed). A file that is missing is `{}`; one that is a link, not a regular file, too big or not
a JSON object is `{}` with one line saying why (`problem`), never an exception.

    user_file(environ)        the person's settings.json
    project_file(workspace)   the project's settings.json
    read(path)                Loaded(data, problem)
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from config import user_settings_file

NAME = "settings.json"
PROJECT_FOLDER = ".s08"
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Loaded:
    data: dict = field(default_factory=dict)
    problem: str | None = None          # one line a person can act on, or None


def user_file(environ: Mapping[str, str] | None = None) -> Path:
    return user_settings_file(environ).with_name(NAME)


def project_file(workspace: Path) -> Path:
    return Path(workspace) / PROJECT_FOLDER / NAME


def _finite(text: str):
    raise ValueError(f"{text} is not a number JSON allows")


def read(path: Path) -> Loaded:
    """The object in `path`. Opened without following a link and only if it is a regular file (a FIFO
    or a device shipped in its place never blocks or floods), read up to MAX_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Loaded()
    except OSError as e:
        return Loaded(problem=f"{path}: not read ({e.strerror or e}); it is ignored")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Loaded(problem=f"{path}: not a regular file; it is ignored")
        if info.st_size > MAX_BYTES:
            return Loaded(problem=f"{path}: larger than {MAX_BYTES:,} bytes; it is ignored")
        raw = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_finite)
    except (UnicodeDecodeError, ValueError) as e:
        return Loaded(problem=f"{path}: not valid JSON ({str(e)[:120]}); it is ignored")
    if not isinstance(data, dict):
        return Loaded(problem=f"{path}: not a JSON object; it is ignored")
    return Loaded(data)

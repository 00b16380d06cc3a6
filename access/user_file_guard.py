"""The user-level settings file is s08's own: a change made behind s08's back is used only with consent.

`~/.config/s08/.env` holds the key (/login writes it) and is read by every session in every folder.
A command that appends `ANTHROPIC_BASE_URL=…` or `APPROVAL_MODE=yolo` to it would send the person's
next session — key, history and all — to another server, in yolo mode, with no question. So s08
keeps a digest of the GUARDED settings in that file as s08 last wrote them (/login, /logout, the
first run) or as the person last agreed to them, in `user-settings-digest` beside the
trusted-endpoints record (0600, like it). At start a guarded setting whose value differs from its
digest is not used: access/model_access.py asks about it in the REPL (yes records the new digest), and -p and
piped input, which cannot ask, use the settings without it and say so in one line.

    changed(user_file)             NAME → value of the guarded settings that differ from the record
    safe_values(user_file, names)  NAME → the value to use instead until agreed: the file's last earlier
                                   line whose value matches the record (an appended line cannot displace
                                   the person's own), or None: not set
    record(user_file, names=None)  record the file's guarded values as they are now (only `names`)
    question(user_file, found) / refused(user_file, found)   the REPL's question, -p's line

With no record yet (s08's first start after this check arrived, or a file written by hand before
s08 ever ran) the file as it is becomes the record. A record that is unreadable, not the person's
own, or writable by others counts as empty: every guarded setting in the file asks.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import json_text
from dotenv import dotenv_values
from dotenv.parser import parse_stream

from access.pins import shown
from redact import SECRET_SETTINGS
from storage import read_settings_text, write_private

GUARDED = ("ANTHROPIC_BASE_URL", *SECRET_SETTINGS, "APPROVAL_MODE", "ALLOW_COMMANDS")
DIGEST_NAME = "user-settings-digest"
MAX_RECORD_BYTES = 100_000
MEANING = {"ANTHROPIC_BASE_URL": "where every request goes, with the key and the whole conversation",
           "ANTHROPIC_API_KEY": "the key sent with every request", "ANTHROPIC_AUTH_TOKEN": "the token sent with "
           "every request", "APPROVAL_MODE": "what runs without asking you",
           "ALLOW_COMMANDS": "commands that start with these run without asking"}


def digest_file(user_file: Path) -> Path:
    return user_file.with_name(DIGEST_NAME)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _values(user_file: Path) -> dict[str, str]:
    try:
        values = dotenv_values(user_file, interpolate=False)
    except OSError:
        return {}
    return {name: str(values[name]).strip() for name in GUARDED if (values.get(name) or "").strip()}


def _recorded(user_file: Path) -> dict[str, str] | None:
    """NAME → digest as recorded; None when there is no record at all; {} for one that cannot be trusted."""
    path = digest_file(user_file)
    try:
        st = path.stat()
    except OSError:
        return None
    try:
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return {}
        data = json.loads(read_settings_text(path)[:MAX_RECORD_BYTES])
        found = data.get("settings") if isinstance(data, dict) else None
        return {k: v for k, v in found.items() if k in GUARDED and isinstance(v, str)} if isinstance(found, dict) \
            else {}
    except (OSError, ValueError):
        return {}


def record(user_file: Path, names=None) -> None:
    """Record the guarded values the file holds now: all of them, or only `names` (the others keep
    what was recorded, so a change nobody agreed to still asks after /login rewrites the file)."""
    now = {name: _digest(value) for name, value in _values(user_file).items()}
    kept = _recorded(user_file)
    if names is None or kept is None:           # no record yet: the file as it is becomes it
        settings = now
    else:
        settings = {n: d for n, d in kept.items() if n not in names} | {n: now[n] for n in names if n in now}
    write_private(digest_file(user_file), json_text.dumps({"settings": dict(sorted(settings.items()))}) + "\n")


def changed(user_file: Path) -> dict[str, str]:
    """The guarded settings whose value in the file is not the one s08 recorded (NAME → value; a
    removed setting is not a change). Without any record, the file as it is becomes the record."""
    if not user_file.is_file():
        return {}
    recorded = _recorded(user_file)
    values = _values(user_file)
    if recorded is None:
        try:
            record(user_file)
        except OSError:
            pass
        return {}
    return {name: value for name, value in values.items() if recorded.get(name) != _digest(value)}


def safe_values(user_file: Path, names) -> dict[str, str | None]:
    recorded = _recorded(user_file) or {}
    safe: dict[str, str | None] = dict.fromkeys(names)
    try:
        bindings = list(parse_stream(io.StringIO(read_settings_text(user_file))))
    except OSError:
        return safe
    for binding in bindings:
        value = (binding.value or "").strip()
        if binding.key in safe and value and recorded.get(binding.key) == _digest(value):
            safe[binding.key] = value
    return safe


def _line(name: str, value: str) -> str:
    if name in SECRET_SETTINGS:
        return f"  {name}   (a new value, not shown: {MEANING[name]})"
    return f"  {name}={shown(value, 200)}   ({MEANING[name]})"


def question(user_file: Path, found: dict[str, str]) -> str:
    return "\n".join([f"Your user-level settings file changed since s08 last wrote it ({user_file}):",
                      *(_line(name, value) for name, value in found.items()),
                      "s08 writes that file only at /login, /logout and the first run; a command run in an earlier "
                      "session (or a model talked into running one) could have made this change.",
                      "Use " + ("this value" if len(found) == 1 else "these values") + "? Yes is remembered; no "
                      "uses s08 without them for this session (and asks again next time)."])


def refused(user_file: Path, found: dict[str, str]) -> str:
    """The one line -p and piped input show instead of asking."""
    return (f"s08: ignoring {', '.join(found)} from {user_file}: changed since s08 last wrote it, and used only "
            "once you agree; run s08 once in a terminal to answer (or set them in the environment)")

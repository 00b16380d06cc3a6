"""The user-level settings file, where /login keeps the key: `~/.config/s08/.env`.

(`$XDG_CONFIG_HOME/s08/.env` when that is set; config.user_settings_file
finds it.) The folder is created 0700 and the file 0600, and every change is
written to a new file that replaces the old one in one rename, so the file is
never half-written and never readable by others, not even for a moment.

    store_key(path, key)       ANTHROPIC_API_KEY='<key>', other lines kept
    remove_keys(path)          /logout: the key and token lines go, the rest stays
    key_problem(key)           why a pasted text cannot be a key (None when it can)
    stored_key(path)           the key /login stored there ("" when none)
    mark_first_run_done(path)  the first-run question was answered: the file exists from now on

After each write, the digest of what s08 wrote is recorded beside the file (access/user_file_guard.py): a
change made behind s08's back is then used only with the person's consent.

Next to it, `trusted-endpoints` (same folder, also 0600) holds what the person agreed to use from a
workspace's `.env` (access/folder_trust.py asks): the endpoint it names, and settings that relax approvals or
move files outside the workspace. One JSON line per folder, {"folder": …, "url": …, "settings": {…}}.
It is a file of its own, not lines in `.env`, because everything in `.env` is a setting (the Settings
table) that any settings layer could supply — a consent must come only from here.

    consent_file(path)                       the trusted-endpoints file next to the user-level file
    agreed_values(path, folder)              NAME → value the person agreed to for `folder`
    remember_values(path, folder, values)    record them (a name keeps only its newest value)
    endpoint_agreed / remember_endpoint      the same for ANTHROPIC_BASE_URL alone

The same file remembers what s08 learned to adapt for an endpoint (whoever named it), one JSON line
per endpoint URL, {"endpoint": …, "adapt": [...]}: today "plain_system", an endpoint that refuses the
system prompt as blocks or cache_control (loop.py learns it), so the next session does not pay the
error again. It lives here because this file is the person's record about endpoints, out of the
model's reach (write_file and edit_file refuse it).

    endpoint_adaptations(path, url)          what was learned for `url` (a set of names)
    remember_adaptation(path, url, name)     record one
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from dotenv import dotenv_values

from access import user_file_guard
from redact import SECRET_SETTINGS, redact_url
from storage import write_private

KEY_NAME = "ANTHROPIC_API_KEY"
URL_NAME = "ANTHROPIC_BASE_URL"
HEADER = ("# s08 user-level settings (see .env.example in the s08 repository for every setting).\n"
          "# The environment and a workspace's .env take precedence over this file. /login stores your key\n"
          "# here and /logout removes it.\n")
KEY_CHARS = re.compile(r"[!-~]+")           # printable ASCII, no spaces
NOT_IN_KEY = set("'\\\"")                   # would break the quoting in the file
MIN_KEY, MAX_KEY = 8, 1000
CONSENT_NAME = "trusted-endpoints"
CONSENT_HEADER = ("# s08: what you agreed to use from a folder's .env (its endpoint, settings that relax approvals),\n"
                  "# and what s08 adapts for an endpoint. One JSON line each; delete a line (or the file) to be "
                  "asked again.\n")
MAX_CONSENT_BYTES = 1_000_000


def key_problem(key: str) -> str | None:
    """Why `key` cannot be stored as a key, in a few words (never repeating the key), or None."""
    if not key:
        return "it is empty"
    if not KEY_CHARS.fullmatch(key) or NOT_IN_KEY & set(key):
        return "it contains spaces, quotes, backslashes or characters that are not printable ASCII"
    if not MIN_KEY <= len(key) <= MAX_KEY:
        return f"it is {len(key)} characters long (a key has {MIN_KEY} to {MAX_KEY})"
    return None


def _setting_name(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith("export "):
        stripped = stripped[len("export "):].lstrip()
    return stripped.split("=", 1)[0].strip() if "=" in stripped and not stripped.startswith("#") else ""


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    except FileNotFoundError:
        return []




def store_key(path: Path, key: str) -> Path:
    """Put ANTHROPIC_API_KEY=<key> in the user-level file (replacing an earlier one); returns the path."""
    problem = key_problem(key)
    if problem:
        raise ValueError(f"not stored: {problem}")
    kept = [line for line in _lines(path) if _setting_name(line) != KEY_NAME]
    if kept and not kept[-1].endswith("\n"):
        kept[-1] += "\n"
    # single quotes, and s08 reads its files with interpolation off: the key is taken literally
    write_private(path, ("".join(kept) or HEADER) + f"{KEY_NAME}='{key}'\n")
    user_file_guard.record(path, (KEY_NAME,))
    return path


def remove_keys(path: Path) -> bool:
    """Remove the key and token lines (the file stays, so the first-run question is not asked again).
    True if there was one."""
    lines = _lines(path)
    kept = [line for line in lines if _setting_name(line) not in SECRET_SETTINGS]
    if len(kept) == len(lines):
        return False
    write_private(path, "".join(kept) or HEADER)
    user_file_guard.record(path, SECRET_SETTINGS)
    return True


def stored_key(path: Path) -> str:
    try:
        return dotenv_values(path, interpolate=False).get(KEY_NAME) or ""
    except OSError:
        return ""


def mark_first_run_done(path: Path) -> None:
    """Create the user-level file (comments only) so the first-run question is not asked again."""
    if not path.exists():
        write_private(path, HEADER)
        user_file_guard.record(path)


def consent_file(user_file: Path) -> Path:
    return user_file.with_name(CONSENT_NAME)


def _consents(user_file: Path) -> list[dict]:
    """The recorded folders, each {"folder": …, "values": {NAME: value}}; none from a file that someone
    else could have written."""
    path = consent_file(user_file)
    try:
        st = path.stat()
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return []
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(MAX_CONSENT_BYTES).splitlines()
    except OSError:
        return []
    entries = []
    for line in lines:
        try:
            entry = json.loads(line) if line.strip() and not line.startswith("#") else None
        except ValueError:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("folder"), str):
            continue
        settings = entry["settings"] if isinstance(entry.get("settings"), dict) else {}
        values = {k: v for k, v in settings.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(entry.get("url"), str):
            values[URL_NAME] = entry["url"]
        entries.append({"folder": entry["folder"], "values": values})
    return entries


def agreed_values(user_file: Path, folder: Path) -> dict[str, str]:
    """What the person agreed to use from `folder`'s .env: NAME → value."""
    found = [e["values"] for e in _consents(user_file) if e["folder"] == str(folder)]
    return found[-1] if found else {}


def remember_values(user_file: Path, folder: Path, values: dict[str, str]) -> Path:
    """Record that the person agreed to `values` for `folder`. A name keeps only its newest value, so
    going back to an earlier one asks again. Returns the file's path."""
    entries = _consents(user_file)
    merged = {**agreed_values(user_file, folder), **values}
    kept = [e for e in entries if e["folder"] != str(folder)] + [{"folder": str(folder), "values": merged}]
    return _write_consents(user_file, kept, _adapt_lines(user_file))


def _adapt_lines(user_file: Path) -> dict[str, list[str]]:
    """URL → adaptations, from the consent file (none from a file someone else could have written)."""
    path = consent_file(user_file)
    found: dict[str, list[str]] = {}
    try:
        st = path.stat()
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return found
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(MAX_CONSENT_BYTES).splitlines()
    except OSError:
        return found
    for line in lines:
        try:
            entry = json.loads(line) if line.strip() and not line.startswith("#") else None
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("endpoint"), str) and isinstance(entry.get("adapt"), list):
            found[entry["endpoint"]] = [a for a in entry["adapt"] if isinstance(a, str)]
    return found


def _endpoint(url: str) -> str:
    """The URL an adaptation is kept under: without user:password and a trailing slash."""
    return redact_url(url).rstrip("/")


def endpoint_adaptations(user_file: Path, url: str) -> set[str]:
    return set(_adapt_lines(user_file).get(_endpoint(url), []))


def remember_adaptation(user_file: Path, url: str, name: str) -> Path:
    """Record that `url` needs adaptation `name`; the folders' consents stay as they are."""
    adapt = _adapt_lines(user_file)
    key = _endpoint(url)
    adapt[key] = sorted(set(adapt.get(key, [])) | {name})
    return _write_consents(user_file, _consents(user_file), adapt)


def _write_consents(user_file: Path, entries: list[dict], adapt: dict[str, list[str]]) -> Path:
    path = consent_file(user_file)
    write_private(path, CONSENT_HEADER + "".join(json.dumps(_line(e)) + "\n" for e in entries)
                   + "".join(json.dumps({"endpoint": url, "adapt": names}) + "\n" for url, names in adapt.items()))
    return path


def _line(entry: dict) -> dict:
    values = dict(entry["values"])
    line = {"folder": entry["folder"]}
    if URL_NAME in values:
        line["url"] = values.pop(URL_NAME)
    if values:
        line["settings"] = values
    return line


def endpoint_agreed(user_file: Path, folder: Path, url: str) -> bool:
    return agreed_values(user_file, folder).get(URL_NAME) == url


def remember_endpoint(user_file: Path, folder: Path, url: str) -> Path:
    return remember_values(user_file, folder, {URL_NAME: url})

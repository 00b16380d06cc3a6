"""The MCP server entries people already keep, in Claude Code's format, read as they are.

    ~/.config/s08/mcp.json   the person's own servers ($XDG_CONFIG_HOME/s08/ when that is set)
    .mcp.json                the project's, at the workspace root: the repository's, not the person's

    {"mcpServers": {"NAME": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                    "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "${DOCS_KEY}"}}}}

Both files are read like settings.json (access/settings_json.py: no link followed, a regular file,
bounded). `${VAR}` and `${VAR:-default}` are expanded from the person's environment in command, args,
env, url and headers (in a project's entry, never to s08's API key or token). An entry that cannot be used is left out with one line saying why; nothing here
raises for what a file holds. `add` and `remove` change one file (`s08 mcp add|remove`).

    load(workspace, environ)        Loaded(servers, problems): the person's first, then the project's
    add(path, entry) / remove(path, name)
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from access import settings_json
from redact import SECRET_SETTINGS
from storage import write_private

USER_NAME = "mcp.json"
PROJECT_NAME = ".mcp.json"
# becomes part of mcp__NAME__TOOL: no "__" inside, and no "_" at either end — `edge_` would make
# mcp__edge___echo, which splits (and matches the person's allow list) as server `edge`
NAME = re.compile(r"^(?!_)[A-Za-z0-9_-]{1,40}(?<!_)$")
MAX_SERVERS = 50
MAX_ARGS = 200
MAX_TEXT = 4_000                                  # chars of one command, argument, url or value
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class Entry:
    """One server as configured. `scope`: "user" (the person's file) or "project" (.mcp.json)."""
    name: str
    scope: str
    kind: str                                  # "stdio" or "http"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    raw: dict = field(default_factory=dict, compare=False, hash=False)     # as written, before expansion

    @property
    def digest(self) -> str:
        """What the person agrees to for a project server: the exact entry as written."""
        return hashlib.sha256(json.dumps(self.raw, sort_keys=True).encode("utf-8", "replace")).hexdigest()

    def shown(self) -> str:
        """The command line or the URL (as written: a ${VAR} stays a name, never its value)."""
        if self.kind == "http":
            return f"http {self.raw.get('url', '')}"
        return " ".join([str(self.raw.get("command", ""))] + [str(a) for a in self.raw.get("args", [])])


@dataclass
class Loaded:
    servers: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def user_file(environ: Mapping[str, str] | None = None) -> Path:
    return settings_json.user_file(environ).with_name(USER_NAME)


def project_file(workspace: Path) -> Path:
    return Path(workspace) / PROJECT_NAME


def expand(text: str, environ: Mapping[str, str]) -> str:
    """${VAR} and ${VAR:-default}; an unset variable without a default becomes empty."""
    return VARIABLE.sub(lambda m: environ.get(m[1]) or (m[2] or ""), text)


def _text(value, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string")
    if len(value) > MAX_TEXT or "\x00" in value:
        raise ValueError(f"{what} is longer than {MAX_TEXT:,} characters or holds a NUL")
    return value


def _pairs(value, what: str, environ) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or len(value) > MAX_ARGS:
        raise ValueError(f"{what} must be an object of strings")
    return tuple((_text(k, what), expand(_text(v, what), environ)) for k, v in value.items())


def entry(name: str, raw, scope: str, environ: Mapping[str, str]) -> Entry:
    """One entry, checked; ValueError says what is wrong with it."""
    if not NAME.match(name) or "__" in name:
        raise ValueError("a server name is 1–40 letters, digits, - or _ (no __, no _ at either end)")
    if not isinstance(raw, dict):
        raise ValueError("an entry must be an object")
    kind = raw.get("type", "stdio")
    if kind in ("http", "streamable-http", "streamable_http"):
        url = expand(_text(raw.get("url"), "url"), environ)
        if not re.match(r"^https?://", url):
            raise ValueError("url must start with http:// or https://")
        return Entry(name, scope, "http", url=url, headers=_pairs(raw.get("headers"), "headers", environ), raw=raw)
    if kind != "stdio":
        raise ValueError(f"type {str(kind)[:20]!r} is not supported (stdio or http)")
    command = expand(_text(raw.get("command"), "command"), environ).strip()
    args = raw.get("args", [])
    if not command:
        raise ValueError("command is empty")
    if not isinstance(args, list) or len(args) > MAX_ARGS:
        raise ValueError(f"args must be a list of at most {MAX_ARGS} strings")
    return Entry(name, scope, "stdio", command, tuple(expand(_text(a, "args"), environ) for a in args),
                 _pairs(raw.get("env"), "env", environ), raw=raw)


def read_file(path: Path, scope: str, environ: Mapping[str, str]) -> Loaded:
    found = settings_json.read(path)
    out = Loaded(problems=[found.problem] if found.problem else [])
    servers = found.data.get("mcpServers", {})
    if not isinstance(servers, dict):
        out.problems.append(f"{path}: mcpServers is not an object; it is ignored")
        return out
    for name, raw in list(servers.items())[:MAX_SERVERS]:
        try:
            out.servers.append(entry(name, raw, scope, environ))
        except ValueError as e:
            out.problems.append(f"{path}: server {json.dumps(name)[:60]} left out: {e}")
    if len(servers) > MAX_SERVERS:
        out.problems.append(f"{path}: only the first {MAX_SERVERS} servers are used")
    return out


def load(workspace: Path, environ: Mapping[str, str], secrets: tuple[str, ...] = ()) -> Loaded:
    """The person's servers, then the project's; a project server named like one of the person's is left out
    (the person's wins). ${VAR} in a project entry never expands to the API key or token — by name, nor by
    value (`secrets`: the key also kept under another variable, MY_KEY=$ANTHROPIC_API_KEY)."""
    mine = read_file(user_file(environ), "user", environ)
    # a repository's entry never gets s08's own secrets through ${VAR}: the person sees "${ANTHROPIC_API_KEY}"
    # in a question about a command line, not that the key would go to the repository's server
    hidden = {s for s in secrets if s}
    without_secrets = {k: v for k, v in environ.items() if k not in SECRET_SETTINGS and v not in hidden}
    theirs = read_file(project_file(workspace), "project", without_secrets)
    names = {e.name for e in mine.servers}
    kept = [e for e in theirs.servers if e.name not in names]
    problems = mine.problems + theirs.problems + [
        f"{project_file(workspace)}: server {e.name} left out: your own {USER_NAME} has a server of that name"
        for e in theirs.servers if e.name in names]
    return Loaded(mine.servers + kept, problems)


def _document(path: Path) -> dict:
    found = settings_json.read(path)
    if found.problem:
        raise ValueError(found.problem)
    data = dict(found.data)
    if not isinstance(data.get("mcpServers", {}), dict):
        raise ValueError(f"{path}: mcpServers is not an object")
    return data


def add(path: Path, name: str, raw: dict, environ: Mapping[str, str]) -> None:
    """Add or replace server `name` in `path` (checked first: ValueError says why it cannot be)."""
    entry(name, raw, "user", environ)
    data = _document(path)
    data["mcpServers"] = {**data.get("mcpServers", {}), name: raw}
    _write(path, data)


def remove(path: Path, name: str) -> bool:
    """Remove server `name` from `path`; False when it was not there."""
    data = _document(path)
    servers = dict(data.get("mcpServers", {}))
    if name not in servers:
        return False
    del servers[name]
    data["mcpServers"] = servers
    _write(path, data)
    return True


def _write(path: Path, data: dict) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if path.name == PROJECT_NAME:          # the repository's file: an ordinary file of the workspace
        if path.is_symlink():
            raise ValueError(f"{path} is a link; it is not written")
        path.write_text(text, encoding="utf-8")
    else:
        write_private(path, text)

"""Whether a project's MCP server (`.mcp.json`, the repository's) may start: only after the person agreed
to that exact entry, seeing its command line or URL. The agreement is the one consent record the endpoint
and the folder's settings use (access/credentials.py, per folder), under the name `mcp:NAME` holding the
entry's digest: a changed entry asks again. Nobody to ask (-p, piped input): not started, one line.
"""

from __future__ import annotations

from pathlib import Path

from access.credentials import agreed_values, remember_values
from access.pins import YES
from events import Notice, Question
from .bridge import clean
from .config import Entry

PREFIX = "mcp:"


def agreed(user_file: Path, workspace: Path, entry: Entry) -> bool:
    return agreed_values(user_file, workspace).get(PREFIX + entry.name) == entry.digest


def question(workspace: Path, entries: list[Entry]) -> str:
    lines = [f"This folder's .mcp.json ({clean(workspace, 300)}) asks to start MCP servers that the repository chose:"]
    for e in entries:
        lines.append(f"  {e.name}: {clean(e.shown(), 400)}")
        # the values as written (a ${VAR} stays a name): `X-Id: ${GITHUB_TOKEN}` sends that token to the
        # repository's URL, NODE_OPTIONS=--require ./x.js runs the repository's code — seen before yes
        written = e.raw.get("env" if e.kind == "stdio" else "headers")
        if isinstance(written, dict) and written:
            pairs = [f"{clean(k, 60)}={clean(v, 200)}" if e.kind == "stdio" else f"{clean(k, 60)}: {clean(v, 200)}"
                     for k, v in written.items()]
            lines.append(f"    with {'environment' if e.kind == 'stdio' else 'headers'} " + "; ".join(pairs))
    lines.append("They run as you, with your files. Start them (remembered for these exact entries)?")
    return "\n".join(lines)


def settle(entries: list[Entry], user_file: Path, workspace: Path, ask, emit) -> list[Entry]:
    """The project entries that may start: those agreed before, and — asked once for all the others — the
    rest if the person says yes."""
    waiting = [e for e in entries if not agreed(user_file, workspace, e)]
    allowed = [e for e in entries if e not in waiting]
    if not waiting:
        return allowed
    names = ", ".join(e.name for e in waiting)
    if ask is None:
        emit(Notice(f"[mcp] project servers not started ({names}): not agreed to yet; start s08 in this folder "
                    "interactively to review them", "warning"))
        return allowed
    answer = ask(Question(question(workspace, waiting)))
    if (answer or "").strip().lower() not in YES:
        emit(Notice(f"[mcp] project servers not started: {names}", "warning"))
        return allowed
    try:
        remember_values(user_file, workspace, {PREFIX + e.name: e.digest for e in waiting})
    except OSError as exc:
        emit(Notice(f"[mcp] starting them for this session; could not remember it: {exc.strerror or exc}", "warning"))
    return allowed + waiting

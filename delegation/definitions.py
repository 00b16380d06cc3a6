"""Agent definitions: who the `task` tool can hand work to.

    .s08/agents/*.md               the project's (a repository's text: untrusted)
    .claude/agents/*.md            the project's, in Claude Code's format (untrusted too)
    ~/.config/s08/agents/*.md      the person's own ($XDG_CONFIG_HOME/s08/agents/ when that is set)
    explore                        built in: reads and searches, changes nothing

Claude Code's format: a `---` frontmatter with `name`, `description`, `tools` (comma-separated or a
list; Claude Code's names Read, Write, Edit, Bash, Grep, Glob, LS are understood) and `model`; the body
is the sub-agent's system prompt. Read safely: no link is followed (the folders are walked one
component at a time), only regular files, at most MAX_FILES files of MAX_BYTES each, names and
descriptions bounded. A definition can only take away: its `tools` narrow the parent's (never add
`task`), and a project's `model` may name a model no pricier than the session's (else it is ignored,
with one line saying so); the person's own definitions may choose any model. The first definition of
a name wins, in the order above after the person's own (theirs come first).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from config import user_settings_file
from tools.safe_fs import READ_FLAGS, open_dir

MAX_FILES = 50
MAX_BYTES = 64_000
MAX_NAME, MAX_DESCRIPTION = 40, 400
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
READ_ONLY = "read-only"               # a definition whose tools only read: bash runs only what plan mode allows
# Claude Code's tool names → s08's (Grep, Glob and LS are read-only commands: bash, held to reading)
CLAUDE_TOOLS = {"read": "read_file", "write": "write_file", "edit": "edit_file", "multiedit": "edit_file",
                "bash": "bash", "grep": READ_ONLY, "glob": READ_ONLY, "ls": READ_ONLY}
MODEL_ALIASES = {"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-5"}
EXPLORE_PROMPT = ("You are the explore sub-agent: find things in the workspace and report them precisely. "
                  "Use read_file and read-only commands (ls, grep -rn, find, git log/grep); you cannot change "
                  "anything. Report file paths with line numbers and a short explanation of each finding; "
                  "no preamble.")


@dataclass(frozen=True)
class Definition:
    name: str
    description: str
    prompt: str = ""
    tools: tuple[str, ...] | None = None      # None: the parent's tools (without task)
    read_only: bool = False                   # bash may run only what plan mode would let run
    model: str = ""                           # "" or "inherit": the session's model
    source: str = "built-in"                  # the file it came from
    trusted: bool = True                      # the person's own (may choose any model)


EXPLORE = Definition("explore", "read-only search: where something is used, how a feature works",
                     EXPLORE_PROMPT, ("read_file", "bash"), True)
GENERAL = Definition("general", "The default: a sub-agent with the same tools as you (except task), for a "
                     "self-contained piece of work whose details the main conversation does not need.")


RESERVED = (EXPLORE.name, GENERAL.name)      # never replaced by a file: the model's default is not a repository's


@dataclass
class Found:
    definitions: dict[str, Definition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def agent_folders(workspace: Path, environ: Mapping[str, str] | None = None) -> list[tuple[Path, tuple, bool]]:
    """(root, parts, trusted): where definitions are looked for, the person's own first."""
    user = user_settings_file(environ).parent
    return [(user, ("agents",), True), (Path(workspace), (".s08", "agents"), False),
            (Path(workspace), (".claude", "agents"), False)]


def frontmatter(text: str) -> tuple[dict[str, object], str]:
    """(the `---` block's fields, the body). Values: strings, or lists (`[a, b]` or `- a` lines)."""
    if not text.startswith("---"):
        return {}, text
    end = re.search(r"^---[ \t]*$", text[3:], re.M)
    if end is None:
        return {}, text
    head, body = text[3:3 + end.start()], text[3 + end.end():]
    fields: dict[str, object] = {}
    key = None
    for line in head.splitlines():
        item = re.match(r"^\s+-\s*(.*)$", line)
        if item and key is not None:
            value = fields.get(key)
            fields[key] = (value if isinstance(value, list) else []) + [item.group(1).strip().strip("'\"")]
            continue
        pair = re.match(r"^([A-Za-z_-]+)\s*:\s*(.*)$", line)
        if not pair:
            continue
        key, value = pair.group(1).lower(), pair.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            fields[key] = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
        else:
            fields[key] = value.strip("'\"")
    return fields, body.lstrip("\n")


def _tools(value: object) -> tuple[tuple[str, ...], bool]:
    """(s08 tool names, read_only) of a `tools` field; unknown names are dropped (they only narrow)."""
    names = value if isinstance(value, list) else str(value).split(",")
    chosen: list[str] = []
    for raw in names:
        name = str(raw).strip()
        mapped = CLAUDE_TOOLS.get(name.lower(), name if name in ("read_file", "write_file", "edit_file", "bash") else "")
        if mapped and mapped not in chosen:
            chosen.append(mapped)
    if READ_ONLY in chosen:
        chosen.remove(READ_ONLY)
        only_reading = "bash" not in chosen
        chosen += [t for t in ("read_file", "bash") if t not in chosen]
        return tuple(chosen), only_reading and not {"write_file", "edit_file"} & set(chosen)
    return tuple(chosen), False


def parse(text: str, source: str, trusted: bool) -> Definition | str:
    """A definition, or why the file is not one."""
    fields, body = frontmatter(text)
    name = str(fields.get("name", "")).strip().lower()
    if not NAME.match(name):
        return f"{source}: no valid `name` (lowercase letters, digits, - and _, at most {MAX_NAME}); ignored"
    description = " ".join(str(fields.get("description", "")).split())[:MAX_DESCRIPTION]
    if not description:
        return f"{source}: no `description`; ignored"
    tools, read_only = _tools(fields["tools"]) if "tools" in fields and str(fields["tools"]).strip() else (None, False)
    model = str(fields.get("model", "")).strip()
    model = MODEL_ALIASES.get(model.lower(), model) if model.lower() != "inherit" else ""
    return Definition(name, description, body.strip(), tools, read_only, model, source, trusted)


def _read_folder(root: Path, parts: tuple, trusted: bool, found: Found) -> None:
    try:
        folder = open_dir(root, parts)
    except FileNotFoundError:
        return
    except (OSError, Exception) as exc:      # a link in the way (ToolError), not a folder, unreadable
        found.problems.append(f"{root.joinpath(*parts)}: not read ({getattr(exc, 'strerror', None) or exc}); "
                              "its agents are ignored")
        return
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))
        if len(names) > MAX_FILES:
            found.problems.append(f"{root.joinpath(*parts)}: more than {MAX_FILES} agent files; the first "
                                  f"{MAX_FILES} are read")
        for name in names[:MAX_FILES]:
            where = str(root.joinpath(*parts, name))
            text = _read_file(folder, name, where, found)
            if text is None:
                continue
            parsed = parse(text, where, trusted)
            if isinstance(parsed, str):
                found.problems.append(parsed)
            elif parsed.name in RESERVED:
                found.problems.append(f"{where}: the name {parsed.name!r} is s08's own agent; ignored")
            elif parsed.name not in found.definitions:
                found.definitions[parsed.name] = parsed
    finally:
        os.close(folder)


def _read_file(folder: int, name: str, where: str, found: Found) -> str | None:
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=folder)
    except OSError as exc:
        why = "a link; not followed" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        found.problems.append(f"{where}: not read ({why}); ignored")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            found.problems.append(f"{where}: not a regular file; ignored")
            return None
        if info.st_size > MAX_BYTES:
            found.problems.append(f"{where}: larger than {MAX_BYTES:,} bytes; ignored")
            return None
        return os.read(fd, MAX_BYTES + 1).decode("utf-8", errors="replace")
    finally:
        os.close(fd)


def load(workspace: Path, environ: Mapping[str, str] | None = None) -> Found:
    """Every definition the task tool offers: the built-in explore agent, then the files' (the first
    of a name wins; none may take the names `explore` and `general`)."""
    found = Found({EXPLORE.name: EXPLORE})
    for root, parts, trusted in agent_folders(workspace, environ):
        _read_folder(root, parts, trusted, found)
    return found

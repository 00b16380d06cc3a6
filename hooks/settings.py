"""The `hooks` key of the settings files, in Claude Code's schema, read into HookSpecs.

    {"hooks": {EVENT: [{"matcher": REGEX, "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}}

    parse(value, source, where) -> (specs, problems)     one line per thing that cannot be used
    digest(value)                                        what the person's agreement to a project's hooks is for
    matches(spec, target)                                 a matcher against s08's tool name and Claude Code's

A matcher is a regular expression matched against the whole name (`Edit|Write`, `Bash`, `mcp__.*`); "",
"*" or none matches everything. Tool events match s08's tool names and Claude Code's names for the same
tools (TOOL_NAMES), so `"matcher": "Write|Edit"` works unchanged. Only `"type": "command"` hooks exist
here (a `prompt` hook is said once and skipped).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "PostCompact",
          "Notification", "Stop", "SessionEnd")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
TOOL_NAMES = {"bash": "Bash", "read_file": "Read", "write_file": "Write", "edit_file": "Edit"}   # s08 → Claude Code
DEFAULT_TIMEOUT, MAX_TIMEOUT = 60, 3600     # seconds
MAX_HOOKS = 200                   # per file; the rest is said once and skipped
MAX_COMMAND = 10_000              # characters of one command
MAX_MATCHER = 500
MAX_TARGET = 200                  # characters of a name a matcher is tried on
MAX_SCRIPT = 4 * 1024 * 1024      # bytes of a named script that its digest covers
MAX_HASHED = 16 * 1024 * 1024     # bytes of scripts read for one command; past it a hook is not run
NOT_A_FILE = "not a regular file in this folder"
TOO_MUCH = "past what s08 reads to check a hook's scripts"
PROJECT_DIR = re.compile(r"\$\{?(CLAUDE_PROJECT_DIR|S08_PROJECT_DIR)\}?")


@dataclass(frozen=True)
class HookSpec:
    event: str
    matcher: str
    command: str
    timeout: float
    source: str                   # "user" (the person's settings.json) or "project" (.s08/settings.json)
    where: str                    # the file it came from, for /hooks

    def names(self) -> str:
        return f"{self.event}" + (f" [{self.matcher}]" if self.matcher not in ("", "*") else "")


def digest(value) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


def _timeout(value) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(min(value, MAX_TIMEOUT))
    return float(DEFAULT_TIMEOUT)


def parse(value, source: str, where: str) -> tuple[list[HookSpec], list[str]]:
    if value is None:
        return [], []
    if not isinstance(value, dict):
        return [], [f"{where}: \"hooks\" is not an object; no hook from it is used"]
    specs: list[HookSpec] = []
    problems: list[str] = []
    for event, groups in value.items():
        if event not in EVENTS:
            problems.append(f"{where}: unknown hook event {str(event)[:60]!r} is ignored (known: {', '.join(EVENTS)})")
            continue
        for group in groups if isinstance(groups, list) else [None]:
            if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
                problems.append(f"{where}: an entry of {event} is not {{\"matcher\": …, \"hooks\": [...]}}; ignored")
                continue
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str) or len(matcher) > MAX_MATCHER or not _compiles(matcher):
                problems.append(f"{where}: {event} has a matcher that is not a valid regular expression; ignored")
                continue
            for hook in group.get("hooks", []):
                spec = _spec(event, matcher, hook, source, where, problems)
                if spec is not None and len(specs) < MAX_HOOKS:
                    specs.append(spec)
                elif spec is not None:
                    problems.append(f"{where}: more than {MAX_HOOKS} hooks; the rest are ignored")
                    return specs, problems
    return specs, problems


def _spec(event, matcher, hook, source, where, problems) -> HookSpec | None:
    if not isinstance(hook, dict) or hook.get("type", "command") != "command":
        kind = hook.get("type") if isinstance(hook, dict) else None
        problems.append(f"{where}: a {event} hook of type {str(kind)[:30]!r} is ignored (s08 runs \"command\" hooks)")
        return None
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip() or len(command) > MAX_COMMAND:
        problems.append(f"{where}: a {event} hook without a usable \"command\" is ignored")
        return None
    return HookSpec(event, matcher, command, _timeout(hook.get("timeout")), source, where)


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
        return True
    except re.error:
        return False


def matches(spec: HookSpec, target: str) -> bool:
    """Does the hook's matcher take `target` (a tool name, a SessionStart source, a compaction trigger)?"""
    if spec.matcher in ("", "*") or not target:
        return True
    if len(target) > MAX_TARGET:          # a name the model made up: no regular expression runs on it
        return False
    names = [target] + ([TOOL_NAMES[target]] if target in TOOL_NAMES else [])
    return any(re.fullmatch(spec.matcher, name) for name in names)


def scripts_of(command: str, workspace: Path, memo: dict[str, str] | None = None) -> dict[str, str]:
    """path → digest of each file inside the workspace that `command` names (as a word, relative to the
    workspace or through $CLAUDE_PROJECT_DIR), links followed: what agreeing to the command agrees to.
    A name in the workspace that is not a regular file (a link to /dev/stdin — bash would run the
    event's JSON, which the model writes —, a FIFO, a device, a dangling link) maps to NOT_A_FILE: such a
    hook never runs (no digest can say what it would run); a link to a regular file outside the folder
    (`.venv/bin/python`) maps to where it leads. Each file is read once per `memo` (one
    session's start, one event) and at most MAX_HASHED bytes per command: a settings file naming one
    big file 200 times in 200 hooks costs one read, not 40,000."""
    try:      # `;`, `&&`, `|` split words as the shell does: `bash x.sh;true` names x.sh
        lexer = shlex.shlex(PROJECT_DIR.sub(lambda _m: str(workspace), command), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = command.split()
    root, found, budget = workspace.resolve(), {}, MAX_HASHED
    memo = {} if memo is None else memo
    for word in dict.fromkeys(words[:200]):
        if "/" not in word and "." not in word:
            continue
        named = Path(os.path.normpath(workspace / word))
        within = named != workspace and workspace in named.parents
        try:
            path = (workspace / word).resolve()
            if os.path.isdir(path):
                continue                              # `prettier --write src/`: what runs is not in it
            if path != root and root in path.parents and stat.S_ISREG(os.stat(path).st_mode):
                key = str(path.relative_to(root))
                if key not in memo and budget <= 0:
                    found[key] = TOO_MUCH
                elif key not in memo:
                    with open(path, "rb", opener=_nonblocking) as f:
                        data = f.read(MAX_SCRIPT)
                    budget -= len(data)
                    memo[key] = hashlib.sha256(data).hexdigest()
                found[key] = memo.get(key, TOO_MUCH)
            elif within and os.path.lexists(named):     # a link out of the folder: where it leads counts
                regular = os.path.exists(path) and stat.S_ISREG(os.stat(path).st_mode)
                found[str(named.relative_to(workspace))] = f"-> {path}" if regular else NOT_A_FILE
        except (OSError, ValueError, RuntimeError):
            if within and os.path.lexists(named):
                found[str(named.relative_to(workspace))] = NOT_A_FILE
    return found


def unsafe_scripts(scripts: dict[str, str]) -> list[str]:
    return [path for path, value in scripts.items() if value in (NOT_A_FILE, TOO_MUCH)]


def _nonblocking(path, flags):
    return os.open(path, flags | os.O_NONBLOCK)       # swapped for a FIFO since the check: no hang

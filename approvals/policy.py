"""Approvals: which tool calls run at once and which need the person's yes. Policy only, no printing.

    APPROVAL_MODE   default     read-only tools and read-only commands run; every other command and
                                every file change is shown and asked about
                    auto_edit   file changes (always inside the workspace) run too; other commands ask
                    yolo        nothing asks
                    plan        nothing changes: read-only tools and read-only commands run (commands only
                                in the read-only sandbox: one it refused, or with no sandbox, is refused
                                too), every other call is refused without asking (the model is told it
                                is planning: plan_mode.py), whatever was allowed before
    ALLOW_COMMANDS  command prefixes that run without asking, e.g. `pytest,npm test,git diff`

A command is read by the one shell parser (approvals/shell.py, tree-sitter's bash grammar). It runs
without asking only when the grammar read all of it, it holds nothing the policy does not judge
(substitutions, functions, `case`, `[[`, arithmetic, a job put in the background inside a loop),
and each of its simple commands is read-only (approvals/read_only.py) or starts with an allowed
prefix and passes the same structural checks (no expansion, no redirection but to /dev/null or
from a file on descriptor 0, no option known to make that program write elsewhere or run other
code: approvals/wrappers.py). Wrappers (`timeout`, `xargs`, `nice`…, by bare name only) are seen
through, and reserved words (`for`, `do`, `if`…) are not commands: neither is ever offered or
remembered as a prefix.
Files that configure the programs commands run (`.git/`, `.gitattributes`, `.envrc`, shell startup
files…) ask before every change in default and auto_edit, whatever was answered before.

MCP tools (`mcp__SERVER__TOOL`) ask in default and auto_edit, showing server, tool and arguments, unless the
person's own settings.json allows them (`permissions.allow`, Claude Code's syntax: mcp_allowed) or they said
"always" to that tool; plan mode refuses those not allowed. A server's own annotations (read-only…) are not
trusted for any of this.

Kernel sandbox (tools/sandbox.py): `decide` also says how an allowed call runs — "read-only" when
the policy let a command run without a question because it judged it read-only (it then runs in the
read-only sandbox), "" when the person allowed it (yes, always, ALLOW_COMMANDS, yolo). Where there is
no sandbox (`sandbox_problem` says why) and for a command the sandbox refused once (`sandbox_refused`),
nothing runs without a question.

The loop calls `Approvals.decide(call, change, ask)` (or `review`, its refusal only) before each tool
call. `ask` is the UI's callback (None in -p and piped modes, where nobody can answer: the call is
refused with a tool error the model reads, and a notice says how to allow it). A "no" becomes a tool error too, with
the person's reason. "Always" remembers a command prefix, or every command / every file change,
for the rest of the session. The bash tool's guard against catastrophic commands applies in
every mode; this is the guard for everything else bash can do.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

from approvals.wrappers import NOT_SEEN_THROUGH, WRAPPERS, command_prefix, dangerous, matches, unwrap
from config import APPROVAL_MODES as MODES
from approvals.read_only import glob_among_outputs, read_only, writes
from approvals.shell import Simple, parse

MAX_COMMAND_CHARS = 4000          # longer commands are not analysed: they ask

READ_ONLY_TOOLS = {"read_file", "compact", "mcp_load_tools"}     # the last only changes which schemas are sent
MCP_PREFIX = "mcp__"
# Shift-Tab's order; yolo is in it only when the session started in yolo (--yolo, or the setting)
CYCLE = ("default", "auto_edit", "plan")
PLAN_UNSANDBOXED = ("Not run: plan mode is on and {why}; in plan mode commands run only inside the read-only "
                    "sandbox, so it is not run and nobody is asked. Do not retry it: read what you need with "
                    "read_file or another command that only reads, finish the plan and present it.")
PLAN_REFUSAL = ("Not run: plan mode is on, so nothing may change — only read_file and commands that only read "
                "(ls, cat, grep, git status/diff/log, …) run. Do not retry it: finish the plan and present it; the "
                "person switches plan mode off (Shift-Tab) to let you carry it out.")
FILE_TOOLS = {"write_file", "edit_file"}
WRAPPED_IN_PREFIX = set(WRAPPERS) | NOT_SEEN_THROUGH
CONFIG_FOLDERS = {".git": "git runs the programs its config and hooks name",
                  ".hg": "Mercurial runs the hooks its hgrc names",
                  ".vscode": "the editor runs the tasks and programs its settings name",
                  ".s08": "s08 runs the hooks its settings name, and reads its commands and skills",
                  ".claude": "Claude Code runs the hooks its settings name; s08 reads its commands and skills"}
CONFIG_FILES = {".gitattributes": "it picks the filters and diff programs git runs",
                ".gitconfig": "git runs the programs it names",
                ".hgrc": "Mercurial runs the hooks it names",
                ".envrc": "direnv runs it when a shell enters the folder",
                **{name: "a shell runs it when it starts" for name in (
                    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
                    ".zprofile", ".zlogin")}}


def configures_commands(path: str) -> str:
    """Why a write to `path` (relative to the workspace) could make a later command run code, or ""."""
    parts = [p.lower() for p in posixpath.normpath(path.replace("\\", "/")).split("/") if p not in ("", ".")]
    for part in parts:
        if part in CONFIG_FOLDERS:
            return CONFIG_FOLDERS[part]
    if parts and parts[-1] in CONFIG_FILES:
        return CONFIG_FILES[parts[-1]]
    if "/.config/git/" in "/" + "/".join(parts) + "/":
        return "git runs the programs it names"
    return ""


def mcp_allowed(name: str, allowed) -> bool:
    """Does an entry of the person's `permissions.allow` (Claude Code's syntax) cover MCP tool `name`?
    `mcp__SERVER` and `mcp__SERVER__*` allow every tool of that server, `mcp__SERVER__TOOL` one tool."""
    server = name[len(MCP_PREFIX):].partition("__")[0]
    return any(entry in (name, f"{MCP_PREFIX}{server}", f"{MCP_PREFIX}{server}__*") for entry in allowed)


def parse_allow_list(text: str) -> tuple[str, ...]:
    return tuple(p for p in (" ".join(part.split()) for part in text.split(",")) if p)


def split_command(command: str) -> list[Simple] | None:
    """The simple commands the policy judges one by one, or None when it asks about the whole line:
    too long to analyse, not all read by the grammar, or holding a construct it does not judge."""
    if len(command) > MAX_COMMAND_CHARS:
        return None
    script = parse(command)
    if script.errors or script.constructs or script.background_in_loop:
        return None
    return script.commands


def _plain(part: Simple) -> bool:
    """No redirection to a file, no expansion, no assignment in front, not a loop's header."""
    return not (writes(part) or part.header or any(part.opaque) or not part.words or part.assignments)


def _seen_through(part: Simple):
    """The words a part really runs (wrappers seen through), or None when it cannot be judged by them."""
    seen = unwrap(part.words, part.lead_glob) if _plain(part) else None
    return seen if seen is not None and seen[0] else None


def permitted(part: Simple, allowed: tuple) -> bool:
    """Does an allowed prefix cover this part (with no dangerous option, nothing the checks cannot see)?
    A prefix that itself starts with a wrapper (`sudo apt` in ALLOW_COMMANDS) matches the words as written."""
    if _plain(part) and any(p.split()[0] in WRAPPED_IN_PREFIX and matches(part.words, p) for p in allowed):
        return True
    seen = _seen_through(part)
    if seen is None:
        return False
    words, globs, open_arguments = seen
    if glob_among_outputs(words[0], part):
        return False
    return any(matches(words, p) and not dangerous(words, globs, len(p.split()), open_arguments) for p in allowed)


def offered_prefix(part: Simple) -> str:
    """The prefix "always" would remember for a part that asks, or "" if remembering one would not be
    safe or would not make this part run next time."""
    seen = _seen_through(part)
    if seen is None:
        return ""
    words, globs, open_arguments = seen
    prefix = command_prefix(words)
    return "" if not prefix or dangerous(words, globs, len(prefix.split()), open_arguments) else prefix


@dataclass
class Request:
    """A tool call that needs the person's answer; `prefixes` are what "always" would allow."""
    tool: str
    kind: str                      # "command" or "edit"
    command: str = ""
    change: object = None          # tools.preview.FileChange for write_file / edit_file
    prefixes: tuple = ()
    sensitive: str = ""            # a file that configures commands: why it always asks
    server: str = ""               # an MCP call (kind "mcp"): the server; `command` holds the arguments as JSON
    why: str = ""                  # a command that looks read-only but asks: why (no sandbox, refused by it)
    asker: str = ""                # a sub-agent asks: which one (delegation/child.py)


@dataclass
class Answer:
    allow: bool
    scope: str = "once"            # "once", "prefix" (the request's prefixes) or "session"
    reason: str = ""


@dataclass
class Refusal:
    """The tool error returned instead of running a call, the one line to show where nobody was asked
    (or ""), and a few words for the person's screen."""
    result: str
    notice: str = ""
    shown: str = "not run"
    reason: str = ""               # what the person typed when they said no


def _how_to_allow(request: Request, args) -> str:
    """The one line -p and piped modes show for a refused call."""
    if request.kind == "edit":
        path = str((args or {}).get("path", "")) if isinstance(args, dict) else ""
        if request.sensitive:
            return (f"[approval needed] {request.tool} {path[:80]} was not run: s08 asks before every change to "
                    f"it ({request.sensitive}); only --yolo runs it without asking")
        return (f"[approval needed] {request.tool} {path[:80]} was not run: allow file changes with "
                "--approval-mode auto_edit (or APPROVAL_MODE=auto_edit), or everything with --yolo")
    if request.kind == "mcp":
        return (f"[approval needed] {request.tool} was not run: allow it in ~/.config/s08/settings.json with "
                f'{{"permissions": {{"allow": ["{request.tool}"]}}}}, or --yolo')
    lines = request.command.strip().splitlines() or [""]
    shown = lines[0][:80] + (" …" if len(lines) > 1 or len(lines[0]) > 80 else "")
    allow = f"ALLOW_COMMANDS={','.join(request.prefixes)} in ~/.config/s08/.env, or " if request.prefixes else ""
    return f"[approval needed] bash `{shown}` was not run: allow it with {allow}--yolo"


class Approvals:
    """The session's policy: the mode, the allowed prefixes, and what the person said "always" to."""

    def __init__(self, mode: str = "default", allow_commands: tuple = (), allow_tools: tuple = ()):
        if mode not in MODES:
            raise ValueError(f"APPROVAL_MODE must be one of {', '.join(MODES)}")
        self.mode, self.allow_commands = mode, tuple(allow_commands)
        self.allow_tools = tuple(allow_tools)          # the person's settings.json permissions.allow (MCP tools)
        self.cycle_modes = CYCLE + (("yolo",) if mode == "yolo" else ())
        self.sandbox_problem = ""          # why commands cannot run in the kernel sandbox ("" when they can)
        self.refused_by_sandbox: set[str] = set()     # commands the read-only sandbox refused: they ask next time
        self.forget()

    def forget(self) -> None:
        """Drop the "always" answers (a new session)."""
        self.prefixes: set[str] = set()
        self.tools: set[str] = set()                   # MCP tools the person said "always" to
        self.all_commands = self.all_edits = False

    def summary(self) -> str:
        """The mode, and what the person allowed for the session ("default + every command, `npm test`");
        in plan mode only the mode (nothing it allowed applies there)."""
        if self.mode == "plan":
            return "plan (read only)"
        grants = (["every command"] if self.all_commands else []) + (["every file change"] if self.all_edits else [])
        prefixes = sorted(self.prefixes)
        grants += [f"`{p}`" for p in prefixes] if len(prefixes) <= 2 else [f"{len(prefixes)} commands"]
        grants += [f"{len(self.tools)} MCP tool{'s' * (len(self.tools) != 1)}"] if self.tools else []
        return self.mode + (" + " + ", ".join(grants) if grants else "")

    def cycle(self) -> str:
        """The next mode (Shift-Tab in the REPL): default → auto_edit → plan → default, with yolo after
        plan only when the session started in yolo (it is never entered by a stray key otherwise)."""
        modes = self.cycle_modes
        self.mode = modes[(modes.index(self.mode) + 1) % len(modes)] if self.mode in modes else modes[0]
        return self.mode

    def plan_refuses(self, name: str, args) -> bool:
        """In plan mode: would this call change anything (so it is refused)?"""
        if name in READ_ONLY_TOOLS:
            return False
        if name in FILE_TOOLS:
            return True
        if name.startswith(MCP_PREFIX):      # a server's read-only annotation is not trusted for this
            return not mcp_allowed(name, self.allow_tools)
        if name != "bash":
            return False                 # unknown tools are refused by the registry anyway
        command = str(args.get("command", "")) if isinstance(args, dict) else ""
        parts = split_command(command)
        return parts is None or not all(read_only(p) for p in parts)

    def needs_approval(self, name: str, args, where: str = "") -> Request | None:
        """None when the call may run now; otherwise what to ask. `where`: a file tool's path as it
        resolves in the workspace (links followed), if known."""
        if self.mode == "yolo" or name in READ_ONLY_TOOLS:
            return None
        if name in FILE_TOOLS:
            path = str(args.get("path", "")) if isinstance(args, dict) else ""
            why = configures_commands(path) or configures_commands(where)
            if why:
                return Request(name, "edit", sensitive=why)
            return None if self.mode == "auto_edit" or self.all_edits else Request(name, "edit")
        if name.startswith(MCP_PREFIX):
            if mcp_allowed(name, self.allow_tools + tuple(self.tools)):
                return None
            try:
                shown = json.dumps(args, ensure_ascii=False, indent=2)
            except (TypeError, ValueError):
                shown = repr(args)
            return Request(name, "mcp", shown, prefixes=(name,), server=name[len(MCP_PREFIX):].partition("__")[0])
        if name != "bash":
            return None                  # unknown tools are refused by the registry anyway
        command = str(args.get("command", "")) if isinstance(args, dict) else ""
        if self.all_commands or not command.strip():
            return None
        parts = split_command(command)
        if parts is None:
            return Request(name, "command", command)
        allowed = self.allow_commands + tuple(sorted(self.prefixes))
        waiting = [p for p in parts if not read_only(p) and not permitted(p, allowed)]
        if not waiting:
            return None
        offers = [offered_prefix(p) for p in waiting]
        prefixes = tuple(dict.fromkeys(offers)) if all(offers) else ()
        return Request(name, "command", command, prefixes=prefixes)

    def remember(self, request: Request, answer: Answer) -> None:
        if answer.scope == "session":
            if request.kind == "edit":
                self.all_edits = True
            else:
                self.all_commands = True
        elif answer.scope == "prefix" and getattr(request, "kind", "") == "mcp":
            self.tools.add(request.tool)
        elif answer.scope == "prefix":       # only what command_prefix itself would offer: never `for`, `xargs`
            self.prefixes.update(p for p in request.prefixes if p and command_prefix(p.split()) == p)

    def judged_read_only(self, name: str, args) -> bool:
        """Would this bash call run without a question only because every part of it looks read-only
        (not because of yolo, an "always" or an allowed prefix)?"""
        command = str(args.get("command", "")) if isinstance(args, dict) else ""
        if name != "bash" or self.mode == "yolo" or (self.all_commands and self.mode != "plan") or not command.strip():
            return False
        parts = split_command(command)
        return parts is not None and all(read_only(p) for p in parts)

    def sandbox_refused(self, command: str) -> None:
        """The read-only sandbox refused this command: the next call of it asks the person."""
        self.refused_by_sandbox.add(command)

    def _ask_instead(self, name: str, args, why: str) -> Request:
        """The question for a read-only command that may not run unasked (no sandbox, or it refused it)."""
        command = str(args.get("command", ""))
        parts = split_command(command) or []
        offers = [offered_prefix(p) for p in parts]
        return Request(name, "command", command, prefixes=tuple(dict.fromkeys(offers)) if all(offers) else (),
                       why=f"asked because {why}: a yes runs it outside the sandbox")

    def ask_anyway(self, name: str, args, change, ask, why: str) -> Refusal | None:
        """A PreToolUse hook answered "ask": the person is asked about a command or file change even where
        the policy would let it run (never the other way round); nobody to ask refuses it."""
        command = str(args.get("command", "")) if isinstance(args, dict) and name == "bash" else ""
        return self._ask(Request(name, "command" if name == "bash" else "edit", command, why=why), name, args,
                         change, ask)

    def review(self, name: str, args, change, ask, where: str = "") -> Refusal | None:
        """None: run the call. A Refusal: return its text to the model as a tool error instead.
        `where`: a file tool's resolved path (tools.preview.target_path)."""
        return self.decide(name, args, change, ask, where)[0]

    def decide(self, name: str, args, change, ask, where: str = "") -> tuple[Refusal | None, str]:
        """(refusal or None, how the call runs): "read-only" when the policy lets it run without a
        question because it judged it read-only (the bash tool then runs it in the read-only sandbox),
        "" when it runs as allowed. In plan mode what is not reading is refused, unasked."""
        if self.mode == "plan" and self.plan_refuses(name, args):
            notice = f"[plan mode] {name} was not run: plan mode allows only reading" if ask is None else ""
            return Refusal(PLAN_REFUSAL, notice, "not run: plan mode (only reading)"), ""
        request, why = self.needs_approval(name, args, where or getattr(change, "path", "") or ""), ""
        if request is None and self.judged_read_only(name, args):
            why = self.sandbox_problem or ("the read-only sandbox refused it before"
                                           if args.get("command") in self.refused_by_sandbox else "")
            if not why:
                return None, "read-only"
            if self.mode == "plan":          # a yes would run it outside the sandbox: plan mode neither asks nor changes
                notice = f"[plan mode] {name} was not run: {why}, and plan mode runs nothing outside it" \
                    if ask is None else ""
                return Refusal(PLAN_UNSANDBOXED.format(why=why), notice, "not run: plan mode (only sandboxed reading)"), ""
            request = self._ask_instead(name, args, why)
        if request is None:
            return None, ""
        refusal = self._ask(request, name, args, change, ask)
        if refusal is not None and refusal.notice and why:
            refusal.notice += f" (asked because {why})"
        return refusal, ""

    def _ask(self, request: Request, name: str, args, change, ask) -> Refusal | None:
        request.change = change
        if ask is None:
            return Refusal(f"Not run: this {name} call needs the person's approval (APPROVAL_MODE={self.mode}) "
                           "and nobody can be asked in this non-interactive run. Do not retry it; say what you "
                           "wanted to do instead.", _how_to_allow(request, args), "not run: it needs approval")
        answer = ask(request)
        if answer.allow:
            self.remember(request, answer)
            return None
        reason = answer.reason.strip()
        return Refusal(f"The user declined this {name} call; it was not run."
                       + (f" Their reason: {reason}" if reason else " Ask them how to proceed if it is unclear."),
                       shown="not run: you said no" + (f" ({reason})" if reason else ""), reason=reason)

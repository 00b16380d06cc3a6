"""Approvals: which tool calls run at once and which need the person's yes. Policy only, no printing.

    APPROVAL_MODE   default     read-only tools and read-only commands run; every other command and
                                every file change is shown and asked about
                    auto_edit   file changes (always inside the workspace) run too; other commands ask
                    yolo        nothing asks
    ALLOW_COMMANDS  command prefixes that run without asking, e.g. `pytest,npm test,git diff`

The loop calls `Approvals.review(call, change, ask)` before each tool call. `ask` is the UI's
callback (None in -p and piped modes, where nobody can answer: the call is refused with a tool
error the model reads, and a notice says how to allow it). A "no" becomes a tool error too, with
the person's reason. "Always" remembers a command prefix, or every command / every file change,
for the rest of the session. The bash tool's guard against catastrophic commands applies in
every mode; this is the guard for everything else bash can do.
"""

from __future__ import annotations

from dataclasses import dataclass

from config import APPROVAL_MODES as MODES
from shell_commands import (ASSIGNMENT, command_prefix, matches, parse_allow_list,  # noqa: F401  (re-exported)
                            read_only, split_command)

READ_ONLY_TOOLS = {"read_file", "compact"}
FILE_TOOLS = {"write_file", "edit_file"}


@dataclass
class Request:
    """A tool call that needs the person's answer; `prefixes` are what "always" would allow."""
    tool: str
    kind: str                      # "command" or "edit"
    command: str = ""
    change: object = None          # tools.preview.FileChange for write_file / edit_file
    prefixes: tuple = ()


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


def _how_to_allow(request: Request, args) -> str:
    """The one line -p and piped modes show for a refused call."""
    if request.kind == "edit":
        path = str((args or {}).get("path", "")) if isinstance(args, dict) else ""
        return (f"[approval needed] {request.tool} {path[:80]} was not run: allow file changes with "
                "--approval-mode auto_edit (or APPROVAL_MODE=auto_edit), or everything with --yolo")
    lines = request.command.strip().splitlines() or [""]
    shown = lines[0][:80] + (" …" if len(lines) > 1 or len(lines[0]) > 80 else "")
    allow = f"ALLOW_COMMANDS={','.join(request.prefixes)} in .env, or " if request.prefixes else ""
    return f"[approval needed] bash `{shown}` was not run: allow it with {allow}--yolo"


class Approvals:
    """The session's policy: the mode, the allowed prefixes, and what the person said "always" to."""

    def __init__(self, mode: str = "default", allow_commands: tuple = ()):
        if mode not in MODES:
            raise ValueError(f"APPROVAL_MODE must be one of {', '.join(MODES)}")
        self.mode, self.allow_commands = mode, tuple(allow_commands)
        self.forget()

    def forget(self) -> None:
        """Drop the "always" answers (a new session)."""
        self.prefixes: set[str] = set()
        self.all_commands = self.all_edits = False

    def cycle(self) -> str:
        """The next mode (Shift-Tab in the REPL)."""
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        return self.mode

    def needs_approval(self, name: str, args) -> Request | None:
        """None when the call may run now; otherwise what to ask."""
        if self.mode == "yolo" or name in READ_ONLY_TOOLS:
            return None
        if name in FILE_TOOLS:
            return None if self.mode == "auto_edit" or self.all_edits else Request(name, "edit")
        if name != "bash":
            return None                  # unknown tools are refused by the registry anyway
        command = str(args.get("command", "")) if isinstance(args, dict) else ""
        if self.all_commands or not command.strip():
            return None
        parts = split_command(command)
        if parts is None:
            return Request(name, "command", command)
        allowed = self.allow_commands + tuple(self.prefixes)
        waiting = [p for p in parts if not read_only(p) and
                   (p.writes or ASSIGNMENT.match(p.words[0] if p.words else "=")
                    or not any(matches(p.words, a) for a in allowed))]
        if not waiting:
            return None
        prefixes = () if any(p.writes or not p.words or ASSIGNMENT.match(p.words[0]) for p in waiting) else \
            tuple(dict.fromkeys(command_prefix(p.words) for p in waiting))
        return Request(name, "command", command, prefixes=prefixes)

    def remember(self, request: Request, answer: Answer) -> None:
        if answer.scope == "session":
            if request.kind == "edit":
                self.all_edits = True
            else:
                self.all_commands = True
        elif answer.scope == "prefix":
            self.prefixes.update(request.prefixes)

    def review(self, name: str, args, change, ask) -> Refusal | None:
        """None: run the call. A Refusal: return its text to the model as a tool error instead."""
        request = self.needs_approval(name, args)
        if request is None:
            return None
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
                       shown="not run: you said no" + (f" ({reason})" if reason else ""))

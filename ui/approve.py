"""The approval question: what a tool call will do, and the person's yes / no / always.

    ? run this command?
        npm install left-pad
      y  yes
      a  yes, and always allow `npm install` this session
      s  yes, and every command this session
      n  no, and tell the model why (Esc: just no)

    ? apply this change to app.py?
          2   def f():
          2 - return 1
          2 + return 2
      y  yes
      s  yes, and every file change this session
      n  no, and tell the model why (Esc: just no)

One key answers. After "n" a reason may be typed: it goes back to the model with the refusal; Esc
is a plain no. Ctrl-C interrupts the turn, as everywhere. The policy itself is approvals.py.
"""

from __future__ import annotations

import os
import select
import termios

from prompt_toolkit import PromptSession
from rich.text import Text

from approvals import Answer, Request
from .diffview import change_lines
from .sanitize import safe, safe_line
from .toolview import wrap_words

COMMAND_LINES = 20
DIFF_LINES = 60


def choices(request: Request) -> dict[str, tuple[str, Answer | None]]:
    """key → (label, answer); the answer for "n" is filled in with the reason."""
    options = {"y": ("yes", Answer(True))}
    if request.kind == "command" and request.prefixes:
        shown = ", ".join(f"`{safe_line(p, 40)}`" for p in request.prefixes)
        options["a"] = (f"yes, and always allow {shown} this session", Answer(True, "prefix"))
    what = "every command" if request.kind == "command" else "every file change"
    options["s"] = (f"yes, and {what} this session", Answer(True, "session"))
    options["n"] = ("no, and tell the model why (Esc: just no)", None)
    return options


def question_lines(request: Request, width: int) -> list[Text]:
    if request.kind == "command":
        lines = [Text("? run this command?", style="bold yellow")]
        body = wrap_words(safe(request.command).strip().replace("\t", " "), max(10, width - 4))
        lines += [Text("    " + line, style="bold") for line in body[:COMMAND_LINES]]
        if len(body) > COMMAND_LINES:
            lines.append(Text(f"    … {len(body) - COMMAND_LINES} more lines", style="dim"))
        return lines
    change = request.change
    path = safe_line(getattr(change, "path", "") or "the file")
    verb = "create" if change is not None and change.before is None else "apply this change to"
    lines = [Text(f"? {verb} {path}?", style="bold yellow")]
    return lines + (change_lines(change, width, DIFF_LINES) if change is not None else
                    [Text(f"    ({request.tool}: no preview available)", style="dim")])


def read_key(fd: int, allowed: str) -> str:
    """One key from `allowed` (lower-cased), or "esc" for Esc alone. Echo and line mode are off."""
    saved = termios.tcgetattr(fd)
    quiet = termios.tcgetattr(fd)
    quiet[3] &= ~(termios.ECHO | termios.ICANON)
    quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        while True:
            data = os.read(fd, 16)
            if data == b"\x1b":
                ready, _, _ = select.select([fd], [], [], 0.05)
                if not ready:
                    return "esc"
                os.read(fd, 16)                     # an arrow or another sequence: ignore it
                continue
            key = data[:1].decode("latin-1").lower()
            if key in allowed:
                return key
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


class Approver:
    """The `ask` callback the REPL gives the agent."""

    def __init__(self, console, renderer, fd: int = 0):
        self.console, self.renderer, self.fd = console, renderer, fd

    def __call__(self, request: Request) -> Answer:
        options = choices(request)
        with self.renderer.interactive():
            try:
                termios.tcflush(self.fd, termios.TCIFLUSH)     # keys typed before the question are no answer
            except termios.error:
                pass
            for line in question_lines(request, self.console.width):
                self.console.print(line, highlight=False, no_wrap=True, overflow="ellipsis")
            for key, (label, _) in options.items():
                self.console.print(Text().append(f"  {key}", style="bold cyan").append(f"  {label}"), highlight=False)
            key = read_key(self.fd, "".join(options))
            if key == "esc":
                self.console.print(Text("  → no", style="yellow"), highlight=False)
                return Answer(False)
            label, answer = options[key]
            if answer is not None:
                self.console.print(Text(f"  → {label}", style="green"), highlight=False, no_wrap=True,
                                   overflow="ellipsis")
                self.renderer.diff_shown = request.change is not None
                return answer
            reason = PromptSession().prompt("  → no. Why? (optional, Enter to skip) ")
            return Answer(False, reason=reason.strip())

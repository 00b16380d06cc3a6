"""The approval question: what a tool call will do, and the person's yes / no / always.

    ? run this command?
        npm install left-pad
      y  yes
      a  yes, and always allow `npm install` this session
      s  yes, and every command this session
      n  no, and tell the model why (Esc: just no)
      v  view the whole command in a pager, then answer

    ? apply this change to app.py?
        change +1 -1 lines; the file becomes 2 lines, 30 bytes
          2   def f():
          2 - return 1
          2 + return 2
      y  yes
      s  yes, and every file change this session
      n  no, and tell the model why (Esc: just no)
      v  view the whole change in a pager, then answer

Nothing that will run is hidden (ui/approval_view.py): blank lines are collapsed and counted, a long
command shows its head and its tail, long lines wrap with a mark, and `v` pages the whole of it
(the pager /last uses), then asks the same question again.

One key answers — a deliberate one. Whoever is typing a message while the turn runs must not answer
by accident (the "a" of "parser" once allowed `touch` for the whole session), so:
  - keys typed before the question appeared are typing, never an answer;
  - for GRACE seconds after it appears no key answers;
  - an answer key counts only after a pause in typing (no key for QUIET seconds before it) and if no
    key follows it within SETTLE seconds (else it was the start of a word).
Keys that were typing are kept for the next prompt (the KeyWatcher's typed-ahead), not lost; a line
says so once. After "n" a reason may be typed — the prompt starts empty — and goes back to the model
with the refusal; Esc is a plain no. Ctrl-C interrupts the turn: the call is not run. A file that
configures commands (approvals.configures_commands) always asks: "s" is not offered for it. The
policy itself is approvals/policy.py.
"""

from __future__ import annotations

import codecs
import os
import select
import termios
import time

from prompt_toolkit import PromptSession
from rich.text import Text

from approvals.policy import Answer, Request
from .approval_view import change_size, command_rows, full_text
from .diffview import change_lines
from .sanitize import safe, safe_line
from .keys import ESC_WAIT, quiet_attrs, take_pending
from .toolview import wrap_words

DIFF_LINES = 60
GRACE = 0.3          # seconds after the question appears when no key answers it
QUIET = 0.4          # an answer key must come after this long without a key…
SETTLE = QUIET       # …and no key may follow it this soon: keys less than QUIET apart are typing
TYPING_NOTE = "  (kept for your next message; to answer, stop typing and press a key)"


def choices(request: Request) -> dict[str, tuple[str, Answer | None]]:
    """key → (label, answer); the answer for "n" is filled in with the reason."""
    options = {"y": ("yes", Answer(True))}
    if request.kind == "mcp":
        options["a"] = (f"yes, and always allow {safe_line(request.tool, 80)} this session", Answer(True, "prefix"))
        options["n"] = ("no, and tell the model why (Esc: just no)", None)
        return options
    if request.kind == "command" and request.prefixes:
        shown = ", ".join(f"`{safe_line(p, 40)}`" for p in request.prefixes)
        options["a"] = (f"yes, and always allow {shown} this session", Answer(True, "prefix"))
    what = "every command" if request.kind == "command" else "every file change"
    if not request.sensitive:
        options["s"] = (f"yes, and {what} this session", Answer(True, "session"))
    options["n"] = ("no, and tell the model why (Esc: just no)", None)
    return options


def question_lines(request: Request, width: int) -> list[Text]:
    lines = question_body(request, width)
    if request.asker:                   # a sub-agent asks (delegation/): which one, above its question
        lines.insert(0, Text(safe_line(f"[{request.asker} asks]", max(10, width)), style="bold magenta"))
    return lines


def question_body(request: Request, width: int) -> list[Text]:
    if request.kind == "mcp":             # everything here came from the model or the server: escaped
        tool = request.tool[len("mcp__" + request.server) + 2:]
        return [Text(f"? call the MCP tool {safe_line(tool, 80)} of server {safe_line(request.server, 60)}?",
                     style="bold yellow")] + command_rows(request.command, width)[0]
    if request.kind == "command":
        lines = [Text("? run this command?", style="bold yellow")] + command_rows(request.command, width)[0]
        if request.why:                                    # a read-only command the sandbox could not take
            lines.append(Text("    " + safe_line(request.why, max(10, width - 4)), style="yellow"))
        return lines
    change = request.change
    path = safe_line(getattr(change, "path", "") or "the file")
    verb = "create" if change is not None and change.before is None else "apply this change to"
    lines = [Text(f"? {verb} {path}?", style="bold yellow")]
    if request.sensitive:
        lines += [Text("    " + line, style="yellow") for line in wrap_words(
            f"s08 asks before every change to this file: {safe_line(request.sensitive)}", max(10, width - 4))]
    return lines + ([change_size(change)] + change_lines(change, width, DIFF_LINES) if change is not None else
                    [Text(f"    ({request.tool}: no preview available)", style="dim")])


class KeyJudge:
    """Tells a deliberate answer key from typing. Pure: the times are given (see the docstring)."""

    def __init__(self, allowed: str, shown_at: float, last_key_at: float | None = None):
        self.allowed, self.shown_at = allowed, shown_at
        self.last = last_key_at if last_key_at is not None else float("-inf")
        self.pending: tuple[str, float] | None = None
        self.chunks: list[str] = []        # keys that were typing, one entry per read (Enter alone ends a line)

    @property
    def typed(self) -> str:
        return "".join(self.chunks)

    def key(self, text: str, at: float) -> None:
        """What one read brought (a key; several for a paste or an escape sequence)."""
        if self.pending is not None:       # a key right after the candidate: it began a word
            self.chunks.append(self.pending[0])
            self.pending = None
        elif (len(text) == 1 and text.lower() in self.allowed and at - self.shown_at >= GRACE
              and at - self.last >= QUIET):
            self.pending, self.last = (text, at), at
            return
        self.chunks.append(text)
        self.last = at

    def wait(self, now: float) -> float | None:
        """How long to wait for a key before `answer` can decide (None: until a key comes)."""
        return None if self.pending is None else max(0.0, self.pending[1] + SETTLE - now)

    def answer(self, now: float) -> str | None:
        if self.pending is not None and now - self.pending[1] >= SETTLE:
            return self.pending[0].lower()
        return None


def read_answer(fd: int, allowed: str, shown: float, ahead: str = "", last_key_at: float | None = None,
                on_typing=None) -> tuple[str, list[str]]:
    """(a key from `allowed`, or "esc"; what was typed instead, read by read, `ahead` — typed before the
    question was `shown` — first). Echo and line mode are off meanwhile; `on_typing()` is called once
    when typing goes on."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    saved = termios.tcgetattr(fd)
    termios.tcsetattr(fd, termios.TCSANOW, quiet_attrs(fd))
    try:
        judge = KeyJudge(allowed, shown, shown if ahead else last_key_at)
        judge.chunks = [ahead] if ahead else []
        while True:
            ready, _, _ = select.select([fd], [], [], judge.wait(time.monotonic()))
            now = time.monotonic()
            if not ready:
                got = judge.answer(now)
                if got:
                    return got, judge.chunks
                continue
            data = os.read(fd, 64)
            if data.endswith(b"\x1b") and not select.select([fd], [], [], ESC_WAIT)[0]:
                if data == b"\x1b":
                    return "esc", judge.chunks + ([judge.pending[0]] if judge.pending else [])
                data = data[:-1]                            # a lone Esc after other keys: drop it
            elif data.endswith(b"\x1b"):
                data += os.read(fd, 64)                      # the rest of an escape sequence
            text = decoder.decode(data)
            if text and on_typing is not None and not (len(text) == 1 and judge.pending is None
                                                       and text.lower() in allowed):
                on_typing()
                on_typing = None
            judge.key(text, now)
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


class Approver:
    """The `ask` callback the REPL gives the agent."""

    def __init__(self, console, renderer, fd: int = 0):
        self.console, self.renderer, self.fd = console, renderer, fd

    def _keep(self, chunks: list[str]) -> None:
        keys = getattr(self.renderer, "keys", None)
        for chunk in chunks if keys is not None else ():
            keys.keep(chunk)

    def _show(self, request: Request, options: dict) -> None:
        for line in question_lines(request, self.console.width):
            self.console.print(line, highlight=False, no_wrap=True, overflow="ellipsis")
        for key, (label, _) in options.items():
            self.console.print(Text().append(f"  {key}", style="bold cyan").append(f"  {label}"), highlight=False)
        what = {"command": "command", "mcp": "arguments"}.get(request.kind, "change")
        self.console.print(Text().append("  v", style="bold cyan").append(f"  view the whole {what} in a pager, "
                                                                          "then answer"), highlight=False)

    def _page(self, request: Request) -> None:
        """The whole command or change in the pager (/last's), then back to the same question."""
        with self.console.pager(styles=False):
            self.console.print(Text(safe(full_text(request))), highlight=False, markup=False)

    def __call__(self, request: Request) -> Answer:
        options = choices(request)
        keys = getattr(self.renderer, "keys", None)
        with self.renderer.interactive():
            ahead, shown = codecs.decode(take_pending(self.fd), "utf-8", "replace"), time.monotonic()
            self._show(request, options)
            typed: list[str] = []
            try:
                while True:
                    key, more = read_answer(self.fd, "".join(options) + "v", shown, ahead,
                                            getattr(keys, "last_key_at", None),
                                            lambda: self.console.print(Text(TYPING_NOTE, style="dim"),
                                                                       highlight=False))
                    typed += more
                    if key != "v":
                        break
                    self._page(request)
                    self.console.print(Text("  (back to the question)", style="dim"), highlight=False)
                    self._show(request, options)
                    ahead, shown = "", time.monotonic()
            except KeyboardInterrupt:
                self._keep([ahead])
                raise
            finally:
                self._keep(typed)
            if key == "esc":
                self.console.print(Text("  → no", style="yellow"), highlight=False)
                return Answer(False)
            label, answer = options[key]
            if answer is not None:
                self.console.print(Text(f"  → {label}", style="green"), highlight=False, no_wrap=True,
                                   overflow="ellipsis")
                self.renderer.diff_shown = request.change is not None
                return answer
            self._keep([codecs.decode(take_pending(self.fd), "utf-8", "replace")])    # the reason starts empty
            reason = PromptSession().prompt("  → no. Why? (optional, Enter to skip) ")
            return Answer(False, reason=reason.strip())

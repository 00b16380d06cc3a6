"""The interactive `s08 >>` loop: prompt_toolkit input (history, multi-line, slash-command and @path completion,
pastes folded to `[pasted N lines]`, Shift-Tab for the approval mode, Ctrl-O for the sub-agents' steps
as /tasks shows them, what was typed kept), then one turn at a time with
the keyboard watched (Esc interrupts, typing ahead is kept for the next prompt).

Ctrl-C at the prompt clears the line (at an empty one it says once how to leave); Ctrl-D, /quit,
exit or q leave, with the session's id and how to resume it.
"""

from __future__ import annotations

import asyncio
import re
import signal
import threading
import traceback
from contextlib import contextmanager
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import Completer, Completion, merge_completers
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.styles import Style
from rich.console import Console
from rich.text import Text

from commands import QUIT, dispatch, help_entries
from events import Interrupted, Notice
from storage import private_file
from .approve import Approver
from .keys import KeyWatcher
from .mention_complete import MentionCompleter
from .onboarding import first_run, make_ask
from .render import Renderer
from .sanitize import safe, safe_line
from .sessions_view import print_banner

PROMPT = "s08 >> "
PASTE_FOLD_LINES = 5               # a paste of more lines than this shows as [pasted N lines #k]
PASTE_MARK = re.compile(r"\[pasted \d+ lines #(\d+)\]")


class SlashCompleter(Completer):
    def __init__(self, commands: dict[str, str]):
        self.commands = commands

    def get_completions(self, document, complete_event):
        text = document.text_before_cursor
        if not text.startswith("/") or " " in text:
            return
        for name, help_text in self.commands.items():
            if name.startswith(text):
                yield Completion(name, start_position=-len(text), display_meta=help_text)


class Pastes:
    """Long pastes, kept aside while the input shows a one-line mark for each."""

    def __init__(self):
        self.texts: dict[str, str] = {}

    def fold(self, text: str) -> str:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        if lines <= PASTE_FOLD_LINES:
            return text
        key = str(len(self.texts) + 1)
        self.texts[key] = text
        return f"[pasted {lines} lines #{key}]"

    def starts(self, text: str) -> bool:
        """The input begins with a folded paste: what it holds is text for the model, never a `!` or `/`
        command (the person saw only the mark, not the `!rm …` inside)."""
        found = PASTE_MARK.match(text.lstrip())
        return found is not None and found.group(1) in self.texts

    def expand(self, text: str) -> str:
        return PASTE_MARK.sub(lambda m: self.texts.get(m.group(1), m.group(0)), text)


class _History(FileHistory):
    """Input history that keeps no blank entries, and keeps pastes whole (not their marks)."""

    def __init__(self, path: str, pastes: Pastes):
        super().__init__(path)
        self.pastes = pastes

    def store_string(self, string: str) -> None:
        if string.strip():
            super().store_string(self.pastes.expand(string))


def _history(path_text: str, console: Console, pastes: Pastes):
    path = Path(path_text).expanduser()
    try:
        private_file(path)                         # created owner-only, like every file s08 keeps
        return _History(str(path), pastes)
    except OSError as exc:
        console.print(Text(f"input history not saved ({safe_line(path)}: {exc.strerror})", style="yellow"))
        return InMemoryHistory()


def _key_bindings(app, pastes: Pastes, state: dict) -> KeyBindings:
    kb = KeyBindings()

    @kb.add("escape", "enter")
    def _newline(event):
        event.current_buffer.insert_text("\n")

    @kb.add(Keys.BracketedPaste)
    def _paste(event):
        event.current_buffer.insert_text(pastes.fold(event.data))

    @kb.add(Keys.BackTab)
    def _cycle_mode(event):
        app.approvals.cycle()
        event.app.invalidate()

    @kb.add("c-o")
    def _tasks(event):
        state["tasks"], state["kept"] = True, event.current_buffer.text
        event.app.exit(result="")

    @kb.add("c-c")
    def _cancel(event):
        state["empty"] = not event.current_buffer.text
        event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    return kb


def _continuation(width: int, line_number: int, wrap_count: int) -> str:
    """A new line of the input is marked; a long line wrapped by the terminal is not."""
    return " " * width if wrap_count else ".. ".rjust(width)


def _mode_hint(app):
    mode, preparing = app.approvals.mode, app.agent.compactor.background.status()
    hint = [] if mode == "default" else [("class:mode", f"approvals: {safe_line(mode)} (shift-tab)")]
    return hint + ([("class:mode", "  ")] if hint and preparing else []) + ([("class:preparing", preparing)]
                                                                          if preparing else [])


def _warm_model(app):
    """For the first prompt: once it is on screen, build the model's HTTP client in the background
    while the person types, so the first answer does not wait for it. Never delays the prompt (it
    starts after the first drawing); sends nothing."""
    warm = getattr(app.agent.provider, "warm", None)
    if warm is None:
        return None
    start = threading.Thread(target=warm, name="warm-model", daemon=True).start

    def after_drawing() -> None:
        try:
            asyncio.get_running_loop().call_soon(start)
        except RuntimeError:                        # no loop running (another prompt_toolkit): start now
            start()
    return after_drawing


@contextmanager
def _between_prompts():
    """Ctrl-C ignored while s08 prints between two prompts. The terminal is not raw there, so a
    Ctrl-C comes as SIGINT, and a KeyboardInterrupt inside rich's print, after its write but before it
    empties its buffer, printed the same text again with the next print. There is nothing to
    interrupt there; the prompt and the turn take Ctrl-C as before."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:                     # not the main thread: nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_repl(app, debug: bool = False) -> int:
    """The interactive loop. Returns the exit status (0 for Ctrl-D, /quit, exit, q)."""
    console = Console(highlight=False, emoji=False)
    keys = KeyWatcher()
    renderer = Renderer(console, keys, app.workspace)
    app.set_emit(renderer)
    renderer.activity.aside = lambda: app.agent.compactor.background.status()
    app.set_asker(Approver(console, renderer))
    app.ask = make_ask(console, renderer)
    print_banner(console, app)
    app.settle_endpoint()                  # an endpoint from this folder's .env: ask before any request
    if app.hooks:
        app.start_hooks()                  # a project's hooks asked about; SessionStart
    if app.access.first_run and not app.access.pins.has_credentials and app.access.demo_choice != "on":
        first_run(app)
    pastes, state, hinted, warm = Pastes(), {"empty": False}, False, _warm_model(app)
    session = PromptSession(history=_history(app.settings.s08_history_file, console, pastes),
                            auto_suggest=AutoSuggestFromHistory(), completer=merge_completers(
                                [SlashCompleter(dict(help_entries(app))), MentionCompleter(app.workspace)]),
                            complete_while_typing=True, key_bindings=_key_bindings(app, pastes, state),
                            style=Style.from_dict({"prompt": "ansicyan bold", "mode": "ansiyellow",
                                                   "preparing": "ansibrightblack"}),
                            prompt_continuation=_continuation, rprompt=lambda: _mode_hint(app), refresh_interval=1)
    while True:
        try:        # a Ctrl-C in the instant between the parts below comes as SIGINT: ignored
            with _between_prompts():
                lines, rest = keys.take_typed()
            # typed ahead, Enter included, waits in the input to be edited and sent: a key pressed
            # as a question appeared is never sent by itself
            default = "\n".join([*lines, rest] if rest else lines)
            kept, state["kept"] = state.get("kept", ""), ""
            default = "\n".join(x for x in (kept, default) if x)
            try:
                pre_run, warm = warm, None          # the first prompt only, even if Ctrl-C ends it
                typed = session.prompt([("class:prompt", PROMPT)], default=default, pre_run=pre_run)
                text = pastes.expand(typed)
                if state.pop("tasks", False):          # Ctrl-O: /tasks, and the line comes back after it
                    typed = text = "/tasks"
            except KeyboardInterrupt:
                if state["empty"] and not hinted:
                    with _between_prompts():
                        console.print(Text("Ctrl-D or /quit to exit", style="dim"))
                    hinted = True
                continue
            except EOFError:
                break
            try:
                with keys:
                    if dispatch(app, text, message=pastes.starts(typed)) == QUIT:
                        break
            except KeyboardInterrupt:
                with _between_prompts():
                    renderer(Interrupted())
            except Exception as exc:  # a bug must not end the session
                renderer(Notice(f"internal error: {type(exc).__name__}: {exc}"
                                + ("" if debug else " (run with --debug for details)"), "error"))
                if debug:
                    console.print(Text(safe(traceback.format_exc())), highlight=False)
        except KeyboardInterrupt:
            pass
        with _between_prompts():
            renderer.finish()
    renderer.finish()
    app.end_reason = "prompt_input_exit"
    hint = app.resume_hint()
    if hint:
        console.print(Text(hint, style="dim"), highlight=False)
    return 0


"""The interactive `s08 >>` loop: prompt_toolkit input (history, multi-line, slash-command completion,
Ctrl-C clears the line, Ctrl-D leaves), the banner, the resumed-session view and the session picker.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.styles import Style
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from events import Interrupted, Notice
from history import blocks
from redact import redact_url
from storage import private_file
from .onboarding import first_run, make_ask, print_demo_banner
from .render import Renderer, summarize_input

PROMPT = "s08 >> "


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


class _History(FileHistory):
    """Input history that does not keep blank entries."""

    def store_string(self, string: str) -> None:
        if string.strip():
            super().store_string(string)


def _history(path_text: str, console: Console):
    path = Path(path_text).expanduser()
    try:
        private_file(path)                         # created owner-only, like every file s08 keeps
        return _History(str(path))
    except OSError as exc:
        console.print(f"[yellow]input history not saved ({path}: {exc.strerror})[/yellow]")
        return InMemoryHistory()


def _key_bindings() -> KeyBindings:
    kb = KeyBindings()

    @kb.add("escape", "enter")
    def _newline(event):
        event.current_buffer.insert_text("\n")

    return kb


def print_banner(console: Console, app) -> None:
    s = app.settings
    console.print("[bold cyan]s08[/bold cyan] — a coding agent that compacts its own context")
    model = escape(s.model_id) + (" [yellow](offline demo, scripted replies)[/yellow]" if app.demo else "")
    endpoint = "built-in (offline)" if app.demo else escape(redact_url(s.base_url))
    console.print(f"[dim]model[/dim] {model}  [dim]workspace[/dim] {escape(str(app.workspace))}  "
                  f"[dim]endpoint[/dim] {endpoint}")
    console.print("[dim]Enter sends · Alt-Enter (or Esc Enter) adds a line · /help for commands · "
                  "Ctrl-C cancels · Ctrl-D exits[/dim]")
    for warning in app.warnings:
        console.print(f"[yellow]{escape(warning)}[/yellow]")
    if app.demo:
        print_demo_banner(console, app)
    elif not s.has_credentials and not app.access.needs_consent:
        console.print(f"[yellow]{escape(app.missing_key_message())}[/yellow]")
    if app.resumed is not None:
        show_resumed(console, app.resumed, app.messages)


def _one_line(text: str, width: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def show_resumed(console: Console, loaded, messages: list[dict], exchanges: int = 3) -> None:
    """The resume notice and the last few exchanges, so the person sees where they left off."""
    console.print(f"[green]resumed session {escape(loaded.id)} ({len(messages)} messages)[/green]")
    for notice in loaded.notices:
        console.print(f"[yellow]{escape(notice)}[/yellow]")
    typed = {e.text for e in loaded.continuity.typed.entries}
    starts = [i for i, m in enumerate(messages) if m["role"] == "user" and any(
        b.get("type") == "text" for b in blocks(m))]
    for m in messages[starts[-exchanges] if len(starts) >= exchanges else 0:]:
        for b in blocks(m):
            if b.get("type") == "text" and m["role"] == "user" and b.get("text") not in typed:
                continue          # compaction's and the stop marks' own text is not what you typed
            if b.get("type") == "text" and m["role"] == "user":
                console.print(Text("you › ", style="bold") + Text(_one_line(b["text"])))
            elif b.get("type") == "text":
                console.print(Text("s08 › ", style="bold cyan") + Text(_one_line(b["text"])))
            elif b.get("type") == "tool_use":
                console.print(Text(f"  ● {b['name']}  {summarize_input(b['name'], b.get('input'))}", style="dim"))
    console.print(Text("─" * 40, style="dim"))


def pick_session(paths: list[Path], most: int = 10):
    """Ask which session to resume; returns its path or None."""
    from session import load_session
    console = Console(highlight=False)
    console.print("[bold]Sessions in this workspace[/bold] (newest first):")
    shown = paths[:most]
    for n, path in enumerate(shown, 1):
        try:
            loaded = load_session(path)
            typed = loaded.continuity.typed.entries
            first = _one_line(typed[0].text if typed else "(empty)", 70)
            count = f"{len(loaded.messages):>4} messages"
        except (OSError, ValueError) as exc:
            first, count = f"(unreadable: {exc})", ""
        console.print(f"  [cyan]{n:>2}[/cyan]  {escape(path.stem)}  {count}  {escape(first)}")
    try:
        answer = input(f"Resume which one? [1-{len(shown)}, Enter = 1, q = quit] ").strip().lower()
    except (EOFError, KeyboardInterrupt):
        return None
    if answer in ("q", "quit"):
        return None
    if not answer:
        return shown[0]
    if answer.isdigit() and 1 <= int(answer) <= len(shown):
        return shown[int(answer) - 1]
    console.print("[yellow]not a number from the list[/yellow]")
    return None


def run_repl(app, debug: bool = False) -> int:
    """The interactive loop. Returns the exit status (0 for Ctrl-D, /quit, exit, q)."""
    console = Console(highlight=False, emoji=False)
    renderer = Renderer(console)
    app.set_emit(renderer)
    app.ask = make_ask(console, renderer)
    print_banner(console, app)
    app.settle_endpoint()                  # an endpoint from this folder's .env: ask before any request
    if app.access.first_run and not app.access.pins.has_credentials and app.access.demo_choice != "on":
        first_run(app)
    commands = app.commands()
    session = PromptSession(history=_history(app.settings.s08_history_file, console),
                            auto_suggest=AutoSuggestFromHistory(), completer=SlashCompleter(
                                {name: help_text for name, (help_text, _) in commands.items()}),
                            complete_while_typing=True, key_bindings=_key_bindings(),
                            style=Style.from_dict({"prompt": "ansicyan bold"}),
                            prompt_continuation="    .. ")
    while True:
        try:
            text = session.prompt([("class:prompt", PROMPT)])
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        try:
            if app.dispatch(text) == app.QUIT:
                return 0
        except KeyboardInterrupt:
            renderer(Interrupted())
        except Exception as exc:  # a bug must not end the session
            renderer(Notice(f"internal error: {type(exc).__name__}: {exc}"
                            + ("" if debug else " (run with --debug for details)"), "error"))
            if debug:
                console.print(traceback.format_exc(), markup=False)
        renderer.finish()


def print_help(app) -> None:
    console = Console(highlight=False)
    console.print("[bold]Commands[/bold]")
    for name, (help_text, _) in app.commands().items():
        console.print(f"  [cyan]{name:<10}[/cyan] {escape(help_text)}")
    console.print("  [cyan]exit, q[/cyan]    leave (as do Ctrl-D and /quit)")
    console.print("[bold]Keys[/bold]  Enter sends · Alt-Enter / Esc Enter newline · ↑ history · "
                  "Tab completes commands · Ctrl-C cancels the turn or clears the line · Ctrl-D exits")

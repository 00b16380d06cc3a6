"""Everything a person sees or types: the rich renderer of events and the prompt_toolkit REPL.

No other module imports rich or prompt_toolkit. `Renderer` turns events into
screen output (spinner until the first token, streamed text, `● bash …`
tool lines, `[interrupted]`, compaction events). `QuietRenderer` is the
script-friendly variant for `-p` and piped input: progress on stderr, answers
on stdout. `run_repl` is the interactive `s08 >>` loop with history,
multi-line input, slash-command completion, Ctrl-C and Ctrl-D.
"""

from __future__ import annotations

import re
import sys
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

from compaction.boundaries import is_generated
from costs import READ_FACTOR, WRITE_FACTOR
from events import (Compaction, ContextReport, CostReport, Interrupted, Notice, RequestStarted, ResponseDone,
                    Retrying, TextDelta, ToolFinished, ToolStarted, TurnStatus)

PROMPT = "s08 >> "
NOTICE_STYLES = {"info": "dim", "warning": "yellow", "error": "bold red"}
COMPACTION_STYLE = "magenta"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def safe(text: str) -> str:
    """Text with terminal control characters made visible (^[ for ESC), so neither the model nor a
    tool's output can move the cursor, clear the screen or retitle the terminal."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(lambda m: "^" + chr(ord(m.group()) ^ 0x40), text)


def summarize_input(name: str, args) -> str:
    """One short line describing a tool call's arguments."""
    if not isinstance(args, dict):
        return ""
    if name == "bash":
        command = str(args.get("command", ""))
        first = command.splitlines()[0] if command else ""
        return first[:100] + (" …" if len(first) > 100 or "\n" in command else "")
    if "path" in args:
        extra = "".join(f" {k}={args[k]}" for k in ("offset", "limit") if k in args)
        if name == "write_file":
            extra = f" ({len(str(args.get('content', '')).splitlines())} lines)"
        return f"{args['path']}{extra}"
    return " ".join(f"{k}={str(v)[:40]}" for k, v in args.items())


def summarize_output(content: str) -> str:
    lines = content.strip().splitlines() or ["(no output)"]
    if len(lines) > 1 and re.fullmatch(r"\[exit code \d+\]", lines[-1]):
        lines.pop()                      # the bash trailer is not part of the output
    first = lines[0][:100]
    return first if len(lines) == 1 else f"{first}  … ({len(lines)} lines)"


def seconds(delay: float) -> str:
    return f"{delay:.1f}s" if delay < 10 else f"{delay:.0f}s"


PART_STYLES = {"system": "blue", "tools": "cyan", "messages": "green", "tool results": "yellow"}
BAR_WIDTH = 60


def status_line(event: TurnStatus) -> str:
    if not event.caching:
        hit = "cache off"
    else:
        hit = "turn cache hit " + ("—" if event.hit_rate is None else f"{event.hit_rate:.0%}")
    cost = "unknown (MODEL_PRICE)" if event.cost is None else f"${event.cost:.4f}"
    return f"context {event.context:,}/{event.limit:,} · {hit} · session {cost}"


def context_report(event: ContextReport, width: int = BAR_WIDTH) -> Text:
    """A bar of the prompt by part against the window, with | at CONTEXT_LIMIT, and a legend. System
    and tools are estimates; the conversation's parts are scaled so the whole is the measured total."""
    width = max(10, min(BAR_WIDTH, width))
    parts = dict(event.parts)
    fixed = parts["system"] + parts["tools"]
    talk = parts["messages"] + parts["tool results"]
    scale = max(0, event.total - fixed) / talk if talk else 0
    parts["messages"], parts["tool results"] = round(parts["messages"] * scale), round(parts["tool results"] * scale)
    span = min(event.window, max(2 * event.limit, event.total))    # enough room to see the limit clearly
    out = Text(f"context {event.total:,} tokens · compaction at {event.limit:,} (CONTEXT_LIMIT) · "
               f"window {event.window:,} · the bar spans {span:,}\n")
    bar, used, running = Text("["), 0, 0
    for name, tokens in parts.items():
        running += tokens
        end = min(width, round(running / span * width))     # cumulative, so the cells add up to the total
        bar.append("█" * (end - used), style=PART_STYLES[name])
        used = max(used, end)
    limit_at = min(width - 1, round(event.limit / span * width))
    for cell in range(used, width):
        bar.append("|" if cell == limit_at else "·", style="red" if cell == limit_at else "dim")
    out.append(bar.append("]\n"))
    for name, tokens in parts.items():
        out.append("■ ", style=PART_STYLES[name]).append(f"{name} {tokens:,}  ")
    if event.total > event.limit:
        out.append(f"· over CONTEXT_LIMIT: compaction runs before the next call", style="yellow")
    else:
        out.append(f"· {event.limit - event.total:,} free before compaction", style="dim")
    return out


def cost_report(event: CostReport) -> Text:
    """The session's tokens, what they bill as (input-token equivalents) and what they cost."""
    t, price = event.tally, event.price
    per = f"${price[0]:g} / ${price[1]:g} per million input / output tokens" if price else \
        "price unknown: set MODEL_PRICE=input,output (USD per million tokens)"
    out = Text(f"session cost — {event.model} ({per})\n", style="bold")
    out.append(f"{'':16}{'tokens':>12}{'billed as':>14}{'USD':>10}\n", style="dim")
    rows = [("uncached input", t.uncached, t.uncached), ("cache writes", t.writes, t.writes * WRITE_FACTOR),
            ("cache reads", t.reads, t.reads * READ_FACTOR), ("output", t.output, None)]
    for name, tokens, billed in rows:
        usd = None if not price else (billed * price[0] if billed is not None else tokens * price[1]) / 1e6
        out.append(f"{name:16}{tokens:>12,}{'' if billed is None else f'{billed:,.0f}':>14}"
                   f"{'?' if usd is None else f'{usd:.4f}':>10}\n")
    total = t.dollars(price)
    out.append(f"{'total':16}{'':>12}{t.billed_input:>14,.0f}{'?' if total is None else f'{total:.4f}':>10}\n",
               style="bold")
    hit = "—" if t.hit_rate is None else f"{t.hit_rate:.0%}"
    out.append(f"{t.calls} model calls ({t.summary_calls} summaries) · cache hit rate {hit}", style="dim")
    return out


class Renderer:
    """Interactive output: one instance is the `emit` callable of the agent."""

    def __init__(self, console: Console):
        self.console, self.status, self.at_line_start = console, None, True

    def _spin(self, label: str) -> None:
        self._stop()
        self.status = self.console.status(f"[dim]{label}[/dim]", spinner="dots")
        self.status.start()

    def _stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def _line(self, text, style: str | None = None) -> None:
        self._stop()
        if not self.at_line_start:
            self.console.print()
        self.console.print(safe(text) if isinstance(text, str) else text, style=style, markup=False,
                           highlight=False)       # wrapped at word boundaries, unlike streamed text
        self.at_line_start = True

    def __call__(self, event) -> None:
        if isinstance(event, RequestStarted):
            self._stop()
            if not self.at_line_start:
                self.console.print()
                self.at_line_start = True
            self._spin("summarizing…" if event.purpose == "summary" else "thinking…")
        elif isinstance(event, TextDelta):
            self._stop()
            self.console.print(Text(safe(event.text)), end="", soft_wrap=True, highlight=False)
            self.at_line_start = event.text.endswith("\n")
        elif isinstance(event, ResponseDone):
            self._stop()
            if not self.at_line_start:
                self.console.print()
                self.at_line_start = True
        elif isinstance(event, ToolStarted):
            line = Text("● ", style="cyan")
            line.append(event.name, style="bold cyan").append(f"  {safe(summarize_input(event.name, event.input))}")
            self._line(line)
            self._spin(f"running {event.name}…")
        elif isinstance(event, ToolFinished):
            style = "red" if event.is_error else "dim"
            self._line(Text(f"  ⎿ {safe(summarize_output(event.content))}  ({event.seconds:.1f}s)", style=style))
        elif isinstance(event, Retrying):
            self._line(f"[retrying in {seconds(event.delay)}: {event.reason} ({event.attempt}/{event.max_attempts})]",
                       "yellow")
        elif isinstance(event, Notice):
            self._line(event.text, NOTICE_STYLES.get(event.kind, "dim"))
        elif isinstance(event, Interrupted):
            if self.at_line_start and self.console.is_terminal:
                self._stop()
                self.console.file.write("\r")    # over the "^C" the terminal echoed
            self._line("[interrupted]", "bold red")
        elif isinstance(event, Compaction):
            self._line(f"[{event.layer}] {event.message}" if not event.message.startswith("[")
                       else event.message, COMPACTION_STYLE)
        elif isinstance(event, TurnStatus):
            self._line(status_line(event), "dim")
        elif isinstance(event, ContextReport):
            self._line(context_report(event, self.console.width - 2))
        elif isinstance(event, CostReport):
            self._line(cost_report(event))

    def finish(self) -> None:
        self._stop()
        if not self.at_line_start:
            self.console.print()
            self.at_line_start = True


class QuietRenderer:
    """For -p and piped input: answers go to stdout by the caller; progress and errors to stderr."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream

    def __call__(self, event) -> None:
        line = None
        if isinstance(event, ToolStarted):
            line = f"● {event.name} {summarize_input(event.name, event.input)}"
        elif isinstance(event, Retrying):
            line = f"[retrying in {seconds(event.delay)}: {event.reason} ({event.attempt}/{event.max_attempts})]"
        elif isinstance(event, Notice):
            line = event.text
        elif isinstance(event, Interrupted):
            line = "[interrupted]"
        elif isinstance(event, Compaction):
            line = event.message if event.message.startswith("[") else f"[{event.layer}] {event.message}"
        elif isinstance(event, TurnStatus):
            line = status_line(event)
        elif isinstance(event, (ContextReport, CostReport)):
            line = (context_report if isinstance(event, ContextReport) else cost_report)(event).plain
        if line:
            print(line, file=self.stream, flush=True)

    def finish(self) -> None:
        pass


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
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
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
    console.print(f"[dim]model[/dim] {escape(s.model_id)}  [dim]workspace[/dim] {escape(str(app.workspace))}  "
                  f"[dim]endpoint[/dim] {escape(s.base_url)}")
    console.print("[dim]Enter sends · Alt-Enter (or Esc Enter) adds a line · /help for commands · "
                  "Ctrl-C cancels · Ctrl-D exits[/dim]")
    for warning in app.warnings:
        console.print(f"[yellow]{escape(warning)}[/yellow]")
    if not s.has_credentials:
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
    starts = [i for i, m in enumerate(messages) if m["role"] == "user" and any(
        b.get("type") == "text" for b in _blocks(m))]
    for m in messages[starts[-exchanges] if len(starts) >= exchanges else 0:]:
        for b in _blocks(m):
            if b.get("type") == "text" and m["role"] == "user" and is_generated(b.get("text", "")):
                continue          # compaction's and the stop marks' own text is not what you typed
            if b.get("type") == "text" and m["role"] == "user":
                console.print(Text("you › ", style="bold") + Text(_one_line(b["text"])))
            elif b.get("type") == "text":
                console.print(Text("s08 › ", style="bold cyan") + Text(_one_line(b["text"])))
            elif b.get("type") == "tool_use":
                console.print(Text(f"  ● {b['name']}  {summarize_input(b['name'], b.get('input'))}", style="dim"))
    console.print(Text("─" * 40, style="dim"))


def _blocks(message: dict) -> list[dict]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def pick_session(paths: list[Path], most: int = 10):
    """Ask which session to resume; returns its path or None."""
    from session import load_session
    from compaction import first_request
    console = Console(highlight=False)
    console.print("[bold]Sessions in this workspace[/bold] (newest first):")
    shown = paths[:most]
    for n, path in enumerate(shown, 1):
        try:
            loaded = load_session(path)
            first = _one_line(first_request(loaded.messages) or "(empty)", 70)
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
    print_banner(console, app)
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

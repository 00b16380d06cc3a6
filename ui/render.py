"""The renderers: events → what a person sees.

`Renderer` is the interactive one (spinner until the first token, streamed
text, `● bash …` tool lines, `[interrupted]`, compaction events, the status
line, /context and /cost). `QuietRenderer` is the script-friendly variant for
`-p` and piped input: progress on stderr (answers go to stdout by the caller).
Control characters in model or tool text are made visible, never obeyed.
"""

from __future__ import annotations

import re
import sys

from rich.console import Console
from rich.text import Text

from compaction.tokens import estimate_text
from costs import READ_FACTOR, WRITE_FACTOR
from events import (Compaction, ContextReport, CostReport, Interrupted, MemoryReport, Notice, RequestStarted,
                    ResponseDone, Retrying, TextDelta, ToolFinished, ToolStarted, TurnStatus)

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


PART_STYLES = {"system": "blue", "instructions": "magenta", "tools": "cyan", "messages": "green",
               "tool results": "yellow"}
BAR_WIDTH = 60


def status_line(event: TurnStatus) -> str:
    if not event.caching:
        hit = "cache off"
    else:
        hit = "turn cache hit " + ("—" if event.hit_rate is None else f"{event.hit_rate:.0%}")
    if event.demo:
        return (f"offline demo model (scripted replies; /login for a real one) · "
                f"context {event.context:,}/{event.limit:,} · {hit}")
    cost = "unknown (MODEL_PRICE)" if event.cost is None else f"${event.cost:.4f}"
    return f"context {event.context:,}/{event.limit:,} · {hit} · session {cost}"


def context_report(event: ContextReport, width: int = BAR_WIDTH) -> Text:
    """A bar of the prompt by part against the window, with | at CONTEXT_LIMIT, and a legend. System
    and tools are estimates; the conversation's parts are scaled so the whole is the measured total."""
    width = max(10, min(BAR_WIDTH, width))
    parts = {name: tokens for name, tokens in event.parts.items() if tokens or name != "instructions"}
    fixed = sum(tokens for name, tokens in parts.items() if name not in ("messages", "tool results"))
    talk = parts["messages"] + parts["tool results"]
    scale = max(0, event.total - fixed) / talk if talk else 0
    parts["messages"], parts["tool results"] = round(parts["messages"] * scale), round(parts["tool results"] * scale)
    span = min(event.window, max(2 * event.limit, event.total))    # enough room to see the limit clearly
    learned = event.window_source != "CONTEXT_WINDOW"
    out = Text(f"context {event.total:,} tokens · compaction at {event.limit:,} "
               f"({'75% of the window' if learned else 'CONTEXT_LIMIT'}) · window {event.window:,} "
               f"({event.window_source}) · the bar spans {span:,}\n")
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
        out.append("· over CONTEXT_LIMIT: compaction runs before the next call", style="yellow")
    else:
        out.append(f"· {event.limit - event.total:,} free before compaction", style="dim")
    return out


def counted(n: int, noun: str) -> str:
    """1 file, 2 files."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def memory_report(event: MemoryReport) -> Text:
    """What survives every compaction: the project instructions, the person's messages, the ledger."""
    ins = event.instructions
    out = Text("What s08 keeps through every compaction\n", style="bold")
    if ins.path is None:
        out.append("project instructions: none (put standing rules in AGENTS.md in the workspace root)\n")
    else:
        out.append(f"project instructions: {ins.path.name} ({ins.size:,} bytes, ~{estimate_text(ins.text):,} tokens)"
                   " in the system prompt, re-read when it changes\n")
        if ins.warning:
            out.append(f"  {safe(ins.warning)}\n", style="yellow")
    tokens = sum(estimate_text(t) for t in event.typed)
    out.append(f"your messages: {len(event.typed)} ({counted(tokens, 'token')}), kept verbatim up to "
               f"{event.typed_budget:,} tokens (newest first; older ones shortened)\n")
    ledger = event.ledger
    outputs = sum(w == "output" for w, _ in ledger.saved.values())
    out.append(f"work ledger: {counted(len(ledger.files), 'file')}, {counted(ledger.command_count, 'command')}, "
               f"{counted(len(ledger.transcripts()), 'transcript')}, {counted(outputs, 'saved output')} "
               f"(~{estimate_text(event.ledger_text):,} of {event.ledger_budget:,} tokens)")
    if event.ledger_text:
        out.append("\n" + safe(event.ledger_text), style="dim")
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
        elif isinstance(event, MemoryReport):
            self._line(memory_report(event))

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
        elif isinstance(event, (ContextReport, CostReport, MemoryReport)):
            line = {ContextReport: context_report, CostReport: cost_report,
                    MemoryReport: memory_report}[type(event)](event).plain
        if line:
            print(line, file=self.stream, flush=True)

    def finish(self) -> None:
        pass



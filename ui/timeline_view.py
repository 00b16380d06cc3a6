"""The inspector in the terminal: `s08 sessions`, `s08 inspect [ID] [--event N]`, `/timeline [N]`.

    session_table(console, rows)            one line per session: id, age, requests, compactions, size
    timeline_view(console, timeline)        one row per model request — the context as a bar against
                                            the limit, the cache hit, the cost — and the compaction
                                            events in place (layer, trigger, before → after, the file),
                                            and a row per sub-agent where it started (its own requests,
                                            peak context, compactions, cost, how it ended)
    event_view(console, detail)             one event: its transcript's header and messages, readably,
                                            or the summary that replaced the history

Everything shown comes from logs and files the model may have written: every value goes through
`safe` / `safe_line` and into `Text`, never into markup.
"""

from __future__ import annotations

import json

from rich.console import Console
from rich.text import Text

from messages import blocks
from .sanitize import safe, safe_line
from .sessions_view import age
from .toolview import summarize_input

BAR = 32
RESULT_LINES = 6
MESSAGE_LINES = 12


def _money(value) -> str:
    return "?" if value is None else f"${value:,.4f}"


def bar(tokens: int, limit: int, width: int = BAR) -> Text:
    """The context against the limit: filled cells, the rest dim; past the limit in red."""
    share = tokens / limit if limit else 0.0
    filled = min(width, round(share * width))
    style = "red" if share > 1 else "yellow" if share > 0.8 else "green"
    return Text("█" * filled, style=style).append("░" * (width - filled), style="dim").append(
        "│" if share <= 1 else "▶", style="red" if share > 1 else "dim")


def session_table(console: Console, rows: list[dict]) -> None:
    """rows: {"id", "mtime", "requests", "events", "bytes", "cost", "running", "first"}."""
    if not rows:
        console.print(Text("no saved sessions in this workspace", style="dim"))
        return
    console.print(Text(f"{'session':<24} {'last used':<12} {'requests':>8} {'compactions':>11} {'on disk':>9}"
                       f" {'cost':>10}", style="bold"))
    import time
    for r in rows:
        line = Text(f"{safe_line(r['id'], 24):<24} ", style="cyan")
        line.append(f"{age(time.time() - r['mtime']):<12} {r['requests']:>8} {r['events']:>11} "
                    f"{size(r['bytes']):>9} {_money(r['cost']):>10}")
        if r.get("running"):
            line.append("  running", style="yellow")
        if r.get("first"):
            line.append("  " + safe_line(r["first"], max(10, console.width - 82)), style="dim")
        console.print(line, no_wrap=True, overflow="ellipsis")
    console.print(Text("s08 inspect ID shows one (--html FILE writes a chart); s08 clean removes old ones",
                       style="dim"))


def size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _event_line(e) -> Text:
    line = Text(f"      ◆ {e.n:<3}", style="magenta").append(f"{safe_line(e.layer, 20)}", style="bold magenta")
    if e.kind and e.kind not in e.layer:
        line.append(f" ({safe_line(e.kind, 12)})", style="magenta")
    if e.trigger:
        line.append(f"  {safe_line(e.trigger, 50)}")
    if e.before is not None and e.after_tokens is not None:
        line.append(f"  {e.before:,} → {e.after_tokens:,} tokens", style="bold")
    elif e.text:
        line.append(f"  {safe_line(e.text.split(' → ')[0], 60)}")
    if e.path:
        line.append(f"  {safe_line(e.path, 80)}", style="dim")
    elif e.paths:
        line.append(f"  {safe_line(e.paths[0], 80)}" + (f" +{len(e.paths) - 1}" if len(e.paths) > 1 else ""),
                    style="dim")
    return line


def _count(value, one: str) -> str:
    return f"? {one}s" if value is None else f"{value:,} {one}{'' if value == 1 else 's'}"


def child_line(c) -> Text:
    """A sub-agent beside the main line: it ran from this request's tool call, in a context of its own."""
    line = Text(f"      ↳ task {c.n:<3}", style="blue").append(safe_line(c.agent or "?", 20), style="bold blue")
    line.append(f"  {safe_line(c.description, 50)}")
    line.append(f"  {_count(c.requests, 'request')} · peak {'?' if c.peak is None else f'{c.peak:,}'} tokens · "
                f"{_count(c.compactions, 'compaction')} · {_money(c.cost)}", style="bold")
    if c.seconds is not None:
        line.append(f" · {c.seconds:,.1f}s")
    ok = c.status == "done"
    line.append(f"  {safe_line(c.status, 20)}" + ("" if c.reported else " (no report: the session stopped)"),
                style="green" if ok else "yellow")
    if c.transcript:
        line.append(f"  {safe_line(c.transcript, 80)}", style="dim")
    return line


def timeline_view(console: Console, timeline) -> None:
    t = timeline
    head = Text("session ", style="dim").append(safe_line(t.id, 40), style="bold cyan")
    head.append("  cost ", style="dim").append(_money(t.cost))
    head.append("  requests ", style="dim").append(str(len(t.requests)))
    head.append("  compactions ", style="dim").append(str(len(t.events)))
    if t.children:
        head.append("  sub-agents ", style="dim").append(str(len(t.children)))
    head.append("  limit ", style="dim").append(f"{t.limit:,}")
    head.append("  model ", style="dim").append(safe_line(t.model or "?", 40))
    console.print(head, no_wrap=True, overflow="ellipsis")
    for notice in t.notices:
        console.print(Text(safe_line(notice), style="yellow"))
    console.print(Text(f"  {'#':>4}  {'context vs limit':<{BAR + 1}} {'tokens':>9} {'cache':>6} {'cost':>9} "
                       f"{'total':>9}", style="bold"))
    for item in t.items():
        if hasattr(item, "layer"):
            console.print(_event_line(item), no_wrap=True, overflow="ellipsis")
            continue
        if hasattr(item, "transcript"):
            console.print(child_line(item), no_wrap=True, overflow="ellipsis")
            continue
        r = item
        row = Text(f"  {r.n:>4}  ").append(bar(r.context, t.limit)).append(f" {r.context:>9,} ")
        row.append(f"{r.hit:>6.0%}" if r.hit is not None else f"{'–':>6}", style="green" if (r.hit or 0) > 0.5 else "")
        row.append(f" {_money(r.cost):>9} {_money(r.total):>9}")
        if r.purpose == "summary":
            row.append("  summary call", style="magenta")
        console.print(row, no_wrap=True, overflow="ellipsis")
    if t.events:
        console.print(Text("◆ N: a compaction event — s08 inspect ID --event N (or /timeline N) shows what it "
                           "removed", style="dim"))
    if t.children:
        console.print(Text("↳ task N: a sub-agent, in a context of its own; its transcript holds its steps",
                           style="dim"))


def _message_lines(message: dict, width: int) -> list[Text]:
    out: list[Text] = []
    role = message.get("role")
    for b in blocks(message):
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text":
            who = Text("you › ", style="bold") if role == "user" else Text("s08 › ", style="bold cyan")
            lines = safe(b.get("text", "")).splitlines() or [""]
            out.append(who.append(safe_line(lines[0], width)))
            out += [Text("      " + safe_line(x, width)) for x in lines[1:MESSAGE_LINES]]
            if len(lines) > MESSAGE_LINES:
                out.append(Text(f"      … {len(lines) - MESSAGE_LINES} more lines", style="dim"))
        elif kind == "tool_use":
            name = str(b.get("name", ""))
            out.append(Text(f"  ● {safe_line(name, 40)}  {safe_line(summarize_input(name, b.get('input')), width)}",
                            style="cyan"))
        elif kind == "tool_result":
            content = b.get("content")
            text = content if isinstance(content, str) else "\n".join(
                x.get("text", "") for x in content if isinstance(x, dict)) if isinstance(content, list) else ""
            lines = safe(text).splitlines() or ["(empty)"]
            style = "red" if b.get("is_error") else "dim"
            out.append(Text("    ⎿ " + safe_line(lines[0], width), style=style))
            out += [Text("      " + safe_line(x, width), style=style) for x in lines[1:RESULT_LINES]]
            if len(lines) > RESULT_LINES:
                out.append(Text(f"      … {len(lines) - RESULT_LINES} more lines", style="dim"))
        elif kind is not None:
            out.append(Text(f"  [{safe_line(kind, 30)} block]", style="dim"))
    return out


def event_view(console: Console, detail) -> None:
    e = detail.event
    console.print(_event_line(e), no_wrap=True, overflow="ellipsis")
    width = max(20, console.width - 8)
    if detail.problem:
        console.print(Text(safe_line(detail.problem), style="yellow"))
    if detail.header:
        h = detail.header
        fields = [f"{k}: {safe_line(json.dumps(h.get(k), ensure_ascii=False), 80)}" for k in
                  ("session", "kind", "trigger", "tokens_before", "tokens_after", "messages", "of", "time") if k in h]
        console.print(Text("header  " + " · ".join(fields), style="dim"))
    if e.summary:
        console.print(Text("The summary that replaced the history:", style="bold"))
        for summary_line in safe(e.summary).splitlines():
            console.print(Text("  " + summary_line), highlight=False)
    if detail.messages:
        console.print(Text(f"{len(detail.messages)} message(s) saved in {safe_line(e.path, 100)}:", style="bold"))
        for message in detail.messages:
            for line in _message_lines(message, width):
                console.print(line, highlight=False, no_wrap=True, overflow="ellipsis")
    elif detail.text:
        console.print(Text(f"the start of {safe_line(e.path or e.paths[0], 100)}:", style="bold"))
        for line in safe(detail.text).splitlines()[:40]:
            console.print(Text("  " + line), highlight=False, no_wrap=True, overflow="ellipsis")
    elif not e.summary and not detail.problem:
        console.print(Text("(this event saved no file)", style="dim"))


def clean_report(console: Console, chosen) -> None:
    """`s08 clean` / `/clean`: what each session takes, and what would be removed (a session.clean.Plan)."""
    import time
    found, going = chosen.survey, {s.id for s in chosen.sessions}
    total = sum(s.bytes for s in found.sessions.values()) + found.loose_bytes
    console.print(Text(f"s08's folders in {safe_line(found.workspace, 80)}: {size(total)} in "
                       f"{len(found.sessions)} session(s)", style="bold"))
    for s in sorted(found.sessions.values(), key=lambda s: -s.mtime):
        line = Text(f"  {safe_line(s.id, 24):<24} {size(s.bytes):>9}  {len(s.paths):>4} file(s)  "
                    f"{age(time.time() - s.mtime):<12}")
        if s.current:
            line.append("  current", style="green")
        elif s.running:
            line.append("  running", style="yellow")
        elif s.id in going:
            line.append("  remove", style="red")
        console.print(line, no_wrap=True, overflow="ellipsis")
    for line in found.refused:
        console.print(Text(safe_line(line, 300), style="yellow"), no_wrap=True, overflow="ellipsis")
    if found.loose:
        console.print(Text(f"  {'older files (no session in their name)':<40} {size(found.loose_bytes):>9}  "
                           f"{len(found.loose)} file(s), {len(chosen.loose)} to remove"))
    if chosen.count:
        console.print(Text(f"older than KEEP_DAYS ({chosen.keep_days} days): {len(chosen.sessions)} session(s) "
                           f"and {len(chosen.loose)} older file(s) — {chosen.count} file(s), {size(chosen.bytes)}",
                           style="yellow"))
    else:
        console.print(Text(f"nothing is older than KEEP_DAYS ({chosen.keep_days} days); nothing to remove",
                           style="dim"))


def clean_done(console: Console, count: int, freed: int) -> None:
    console.print(Text(f"removed {count} file(s), {size(freed)} freed", style="green"))


def show_report(console: Console, event) -> None:
    """A TimelineReport or CleanReport event (/timeline, /clean)."""
    from events import CleanReport, TimelineReport
    if isinstance(event, TimelineReport):
        if event.detail is not None:
            event_view(console, event.detail)
        else:
            timeline_view(console, event.timeline)
    elif isinstance(event, CleanReport):
        if event.removed is not None:
            clean_done(console, *event.removed)
        else:
            clean_report(console, event.plan)


def terminal() -> Console:
    """The console the session commands (`s08 sessions / inspect / clean`) print to."""
    return Console(highlight=False)


def ask_to_remove(console: Console, count: int) -> bool:
    """`s08 clean`'s question; True when the person says yes."""
    try:
        answer = console.input(Text(f"Remove {count} file(s)? [y/N] ")).strip().lower()
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer in ("y", "yes"):
        return True
    console.print("nothing removed")
    return False

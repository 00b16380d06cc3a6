"""Screens about sessions: the banner, the resumed session's last exchanges, and the --resume picker.

Everything shown here comes from settings, logs and file names that the model may have written, so
each value goes through `safe` and into `Text`, never into markup.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

from messages import blocks
from redact import redact_url
from storage import safe as own_files
from .sanitize import safe, safe_line
from .toolview import summarize_input

ORIGINS = {"print": "-p run", "piped": "piped run"}
PICKER_MOST = 10


def _pair(label: str, value) -> Text:
    return Text().append(label, style="dim").append(safe_line(value)).append("  ")


def print_banner(console: Console, app) -> None:
    s = app.settings
    console.print(Text().append("s08", style="bold cyan").append(" — a coding agent that compacts its own context",
                                                          style="default"))
    model = _pair("model ", s.model_id)
    if app.demo:
        model = Text().append("model ", style="dim").append(safe_line(s.model_id)).append(
            " (offline demo, scripted replies)  ", style="yellow")
    endpoint = _pair("endpoint ", "built-in (offline)" if app.demo else redact_url(s.base_url))
    console.print(model + _pair("workspace ", app.workspace) + endpoint)
    console.print(Text("Enter sends · Alt-Enter adds a line · Esc or Ctrl-C interrupts · Shift-Tab approvals "
                       f"({safe_line(app.approvals.mode)}) · /help · Ctrl-D exits", style="dim"))
    if not app.demo and getattr(app, "agent", None) is not None:
        console.print(Text(window_line(app.agent.compactor), style="dim"))
    sandbox = getattr(app, "sandbox", None)
    if sandbox is not None and (sandbox.mode != "read-only" or not sandbox.available):
        console.print(Text(safe_line(sandbox.status()), style="dim" if sandbox.available else "yellow"))
    for warning in app.warnings:
        console.print(Text(safe_line(warning), style="yellow"))
    if app.demo:
        from .onboarding import print_demo_banner
        print_demo_banner(console, app)
    elif not s.has_credentials and not getattr(getattr(app, "access", None), "needs_consent", False):
        console.print(Text(safe_line(app.missing_key_message()), style="yellow"))
    if app.resumed is not None:
        show_resumed(console, app.resumed, app.messages)


def window_line(compactor) -> str:
    """The context window in use and where it came from (compaction/window.py), e.g. "context window 4,096
    tokens (llama.cpp /props n_ctx) · compaction at 3,072"; while the server is still being asked, says so
    (its answer comes as a line of its own)."""
    window = compactor.window
    asking = " · asking the server" if getattr(getattr(compactor, "endpoint", None), "window_probe", None) is not None else ""
    return (f"context window {window.tokens:,} tokens ({safe_line(window.source, 80)}) · "
            f"compaction at {compactor.limit:,}{asking}")


def counted(loaded) -> str:
    """A session's size as a person counts it: the messages they typed and the model calls made (the
    history itself may be a few messages after a compaction)."""
    typed, calls = len(loaded.continuity.typed.entries), len(loaded.usages)
    return f"{typed} message{'s' * (typed != 1)} from you, {calls} model call{'s' * (calls != 1)}"


def show_resumed(console: Console, loaded, messages: list[dict], exchanges: int = 3) -> None:
    """The resume notice and the last few exchanges, so the person sees where they left off."""
    width = max(20, console.width - 8)
    console.print(Text(f"resumed session {safe_line(loaded.id)} ({counted(loaded)})", style="green"))
    for notice in loaded.notices:
        console.print(Text(safe_line(notice), style="yellow"))
    typed = {e.text for e in loaded.continuity.typed.entries}
    starts = [i for i, m in enumerate(messages) if m["role"] == "user" and any(
        b.get("type") == "text" for b in blocks(m))]
    for m in messages[starts[-exchanges] if len(starts) >= exchanges else 0:]:
        for b in blocks(m):
            kind = b.get("type")
            if kind == "text" and m["role"] == "user" and b.get("text") not in typed:
                continue          # compaction's and the stop marks' own text is not what you typed
            if kind == "text":
                who = Text("you › ", style="bold") if m["role"] == "user" else Text("s08 › ", style="bold cyan")
                console.print(who.append(safe_line(b.get("text", ""), width)), highlight=False)
            elif kind == "tool_use":
                name = str(b.get("name", ""))
                summary = safe_line(summarize_input(name, b.get("input")), width)
                console.print(Text(f"  ● {safe_line(name, 40)}  {summary}", style="dim"), highlight=False)
    console.print(Text("─" * 40, style="dim"))


def age(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 24 * 60:
        return f"{minutes // 60} h ago"
    days = minutes // (24 * 60)
    return "yesterday" if days == 1 else f"{days} days ago"


def session_lines(n: int, path: Path, width: int) -> list[Text]:
    """The picker's entry for one session: id, age, size, origin; the first and the last request."""
    from session.replay import load_session
    try:
        loaded = load_session(path)
        mtime = own_files.lstat(path).st_mtime
    except (OSError, ValueError) as exc:
        return [Text().append(f"  {n:>2}  ", style="cyan")
                .append(f"{safe_line(path.stem)}  (unreadable: {safe_line(exc)})")]
    origin = ORIGINS.get(loaded.header.get("origin", ""), "")
    head = Text().append(f"  {n:>2}  ", style="cyan")
    head.append(f"{age(time.time() - mtime)} · {counted(loaded)}")
    if origin:
        head.append(f" · {origin}", style="yellow")
    head.append(f"  {safe_line(path.stem, 40)}", style="dim")
    typed = loaded.continuity.typed.entries                   # what the person typed, as the log recorded it
    first, last = (typed[0].text, typed[-1].text) if typed else ("", "")
    room = max(20, width - 14)
    rows = [head, Text().append("      first: ", style="dim").append(safe_line(first or "(nothing typed)", room))]
    if last and last != first:
        rows.append(Text().append("      last:  ", style="dim").append(safe_line(last, room)))
    return rows


def confirm_on_terminal(question: str) -> bool:
    """A yes/no question before the session starts (no REPL yet); anything but y/yes is no."""
    console = Console(highlight=False)
    console.print(Text(safe(question)))
    try:
        return input("[y/N] ").strip().lower() in ("y", "yes")
    except (EOFError, KeyboardInterrupt):
        return False


def pick_session(paths: list[Path], most: int = PICKER_MOST):
    """Ask which session to resume (newest first); returns its path or None."""
    console = Console(highlight=False)
    console.print(Text().append("Sessions in this workspace", style="bold").append(" (newest first):"))
    shown = paths[:most]
    for n, path in enumerate(shown, 1):
        for line in session_lines(n, path, console.width):
            console.print(line, no_wrap=True, overflow="ellipsis")
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
    console.print(Text("not a number from the list", style="yellow"))
    return None

"""The command-line tools about saved sessions: `s08 sessions`, `s08 inspect [ID]`, `s08 clean`.

    s08 sessions [-w DIR]                            every session of the workspace, newest first
    s08 inspect [ID] [--event N] [--html FILE]       one session's timeline (default: the newest);
                                                     --event N: what compaction event N removed;
                                                     --html FILE: the timeline as one self-contained page
    s08 clean [--yes] [--keep-days N]                what s08's folders take, and removing sessions
                                                     unused for more than KEEP_DAYS (asks first)

They read logs and files only (no model, no key), through storage/safe.py: a log that is a link, a
FIFO or a device is skipped with one line; the --html page is written to a unique new file next to
FILE and renamed over it (a link at FILE is replaced, never written through). `/timeline` and `/clean` (commands.py) are the same
views inside the REPL. Exit status: 0, 1 when something asked for does not exist or cannot be written,
2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import json_text
from storage import safe

SUBCOMMANDS = {        # name → one line of help (here, in `s08 --help` and in docs/sessions.md: a test compares them)
    "sessions": "list this workspace's sessions",
    "inspect": "one session's timeline: context per request, compactions, cost",
    "clean": "show what s08's folders take; remove sessions older than KEEP_DAYS",
}
FIRST_TYPED_BYTES = 4 * 1024 * 1024      # where the first typed message is looked for


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="look at and tidy s08's saved sessions")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("-w", "--workspace", type=Path, default=None, help="the workspace (default: here)")
        p.add_argument("--env-file", type=Path, default=None, help="read settings from this file")
        if name == "inspect":
            p.add_argument("id", nargs="?", default=None, help="session id or unique prefix (default: newest)")
            p.add_argument("--event", type=int, metavar="N", help="show what compaction event N removed")
            p.add_argument("--html", type=Path, metavar="FILE", help="write the timeline as a self-contained page")
        if name == "clean":
            p.add_argument("-y", "--yes", action="store_true", help="remove without asking")
            p.add_argument("--keep-days", type=int, default=None, metavar="N", help="overrides KEEP_DAYS")
    return parser


def _settings(workspace: Path, env_file: Path | None, warn: bool = False):
    """`warn`: say the settings' warnings (what this folder's .env may not set, among them) on stderr."""
    from config import load_settings
    result = load_settings(workspace, env_file)
    if warn:
        from ui.quiet import say_err
        for warning in result.warnings:
            say_err(warning)
    return result.settings


def session_rows(workspace: Path, skipped: list[str] | None = None) -> list[dict]:
    """For `s08 sessions`: each session's requests, compactions, cost, files and state (a log that
    cannot be read: one line in `skipped`)."""
    from session.clean import survey
    from session.file import list_sessions
    from session.timeline import read_timeline
    found = survey(workspace)
    rows = []
    for path in list_sessions(workspace, skipped):
        try:
            t = read_timeline(path)
        except OSError as exc:
            if skipped is not None:
                skipped.append(f"{path.name}: {exc.strerror or exc}")
            continue
        s = found.sessions.get(path.stem)
        rows.append({"id": path.stem, "mtime": s.mtime if s else 0.0, "requests": len(t.requests),
                     "events": len(t.events), "bytes": s.bytes if s else 0, "cost": t.cost,
                     "running": bool(s and s.running), "first": _first_typed(path)})
    return rows


def _first_typed(path: Path) -> str:
    """The first thing the person typed (a "typed" record near the top of the log), for the list."""
    try:
        head = safe.read_head(path, FIRST_TYPED_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    for line in head.split("\n")[:200]:
        try:
            record = json_text.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and record.get("t") == "typed" and isinstance(record.get("text"), str):
            return record["text"][:200]
    return ""


def load_details(timeline, workspace: Path) -> list:
    from session.timeline import event_detail
    return [event_detail(timeline, workspace, e.n) for e in timeline.events]


def write_html(timeline, workspace: Path, target: Path) -> None:
    from ui.timeline_html import timeline_html
    page = timeline_html(timeline, load_details(timeline, workspace))
    safe.replace(target, page.encode("utf-8"), mode=0o644)


def main(argv: list[str], prog: str) -> int:
    args = _parser(prog).parse_args(argv)
    workspace = (args.workspace or Path(os.getcwd())).expanduser().resolve()
    from ui.quiet import say_err
    from ui.timeline_view import terminal
    console = terminal()
    if not workspace.is_dir():
        say_err(f"workspace {workspace} is not a folder")
        return 2
    if args.command == "sessions":
        from ui.timeline_view import session_table
        skipped: list[str] = []
        rows = session_rows(workspace, skipped)
        for line in skipped:
            say_err(line)
        session_table(console, rows)
        return 0
    if args.command == "inspect":
        return _inspect(args, workspace, console)
    return _clean(args, workspace, console)


def _inspect(args, workspace: Path, console) -> int:
    from session.file import find_session, list_sessions
    from session.timeline import read_timeline
    from ui.quiet import say_err
    from ui.timeline_view import event_view, timeline_view
    skipped: list[str] = []
    sessions = list_sessions(workspace, skipped)
    for line in skipped:
        say_err(line)
    path = find_session(workspace, args.id) if args.id else (sessions[0] if sessions else None)
    if path is None:
        say_err(f"no single session matches {args.id!r}; s08 sessions lists them" if args.id else
                f"no saved session in {workspace / '.sessions'}")
        return 1
    try:
        timeline = read_timeline(path, _settings(workspace, args.env_file).context_limit)
    except OSError as exc:
        say_err(f"cannot read {path.name}: {exc.strerror or exc}")
        return 1
    if args.html is not None:
        try:
            write_html(timeline, workspace, args.html)
        except OSError as exc:
            say_err(f"cannot write {args.html}: {exc.strerror or exc}")
            return 1
        say_err(f"wrote {args.html} ({len(timeline.requests)} requests, {len(timeline.events)} compaction events)")
        return 0
    if args.event is not None:
        if not 1 <= args.event <= len(timeline.events):
            say_err(f"session {path.stem} has {len(timeline.events)} compaction event(s); --event takes 1–"
                    f"{len(timeline.events)}" if timeline.events else f"session {path.stem} has no compaction events")
            return 1
        from session.timeline import event_detail
        event_view(console, event_detail(timeline, workspace, args.event))
        return 0
    timeline_view(console, timeline)
    return 0


def _clean(args, workspace: Path, console) -> int:
    from session.clean import plan, remove, survey
    from ui.timeline_view import ask_to_remove, clean_done, clean_report
    keep_days = args.keep_days if args.keep_days is not None else _settings(workspace, args.env_file, warn=True).keep_days
    if keep_days < 0:
        from ui.quiet import say_err
        say_err("--keep-days must be 0 or more")
        return 2
    chosen = plan(survey(workspace), keep_days)
    clean_report(console, chosen)
    if not chosen.count:
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            from ui.quiet import say_err
            say_err("nothing removed: run s08 clean --yes to remove them without asking")
            return 1
        if not ask_to_remove(console, chosen.count):
            return 0
    clean_done(console, *remove(chosen))
    return 0

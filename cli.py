"""The command line: arguments, the session to resume, and the three ways to run an App.

    main(argv)       parse the arguments, guard the key (access/keyguard.py), open the App, then run
                     -p (_run_once), piped input (_run_piped) or the REPL (ui.run_repl)
    _pick_session    the session --continue / --resume names
    _end_background  at exit: end the processes the agent's commands left running
    s08 sessions / inspect / clean    handed to ui/session_commands.py (saved sessions, no model)
    s08 mcp add|list|remove           handed to ui/mcp_commands.py (the MCP servers' files, no model)

Heavy modules (the model SDK, rich, prompt_toolkit) are imported only after the arguments are
parsed, so `--version` and `--help` answer at once.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from commands import QUIT, UNKNOWN, UNUSABLE, dispatch
from config import APPROVAL_MODES
from ui.session_commands import SUBCOMMANDS as SESSION_SUBCOMMANDS
from version import __version__, program_name

SUBCOMMANDS = {**SESSION_SUBCOMMANDS,   # name → one line of help (in `s08 --help`; docs/sessions.md, docs/mcp.md: a test compares)
               "mcp": "add, list or remove MCP servers (~/.config/s08/mcp.json, .mcp.json)"}
DESCRIPTION = "s08 — a terminal coding agent whose strength is context compaction."


def _print_warnings(app) -> None:
    from ui.quiet import say_err
    for warning in app.warnings + (app.resumed.notices if app.resumed else []):
        say_err(warning)
    if app.demo:
        from ui import demo_notice
        say_err(demo_notice(app))


def _run_once(app, prompt: str) -> int:
    from ui import QuietRenderer, say_err, say_out
    app.set_emit(QuietRenderer())
    _print_warnings(app)
    if not prompt.strip():
        say_err("the prompt is empty: give -p some text")
        return 2
    result = dispatch(app, prompt)         # "-p /cost" runs the command, as piped input would
    if result in (UNKNOWN, UNUSABLE):
        return 2
    if result is None or result == QUIT:
        return 0
    if result.text:
        say_out(result.text)
    return 0 if result.ok else (130 if result.interrupted else 1)


def _run_once_json(app, prompt: str, streaming: bool) -> int:
    """-p with --output-format json / stream-json (ui/json_output.py): the same run and exit codes,
    stdout holds JSON only."""
    from ui.json_output import JsonEvents
    events = JsonEvents(streaming)
    app.set_emit(events)
    _print_warnings(app)
    if not prompt.strip():
        from ui import say_err
        say_err("the prompt is empty: give -p some text")
        return 2
    held: list = []                        # the servers start first (their tools are in the init record);
    app.set_emit(held.append)              # what they said follows the init record
    app.start_servers()
    app.set_emit(events)
    events.init(app)
    for event in held:
        events(event)
    result = dispatch(app, prompt)
    if result in (UNKNOWN, UNUSABLE):
        code = 2
    elif result is None or result == QUIT:
        code = 0
    else:
        code = 0 if result.ok else (130 if result.interrupted else 1)
    events.result(app, result if hasattr(result, "ok") else None, code)
    return code


def _run_piped(app) -> int:
    from ui import QuietRenderer, say_out
    app.set_emit(QuietRenderer())
    _print_warnings(app)
    status = 0
    for line in sys.stdin:
        result = dispatch(app, line)
        if result == QUIT:
            break
        if result in (UNKNOWN, UNUSABLE):
            status = 1
            continue
        if result is None:
            continue
        if result.text:
            say_out(result.text)
        if result.interrupted:
            return 130                        # Ctrl-C stops a script, not just one of its lines
        if not result.ok:
            status = 1
    return status


def _stop_on_signal(signum, _frame):
    """SIGTERM / SIGHUP (terminal closed): leave like Ctrl-C would, so a running command's process
    group is killed on the way out and the session log is closed."""
    raise SystemExit(128 + signum)


def _pick_session(workspace: Path, args):
    """The session --continue / --resume asks for; raises SystemExit with a message if there is none.
    --continue takes the newest interactive session (a -p or piped run's only when there is none)."""
    from session.log import find_session, list_sessions, load_session, session_header, session_origin, written_elsewhere
    from ui.quiet import say_err
    skipped: list[str] = []
    sessions = list_sessions(workspace, skipped)
    for line in skipped:
        say_err(line)
    if not sessions:
        raise SystemExit(f"no saved session in {workspace / '.sessions'} to resume")
    if args.resume:
        path = find_session(workspace, args.resume)
        if path is None:
            raise SystemExit(f"no single session matches {args.resume!r}; run --resume without an id to list them")
    elif args.resume == "":
        from ui import pick_session
        path = pick_session(sessions)
        if path is None:
            raise SystemExit(0)
    else:                     # a log written here first: a shipped one with a newer time is not "the last session"
        own = [p for p in sessions if written_elsewhere(session_header(p), workspace, p) is None] or sessions
        path = next((p for p in own if session_origin(p) == "interactive"), own[0])
    try:
        return load_session(path)
    except OSError as exc:
        raise SystemExit(f"cannot resume {path.name}: {exc.strerror or exc}") from None


def _consent_to_log(workspace: Path, loaded, origin: str):
    """A log whose header names another workspace is resumed only if the person says yes (with nobody to
    ask: refused, one line). The exit status when it is not resumed, else None."""
    from session.log import decide_nothing, written_elsewhere
    from access.folder_trust import foreign_log_question, foreign_log_refused
    from ui.quiet import say_err
    other = written_elsewhere(loaded.header, workspace, loaded.path)
    if other is None:
        return None
    if origin != "interactive":
        say_err(foreign_log_refused(loaded.id, other))
        return 1
    from ui import confirm_on_terminal
    if not confirm_on_terminal(foreign_log_question(loaded.id, other)):
        say_err("[not resumed]")
        return 0
    decide_nothing(loaded)
    return None


def _end_background(app) -> None:
    """At exit: end the processes the agent's commands left running (servers started with &, …)."""
    from events import Notice
    from tools.background import JOBS
    ended = JOBS.end_all()
    if ended:
        listed = "; ".join(str(p) for p in ended[:5]) + (" …" if len(ended) > 5 else "")
        app.emit(Notice(f"[ended {len(ended)} background process{'es' if len(ended) > 1 else ''} the agent's "
                        f"commands left running: {listed}]", "info"))


def _parser(prog: str | None) -> argparse.ArgumentParser:
    name = prog or program_name()
    epilog = "subcommands (no model, no key; `%s SUBCOMMAND --help` for its options):\n" % name + "\n".join(
        f"  {sub:<10}{text}" for sub, text in SUBCOMMANDS.items())
    parser = argparse.ArgumentParser(prog=name, description=DESCRIPTION, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT",
                        help="run one request non-interactively and print the final answer")
    parser.add_argument("-c", "--continue", dest="cont", action="store_true",
                        help="reopen the newest interactive session of this workspace")
    parser.add_argument("-r", "--resume", nargs="?", const="", metavar="ID",
                        help="reopen a session by id (without an id: choose from a list)")
    parser.add_argument("-w", "--workspace", type=Path, default=None,
                        help="folder the agent works in (default: the current folder)")
    parser.add_argument("--env-file", type=Path, default=None, help="read settings from this file "
                        "instead of <workspace>/.env")
    parser.add_argument("--approval-mode", choices=APPROVAL_MODES, default=None,
                        help="when to ask before a tool call: default (commands that change things and file "
                        "changes), auto_edit (commands only), yolo (never), plan (nothing may change: only "
                        "reading, while the model plans); overrides APPROVAL_MODE")
    parser.add_argument("--yolo", action="store_true", help="never ask (same as --approval-mode yolo)")
    parser.add_argument("--model", default=None, metavar="NAME",
                        help="the model to use (your choice, kept when the session is resumed; /model changes it)")
    parser.add_argument("--output-format", choices=("text", "json", "stream-json"), default="text",
                        help="with -p: text (the answer), json (one result object at the end: answer, session "
                        "id, usage, cost, compactions, stop reason) or stream-json (one JSON event per line as it "
                        "happens, the result last)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    demo = parser.add_mutually_exclusive_group()
    demo.add_argument("--demo", dest="demo", action="store_const", const="on",
                      help="answer with the built-in offline demo model (scripted replies), even with a key")
    demo.add_argument("--no-demo", dest="demo", action="store_const", const="off",
                      help="never use the demo model: without a key, say so and stop (same as DEMO=off)")
    parser.add_argument("--version", action="version", version=f"s08 {__version__}")
    return parser


def _open_app(workspace: Path, args, origin: str):
    """The App, or the exit status when it cannot be opened (the reason said on stderr)."""
    from session.log import SessionBusy
    from app import App
    from ui.quiet import say_err
    try:
        loaded = _pick_session(workspace, args) if args.cont or args.resume is not None else None
        refused = _consent_to_log(workspace, loaded, origin) if loaded is not None else None
        if refused is not None:
            return refused
        return App(workspace, args.env_file, resume=loaded, demo=args.demo, origin=origin,
                   approval_mode="yolo" if args.yolo else args.approval_mode, model=args.model)
    except SessionBusy as exc:
        say_err(f"{exc}; close it there first, or pick another with --resume")
        return 1
    except OSError as exc:
        say_err(f"cannot open the session: {exc.strerror or exc}")
        return 1
    except SystemExit as exc:
        if isinstance(exc.code, str):
            say_err(exc.code)
            return 1
        return exc.code or 0


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    if argv is None:                       # a real start (not a test calling main): guard the key first
        from access.keyguard import keep_key_from_children
        from tools.background import enable_adoption
        keep_key_from_children()           # may re-exec this process without the key in its environment
        enable_adoption()
    given = sys.argv[1:] if argv is None else argv
    if given and given[0] == "mcp":                # s08 mcp add|list|remove: the servers' files only
        from ui.mcp_commands import main as mcp_main
        return mcp_main(given, prog or program_name())
    if given and given[0] in SESSION_SUBCOMMANDS:          # s08 sessions / inspect / clean: logs and files only
        from ui.session_commands import main as session_main
        return session_main(given, prog or program_name())
    args = _parser(prog).parse_args(argv)
    if args.output_format != "text" and args.prompt is None:
        from ui.quiet import say_err
        say_err(f"--output-format {args.output_format} needs -p PROMPT")
        return 2
    workspace = (args.workspace or Path(os.getcwd())).expanduser().resolve()
    if not workspace.is_dir():
        from ui.quiet import say_err
        say_err(f"workspace {workspace} is not a folder")
        return 2
    origin = "print" if args.prompt is not None else "interactive" if sys.stdin.isatty() else "piped"
    app = _open_app(workspace, args, origin)
    if isinstance(app, int):
        return app
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop_on_signal)
    try:
        if args.prompt is not None and args.output_format != "text":
            return _run_once_json(app, args.prompt, args.output_format == "stream-json")
        if args.prompt is not None:
            return _run_once(app, args.prompt)
        if not sys.stdin.isatty():
            return _run_piped(app)
        from ui import run_repl
        return run_repl(app, debug=args.debug)
    except Exception as exc:  # noqa: BLE001 — never a traceback in -p or piped mode
        if args.debug:
            raise
        from ui.quiet import say_err
        say_err(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
        return 1
    finally:
        app.end_servers()           # servers end with s08, first: what is left after them is the commands'
        _end_background(app)
        app.close()

"""s08 — a terminal coding agent whose strength is context compaction. Entry point.

    python agent.py                  interactive REPL at `s08 >>`
    python agent.py -p "prompt"      one request, prints the final answer (exit 0, or 1 on failure)
    echo "prompt" | python agent.py  one turn per input line, exits at end of input
    python agent.py --continue       reopen the newest session of this workspace (--resume [id]: pick one)

Builds the App (settings → model client → agent) and hands it to the UI.
The loop itself lives in loop.py; all printing in ui.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from config import load_settings, missing_key_message
from events import Notice, ignore
from llm import LLM
from loop import Agent, TurnResult, agent_loop, run_turn  # noqa: F401  (agent_loop re-exported)
from session import (LoadedSession, SessionBusy, SessionHistory, SessionLog, find_session, list_sessions,
                     load_session, open_session)


class App:
    """One session: the settings, the agent, the conversation, and the slash commands."""

    def __init__(self, workspace: Path, env_file: Path | None = None, environ: dict | None = None,
                 resume: LoadedSession | None = None):
        self.workspace = workspace.resolve()
        self.env_file, self.environ = env_file, environ
        self.emit = ignore
        self.load()
        self.resumed = resume
        self.messages = open_session(self.workspace, resume) if resume else self._new_history()

    def _new_history(self) -> SessionHistory:
        return SessionHistory([], SessionLog(self.workspace, header={"model": self.settings.model_id}))

    def close(self) -> None:
        self.messages.log.close()

    def load(self) -> None:
        result = load_settings(self.workspace, self.env_file, self.environ)
        self.settings, self.warnings = result.settings, result.warnings
        llm = LLM(self.settings) if self.settings.has_credentials else None
        self.agent = Agent(self.settings, self.workspace, llm, self.emit)

    def set_emit(self, emit) -> None:
        self.emit = self.agent.emit = emit

    def missing_key_message(self) -> str:
        return missing_key_message(self.env_file.parent if self.env_file else self.workspace)

    def turn(self, text: str | None) -> TurnResult:
        if self.agent.llm is None:
            self.load()          # the key may have been added to .env since start-up
            self.set_emit(self.emit)
        if self.agent.llm is None:
            self.emit(Notice(self.missing_key_message(), "error"))
            return TurnResult(ok=False, error="no API key")
        return run_turn(self.messages, text, self.agent)

    # ---- slash commands -------------------------------------------------------------
    def commands(self) -> dict:
        return {
            "/help": ("show commands and keys", lambda _arg: self._help()),
            "/clear": ("start a new, empty conversation", lambda _arg: self.clear()),
            "/retry": ("send the conversation again (after an error or Ctrl-C)", lambda _arg: self.retry()),
            "/compact": ("summarize the conversation now: /compact [focus]", self.compact),
            "/quit": ("leave s08", lambda _arg: None),
        }

    def _help(self) -> None:
        from ui import print_help
        print_help(self)

    def clear(self) -> None:
        self.close()
        self.messages = self._new_history()     # a new session; the old one stays resumable
        self.emit(Notice("[new conversation: history cleared]", "info"))

    def compact(self, focus: str = "") -> None:
        if not self.messages:
            self.emit(Notice("nothing to compact yet", "warning"))
            return
        if self.agent.llm is None:
            self.emit(Notice(self.missing_key_message(), "error"))
            return
        self.messages[:] = self.agent.compactor.compact(self.messages, focus)

    def retry(self) -> None:
        if not self.messages or self.messages[-1]["role"] != "user":
            self.emit(Notice("nothing to retry: the last message is not waiting for an answer", "warning"))
            return
        self.turn(None)


def _print_warnings(app: App) -> None:
    for warning in app.warnings + (app.resumed.notices if app.resumed else []):
        print(warning, file=sys.stderr)


def _run_once(app: App, prompt: str) -> int:
    from ui import QuietRenderer
    app.set_emit(QuietRenderer())
    _print_warnings(app)
    result = app.turn(prompt)
    if result.text:
        print(result.text, flush=True)
    return 0 if result.ok else (130 if result.interrupted else 1)


def _run_piped(app: App) -> int:
    from ui import QuietRenderer
    app.set_emit(QuietRenderer())
    _print_warnings(app)
    status = 0
    for line in sys.stdin:
        text = line.strip()
        if not text:
            continue
        if text.lower() in ("exit", "q", "quit", "/quit", "/exit"):
            break
        commands = app.commands()
        if text.split(" ")[0] in commands:
            commands[text.split(" ")[0]][1](text.partition(" ")[2].strip())
            continue
        result = app.turn(text)
        if result.text:
            print(result.text, flush=True)
        if not result.ok:
            status = 1
    return status


def _pick_session(workspace: Path, args) -> LoadedSession | None:
    """The session --continue / --resume asks for; raises SystemExit with a message if there is none."""
    sessions = list_sessions(workspace)
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
    else:
        path = sessions[0]
    return load_session(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python agent.py", description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT",
                        help="run one request non-interactively and print the final answer")
    parser.add_argument("-c", "--continue", dest="cont", action="store_true",
                        help="reopen the newest session of this workspace")
    parser.add_argument("-r", "--resume", nargs="?", const="", metavar="ID",
                        help="reopen a session by id (without an id: choose from a list)")
    parser.add_argument("-w", "--workspace", type=Path, default=None,
                        help="folder the agent works in (default: the current folder)")
    parser.add_argument("--env-file", type=Path, default=None, help="read settings from this file "
                        "instead of <workspace>/.env")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    args = parser.parse_args(argv)
    workspace = (args.workspace or Path(os.getcwd())).expanduser().resolve()
    if not workspace.is_dir():
        print(f"workspace {workspace} is not a folder", file=sys.stderr)
        return 2
    try:
        loaded = _pick_session(workspace, args) if args.cont or args.resume is not None else None
        app = App(workspace, args.env_file, resume=loaded)
    except SessionBusy as exc:
        print(f"{exc}; close it there first", file=sys.stderr)
        return 1
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            return 1
        return exc.code or 0
    try:
        if args.prompt is not None:
            return _run_once(app, args.prompt)
        if not sys.stdin.isatty():
            return _run_piped(app)
        from ui import run_repl
        return run_repl(app, debug=args.debug)
    finally:
        app.close()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:      # Ctrl-C outside a turn (e.g. while starting up)
        sys.exit(130)

"""s08 — a terminal coding agent whose strength is context compaction. Entry point.

    python agent.py                  interactive REPL at `s08 >>`
    python agent.py -p "prompt"      one request, prints the final answer (exit 0, or 1 on failure)
    echo "prompt" | python agent.py  one turn per input line, exits at end of input

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


class App:
    """One session: the settings, the agent, the conversation, and the slash commands."""

    def __init__(self, workspace: Path, env_file: Path | None = None, environ: dict | None = None):
        self.workspace = workspace.resolve()
        self.env_file, self.environ = env_file, environ
        self.emit = ignore
        self.messages: list[dict] = []
        self.load()

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
        self.messages.clear()
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


def _run_once(app: App, prompt: str) -> int:
    from ui import QuietRenderer
    app.set_emit(QuietRenderer())
    for warning in app.warnings:
        print(warning, file=sys.stderr)
    result = app.turn(prompt)
    if result.text:
        print(result.text, flush=True)
    return 0 if result.ok else (130 if result.interrupted else 1)


def _run_piped(app: App) -> int:
    from ui import QuietRenderer
    app.set_emit(QuietRenderer())
    for warning in app.warnings:
        print(warning, file=sys.stderr)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python agent.py", description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT",
                        help="run one request non-interactively and print the final answer")
    parser.add_argument("-w", "--workspace", type=Path, default=None,
                        help="folder the agent works in (default: the current folder)")
    parser.add_argument("--env-file", type=Path, default=None, help="read settings from this file "
                        "instead of <workspace>/.env")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    args = parser.parse_args(argv)
    workspace = (args.workspace or Path(os.getcwd())).expanduser()
    if not workspace.is_dir():
        print(f"workspace {workspace} is not a folder", file=sys.stderr)
        return 2
    app = App(workspace, args.env_file)
    if args.prompt is not None:
        return _run_once(app, args.prompt)
    if not sys.stdin.isatty():
        return _run_piped(app)
    from ui import run_repl
    return run_repl(app, debug=args.debug)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:      # Ctrl-C outside a turn (e.g. while starting up)
        sys.exit(130)

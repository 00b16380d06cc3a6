"""s08 — a terminal coding agent whose strength is context compaction.

    python agent.py                  interactive REPL at `s08 >>`
    python agent.py -p "prompt"      one request, prints the final answer (exit 0, or 1 on failure)
    echo "prompt" | python agent.py  one turn per input line, exits at end of input
    python agent.py --continue       reopen the newest session of this workspace (--resume [id]: pick one)
    python agent.py --demo           the built-in offline demo model (the default when no key is configured)

Installed with `pipx install .`, the same program is the `s08` command (see launch.py).

Builds the App (settings → model client → agent) and hands it to the UI.
The loop itself lives in loop.py; all printing in ui/.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from pathlib import Path

from access import Access
from approvals import Approvals, parse_allow_list
from config import APPROVAL_MODES, missing_key_message
from credentials import consent_file
from compaction import Continuity
from compaction.tokens import breakdown
from costs import Ledger, price_of
from events import (Ask, ClearScreen, ContextReport, CostReport, MemoryReport, Notice, ResponseDone, ShowToolResult,
                    ToolFinished, TurnStatus, ignore)
from history import drop_interruption_marks
from llm import make_provider
from redact import redact_data
from loop import Agent, TurnResult, agent_loop, run_turn  # noqa: F401  (agent_loop re-exported)
from session import (LoadedSession, SessionBusy, SessionHistory, SessionLog, find_session, list_sessions,
                     load_session, open_session, session_origin)
from ui.quiet import say_err, say_out
from version import __version__, program_name


QUIT = "quit"
UNKNOWN = "unknown command"
UNUSABLE = "command needs the REPL"      # a command -p and piped input cannot run (nobody to ask): fails the run
EXIT_WORDS = {"exit", "q", "quit"}


class App:
    """One session: the settings, the agent, the conversation, and the slash commands."""

    QUIT, UNKNOWN, UNUSABLE = QUIT, UNKNOWN, UNUSABLE

    def __init__(self, workspace: Path, env_file: Path | None = None, environ: dict | None = None,
                 resume: LoadedSession | None = None, demo: str | None = None, origin: str = "interactive",
                 approval_mode: str | None = None):
        self.workspace = workspace.resolve()
        self.env_file, self.environ, self.origin = env_file, environ, origin
        self.ui_emit = ignore
        self.ask: Ask | None = None               # the UI's way to ask the person (None: nobody to ask)
        self.access = Access(self.workspace, env_file, environ, demo)   # settings, pinned endpoint, demo
        self.ledger = Ledger(lambda: (self.settings.model_id, self.price))   # each call at the model serving it
        self.messages = SessionHistory()          # replaced below; exists before anything can emit
        self.approvals, self.approval_mode, self.approver, self.last_tool = None, approval_mode, None, None
        self.resumed = resume
        self.continuity = resume.continuity if resume else Continuity()
        self.agent = None
        self.load()
        self.warned = set(self.warnings)          # the UI shows these at start; a reload says only new ones
        self._use_history(self._resume(resume) if resume else self._new_history())
        if resume is not None and resume.repaired:
            for state in self._state_records():        # the repair snapshot, completed with what it lacked
                self.messages.note(state)

    def _log_problem(self, text: str) -> None:
        self.emit(Notice(text, "warning"))

    def _new_history(self) -> SessionHistory:
        return SessionHistory([], SessionLog(self.workspace, header={"model": self.settings.model_id,
                                                                     "origin": self.origin}),
                              self._log_problem)

    def _use_history(self, history: SessionHistory) -> None:
        """The conversation, and its log, which also records what the continuity keeps and a window
        the API stated."""
        self.messages = history
        self.continuity.connect(history.note)
        history.kept_state = self._state_records
        self.agent.compactor.on_window = lambda tokens: history.note({"t": "window", "tokens": tokens})

    def _state_records(self) -> list[dict]:
        """What a catch-up snapshot of the session log writes besides the history."""
        learned = self.agent.compactor.window.learned
        return [self.continuity.snapshot()] + ([{"t": "window", "tokens": learned}] if learned else [])

    def _resume(self, loaded: LoadedSession) -> SessionHistory:
        """The logged history, its token totals, and the size of the prompt the log last measured."""
        hidden = redact_data(loaded.messages, self.agent.tool_ctx.secrets)
        if hidden != loaded.messages:        # a log written before every known key was redacted
            loaded.messages, loaded.repaired = hidden, True
            loaded.notices.append("the session log held a key or token; the resumed history shows it as [redacted]")
        history = open_session(self.workspace, loaded, self._log_problem)
        for usage, purpose, model in loaded.usages:        # priced at the model that served each call
            self.ledger.add(usage, purpose == "summary", model, self.price_for(model), resumed=True)
        if loaded.anchor:
            covered, tokens = loaded.anchor
            self.agent.compactor.meter.anchor(history, covered, tokens)
        self.agent.compactor.learn_window(loaded.window, quiet=True)
        return history

    def close(self) -> None:
        self.messages.log.close()
        self.access.close()

    @property
    def env_path(self) -> Path:
        return self.env_file or self.workspace / ".env"

    @property
    def demo(self) -> bool:
        """The built-in demo model answers (no key configured, or --demo)."""
        return self.access.demo_active

    def load(self) -> None:
        """Build the agent from the current settings — keeping what the compactor learned."""
        self.settings, self.warnings = self.access.settings(), self.access.result.warnings
        if self.approvals is None:    # fixed at start: a settings file the model can edit must not relax it
            self.approvals = Approvals(self.approval_mode or self.settings.approval_mode,
                                       parse_allow_list(self.settings.allow_commands))
        secrets = self.access.secrets()           # every key s08 knows of, not only the one in use
        usable = self.settings.has_credentials and not self.settings.endpoint_problem
        provider = make_provider(self.settings, self.access.result.credential_source(), secrets) if usable else None
        self.continuity.workspace = self.workspace
        self.agent = Agent(self.settings, self.workspace, provider, self.emit, continuity=self.continuity,
                           compactor=self.agent.compactor if self.agent else None, approvals=self.approvals,
                           ask=self.approver, secrets=secrets)
        # refused to write_file / edit_file: the settings and the endpoints the person agreed to
        self.agent.tool_ctx.settings_files = (self.env_path, consent_file(self.access.user_file))
        if self.agent.instructions.warning:
            self.warnings = self.warnings + [self.agent.instructions.warning]

    def emit(self, event) -> None:
        self.ledger(event)
        if isinstance(event, ToolFinished):
            self.last_tool = event                              # for /last
        if isinstance(event, ResponseDone) and event.usage:
            self.messages.note_usage(event.usage, event.purpose, self.settings.model_id)   # /cost after a resume
        self.ui_emit(event)

    def set_emit(self, emit) -> None:
        """Where events go (the UI); the ledger sees every one of them first."""
        self.ui_emit = emit
        self.agent.emit = self.emit

    def set_asker(self, approver) -> None:
        """How approvals are asked (the REPL's prompt); None (the default) refuses what needs asking.
        (`self.ask` is the other question channel: settings consent and /login, see access.py.)"""
        self.approver = self.agent.ask = approver

    def missing_key_message(self) -> str:
        return self.settings.endpoint_problem or missing_key_message(self.env_path.parent, self.environ)

    def _reload_if_changed(self) -> None:
        """A settings file edited while s08 runs is used from the next turn — except the endpoint, the
        key and the model, which change only with the person's consent (see access.py)."""
        before = self.settings
        changed = self.access.reload(self.ask, self.emit)
        if not changed:
            return
        self._rebuild()
        if self.settings != before:
            self.emit(Notice(f"[settings reloaded from {', '.join(changed)}]", "info"))
        for warning in self.warnings:
            if warning not in self.warned:        # said once: not again at every reload
                self.warned.add(warning)
                self.emit(Notice(warning, "warning"))

    def _rebuild(self) -> None:
        self.load()
        self.agent.emit = self.emit

    def login(self, key: str | None = None) -> str | None:
        if key is None and self.ask is None:
            self.emit(Notice("/login asks for a key: run it in the interactive REPL (s08 without -p or a pipe)",
                             "error"))
            return UNUSABLE
        if self.access.login(self.ask, self.emit, key):
            self._rebuild()
        return None

    def logout(self) -> None:
        if self.access.logout(self.emit):
            self._rebuild()

    def settle_endpoint(self) -> bool:
        """Before the first request: an endpoint named by this folder's .env, and its settings that relax
        approvals, are used only if the person agrees (access.py asks once; -p and piped input send
        nothing to such an endpoint and ignore the relaxations). True when requests may go."""
        if not self.access.unsettled:
            return True
        relaxed = self.access.relax_agreed.copy()
        if not self.access.settle(self.ask, self.emit):
            return False
        if self.access.relax_agreed != relaxed:
            self.approvals = None                 # rebuilt from the settings the person just agreed to
        self._rebuild()
        return True

    def turn(self, text: str | None) -> TurnResult:
        self._reload_if_changed()
        if not self.settle_endpoint():
            return TurnResult(ok=False, error="endpoint not agreed to")
        if self.agent.provider is None:
            self.emit(Notice(self.missing_key_message(), "error"))
            return TurnResult(ok=False, error="no API key")
        self.ledger.begin_turn()
        result = run_turn(self.messages, text, self.agent)
        if self.ledger.turn.calls:
            self.emit(TurnStatus(self.agent.compactor.measure(self.messages), self.agent.compactor.limit,
                                 self.ledger.turn.hit_rate, self.ledger.session.cost,
                                 self.settings.caching, self.demo, self.approvals.mode))
        return result

    @property
    def price(self):
        """The price of the model answering now."""
        return self.price_for(self.settings.model_id)

    def price_for(self, model: str):
        """(input, output) USD per million tokens of `model`; MODEL_PRICE applies to the person's own
        model (not the demo's, which is free); None when unknown."""
        own = self.access.pins.apply(self.access.result.settings)
        return price_of(model, own.model_price if model == own.model_id else "")

    def dispatch(self, text: str):
        """One line of input: QUIT, a slash command (returns None), or a turn (returns its result)."""
        text = text.strip()
        if not text:
            return None
        word, _, arg = text.partition(" ")
        if text.lower() in EXIT_WORDS or word in ("/quit", "/exit"):
            return QUIT
        if word.startswith("//"):
            return self.turn(text[1:])                    # "//etc" sends "/etc"
        if word.startswith("/") and "/" not in word[1:]:
            command = self.commands().get(word)
            if command is None:
                self.emit(Notice(f"unknown command {word}; /help lists the commands (start with // to send "
                                 "a message that begins with /)", "warning"))
                return UNKNOWN
            return UNUSABLE if command[1](arg.strip()) == UNUSABLE else None
        return self.turn(text)

    # ---- slash commands -------------------------------------------------------------
    def commands(self) -> dict:
        return {
            "/help": ("show commands and keys", lambda _arg: self._help()),
            "/clear": ("start a new, empty conversation", lambda _arg: self.clear()),
            "/retry": ("send the conversation again (after an error or Ctrl-C)", lambda _arg: self.retry()),
            "/compact": ("summarize the conversation now: /compact [focus]", self.compact),
            "/context": ("how full the context is, by part", lambda _arg: self.context()),
            "/cost": ("tokens and estimated cost of this session (and of the whole run)", lambda _arg: self.cost()),
            "/last": ("the whole result of the latest tool call, in a pager", lambda _arg: self.last()),
            "/memory": ("what s08 keeps through every compaction: AGENTS.md, your messages, the work ledger",
                        lambda _arg: self.memory()),
            "/login": ("check an API key and store it in your user-level settings file",
                       lambda _arg: self.login()),
            "/logout": ("remove the stored API key", lambda _arg: self.logout()),
            "/quit": ("leave s08", lambda _arg: None),
        }

    def _help(self) -> None:
        from ui import print_help
        print_help(self)

    def clear(self) -> None:
        self.close()
        learned = self.agent.compactor.window.learned   # the window belongs to the endpoint, not the conversation
        self.continuity = Continuity()          # a new session (the old one stays resumable), remembering nothing
        self.agent = None
        self.load()                             # and a fresh compactor: no state of the old conversation
        self._use_history(self._new_history())
        self.agent.compactor.learn_window(learned, quiet=True)
        self.agent.emit = self.emit
        self.ledger.new_session()               # the run's total goes on
        self.approvals.forget()                 # "always" answers belonged to the old session
        self.last_tool = None
        self.emit(ClearScreen())
        self.emit(Notice("[new conversation: history cleared]", "info"))

    def last(self) -> None:
        self.emit(ShowToolResult(self.last_tool))

    def compact(self, focus: str = "") -> None:
        if not self.messages:
            self.emit(Notice("nothing to compact yet", "warning"))
            return
        self._reload_if_changed()
        if not self.settle_endpoint():
            return
        if self.agent.provider is None:
            self.emit(Notice(self.missing_key_message(), "error"))
            return
        self.messages[:] = self.agent.compactor.compact(self.messages, focus)

    def context(self) -> None:
        agent = self.agent
        agent.refresh_instructions()
        parts = breakdown(self.messages, agent.base_system, agent.tools, agent.instructions.prompt_section())
        total = agent.compactor.measure(self.messages) if self.messages else sum(parts.values())
        window = agent.compactor.window
        self.emit(ContextReport(parts, total, window.limit, window.tokens, window.source))

    def memory(self) -> None:
        agent, keep = self.agent, self.continuity
        agent.refresh_instructions()
        self.emit(MemoryReport(agent.instructions, [e.text for e in keep.typed.entries], keep.user_budget,
                               keep.ledger, keep.ledger.render(keep.ledger_budget), keep.ledger_budget))

    def cost(self) -> None:
        run = self.ledger.run if self.ledger.run.calls != self.ledger.session.calls else None
        self.emit(CostReport(self.settings.model_id, self.price, self.ledger.session, run))

    def resume_hint(self) -> str:
        """How to come back to this session ("" when nothing was saved)."""
        log = self.messages.log
        if log is None or not log.path.exists():
            return ""
        where = "" if self.workspace == Path(os.getcwd()).resolve() else f" -w {shlex.quote(str(self.workspace))}"
        return f"session {log.id} saved\nresume it with: {program_name(exact=True)}{where} -c   (or --resume {log.id})"

    def retry(self) -> None:
        drop_interruption_marks(self.messages)
        if not self.messages or self.messages[-1]["role"] != "user":
            self.emit(Notice("nothing to retry: the last message is not waiting for an answer", "warning"))
            return
        self.turn(None)


def _print_warnings(app: App) -> None:
    for warning in app.warnings + (app.resumed.notices if app.resumed else []):
        say_err(warning)
    if app.demo:
        from ui import demo_notice
        say_err(demo_notice(app))


def _run_once(app: App, prompt: str) -> int:
    from ui import QuietRenderer
    app.set_emit(QuietRenderer())
    _print_warnings(app)
    if not prompt.strip():
        say_err("the prompt is empty: give -p some text")
        return 2
    result = app.dispatch(prompt)          # "-p /cost" runs the command, as piped input would
    if result in (UNKNOWN, UNUSABLE):
        return 2
    if result is None or result == QUIT:
        return 0
    if result.text:
        say_out(result.text)
    return 0 if result.ok else (130 if result.interrupted else 1)


def _run_piped(app: App) -> int:
    from ui import QuietRenderer
    app.set_emit(QuietRenderer())
    _print_warnings(app)
    status = 0
    for line in sys.stdin:
        result = app.dispatch(line)
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


def _pick_session(workspace: Path, args) -> LoadedSession | None:
    """The session --continue / --resume asks for; raises SystemExit with a message if there is none.
    --continue takes the newest interactive session (a -p or piped run's only when there is none)."""
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
        path = next((p for p in sessions if session_origin(p) == "interactive"), sessions[0])
    return load_session(path)


def _end_background(app: App) -> None:
    """At exit: end the processes the agent's commands left running (servers started with &, …)."""
    from tools.background import JOBS
    ended = JOBS.end_all()
    if ended:
        listed = "; ".join(str(p) for p in ended[:5]) + (" …" if len(ended) > 5 else "")
        app.emit(Notice(f"[ended {len(ended)} background process{'es' if len(ended) > 1 else ''} the agent's "
                        f"commands left running: {listed}]", "info"))


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    if argv is None:                       # a real start (not a test calling main): guard the key first
        from keyguard import keep_key_from_children
        from tools.background import enable_adoption
        keep_key_from_children()           # may re-exec this process without the key in its environment
        enable_adoption()
    parser = argparse.ArgumentParser(prog=prog or program_name(), description=__doc__.splitlines()[0])
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
                        "changes), auto_edit (commands only), yolo (never); overrides APPROVAL_MODE")
    parser.add_argument("--yolo", action="store_true", help="never ask (same as --approval-mode yolo)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    demo = parser.add_mutually_exclusive_group()
    demo.add_argument("--demo", dest="demo", action="store_const", const="on",
                      help="answer with the built-in offline demo model (scripted replies), even with a key")
    demo.add_argument("--no-demo", dest="demo", action="store_const", const="off",
                      help="never use the demo model: without a key, say so and stop (same as DEMO=off)")
    parser.add_argument("--version", action="version", version=f"s08 {__version__}")
    args = parser.parse_args(argv)
    workspace = (args.workspace or Path(os.getcwd())).expanduser().resolve()
    if not workspace.is_dir():
        say_err(f"workspace {workspace} is not a folder")
        return 2
    origin = "print" if args.prompt is not None else "interactive" if sys.stdin.isatty() else "piped"
    try:
        loaded = _pick_session(workspace, args) if args.cont or args.resume is not None else None
        app = App(workspace, args.env_file, resume=loaded, demo=args.demo, origin=origin,
                  approval_mode="yolo" if args.yolo else args.approval_mode)
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
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop_on_signal)
    try:
        if args.prompt is not None:
            return _run_once(app, args.prompt)
        if not sys.stdin.isatty():
            return _run_piped(app)
        from ui import run_repl
        return run_repl(app, debug=args.debug)
    except Exception as exc:  # noqa: BLE001 — never a traceback in -p or piped mode
        if args.debug:
            raise
        say_err(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
        return 1
    finally:
        _end_background(app)
        app.close()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:      # Ctrl-C outside a turn (e.g. while starting up)
        sys.exit(130)

"""One session of s08: the settings, the agent, the conversation and where its events go.

    App(workspace, env_file, environ, resume, demo, origin, approval_mode)
      .bus / .emit     every event goes through one Bus: the cost ledger, the last tool call (/last)
                       and the usage log (session.UsageRecorder) subscribe first, the UI (set_emit) last
      .turn(text)      one turn (None: send the conversation again, for /retry)
      .compact / .retry / .clear / .login / .logout     what the slash commands (commands.py) do
      ._blocked()      the one "can anything be sent now?" check: settings re-read, endpoint agreed,
                       a key — used by every path that calls the model

A settings file changed while s08 runs (`_reload_if_changed`) rebuilds only what depends on the
settings — the model client (`_make_model`), the tools' view of the settings and the compactor's
budgets — never what the compactor learned (continuity, index, window, clock).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from access.model_access import Access
from access.login import login as log_in, logout as log_out
from approvals.policy import Approvals, parse_allow_list
from commands import UNUSABLE
from compaction import Continuity
from config import missing_key_message, process_environ
from delegation import attach as attach_delegation
from session.costs import CostTracker, price_of, with_model_window
from access.credentials import consent_file, endpoint_adaptations, remember_adaptation
from events import Ask, Bus, ClearScreen, Emit, Notice, SessionResumed, ToolFinished, TurnStatus
from hooks import Hooks
from prompts.skills import find_skills
from messages import drop_interruption_marks
from llm import make_provider
from llm.window_probe import WindowProbe, wanted as probe_wanted
from loop import hook_events
from loop.agent_loop import Agent, TurnResult, run_turn
from loop.mentions import attach, budget_for
from loop.model_choice import model_records, set_model
from approvals.plan_mode import note_for, told_planning
from redact import redact_data
from session.undo import restore_checkpoints, use_checkpoints
from session.log import LoadedSession, LoggedHistory, SessionLog, UsageRecorder, open_session
from session.index import IndexRecorder
from storage import bind_session
from tools.sandbox import Sandbox
from version import program_name
from access import settings_json
from servers.manager import Servers
from tools.registry import REGISTRY


class App:
    """One session: the settings, the agent, the conversation; the slash commands are in commands.py
    (the model choice: loop/model_choice.py; /resume, /undo and /rewind: session/undo.py; the hooks'
    session events: loop/hook_events.py)."""

    agent: Agent                  # set by load() before anything uses it
    approvals: Approvals
    sandbox: Sandbox
    settings: Any
    warnings: list[str]

    def __init__(self, workspace: Path, env_file: Path | None = None, environ: dict | None = None,
                 resume: LoadedSession | None = None, demo: str | None = None, origin: str = "interactive",
                 approval_mode: str | None = None, model: str | None = None):
        self.workspace = workspace.resolve()
        self.env_file, self.environ, self.origin = env_file, environ, origin
        self.ask: Ask | None = None               # the UI's way to ask the person (None: nobody to ask)
        self.access = Access(self.workspace, env_file, environ, demo)   # settings, pinned endpoint, demo
        self.ledger = CostTracker(lambda: (self.settings.model_id, self.price))   # each call at the model serving it
        self.messages = LoggedHistory()          # replaced below; exists before anything can emit
        self.bus = Bus()
        self._ui: Emit | None = None              # the UI's subscription (set_emit)
        self.emit = self.bus.emit                 # wired once: the agent and every part emit here
        self.bus.subscribe(self.ledger)
        self.bus.subscribe(self._note_tool)
        self.bus.subscribe(UsageRecorder(lambda: self.messages, lambda: self.settings.model_id))   # /cost after a resume
        self.bus.subscribe(IndexRecorder(self.workspace, lambda: self.messages, lambda: self.agent.compactor.limit))
        self.approvals, self.approval_mode, self.approver = None, approval_mode, None   # type: ignore[assignment]
        self.last_tool: ToolFinished | None = None
        self.resumed = resume
        self.continuity = resume.continuity if resume else Continuity()
        self.agent = None                         # type: ignore[assignment]
        self.hooks = Hooks(self.workspace, self.access.user_file, environ)    # read once: a change waits for a restart
        self.hooks.emit = self.emit
        self.hooks_started, self.end_reason = False, "other"
        self.skills = find_skills(self.workspace, environ)
        self.servers: Servers | None = None       # the MCP servers: started at the first turn (start_servers)
        self.load()
        self.warnings = self.warnings + self.hooks.problems      # a settings file's hooks that cannot be used
        self.warned = set(self.warnings)          # the UI shows these at start; a reload says only new ones
        self._use_history(self._resume(resume) if resume else self._new_history())
        self.plan_told = told_planning(self.messages)     # a resumed history may end in plan mode
        if resume is not None:
            self._restore(resume, model)                                  # its checkpoints, and the model chosen
        elif model:
            set_model(self, model, quiet=True)                # --model
        self.window_probe: WindowProbe | None = None
        self.probe_window()
        if resume is not None and resume.repaired:
            for state in self._state_records():        # the repair snapshot, completed with what it lacked
                self.messages.note(state)

    def _note_tool(self, event) -> None:
        if isinstance(event, ToolFinished):
            self.last_tool = event                              # for /last

    def _log_problem(self, text: str) -> None:
        self.emit(Notice(text, "warning"))

    def _new_history(self) -> LoggedHistory:
        chosen = {"model_choice": self.access.pins.chosen} if self.access.pins.chosen else {}
        return LoggedHistory([], SessionLog(self.workspace, header={"model": self.settings.model_id,
                                                                    "origin": self.origin,
                                                                    "limit": self.agent.compactor.limit, **chosen}),
                              self._log_problem)

    def _use_history(self, history: LoggedHistory) -> None:
        """The conversation, and its log, which also records what the continuity keeps and a window
        the API stated."""
        self.messages = history
        if history.log is not None:
            bind_session(self.workspace, history.log.id)     # the files compaction writes are named for it
        self.continuity.connect(history.note)
        history.kept_state = self._state_records
        self.agent.compactor.endpoint.on_window = history.note
        self.agent.compactor.background.on_record = history.note      # preparing, applying a summary
        self.agent.compactor.prepare_between_turns = self.origin != "print"     # -p: no turn follows
        use_checkpoints(self, history)

    def _state_records(self) -> list[dict]:
        """What a catch-up snapshot of the session log writes besides the history."""
        learned = self.agent.compactor.window.learned
        return ([self.continuity.snapshot()] + ([self.agent.compactor.endpoint.window_record()] if learned else [])
                + self.continuity.rewound_records() + self.checkpoints.records() + model_records(self))

    def _resume(self, loaded: LoadedSession) -> LoggedHistory:
        """The logged history, its token totals, and the size of the prompt the log last measured."""
        hidden = redact_data(loaded.messages, self.agent.tool_ctx.secrets)
        if hidden != loaded.messages:        # a log written before every known key was redacted
            loaded.messages, loaded.repaired = hidden, True
            loaded.notices.append("the session log held a key or token; the resumed history shows it as [redacted]")
        history = open_session(self.workspace, loaded, self._log_problem)
        for usage, purpose, model in loaded.usages:        # priced at the model that served each call
            self.ledger.add(usage, purpose == "summary", model, self.price_for(model), resumed=True)
        self.ledger.add_children(loaded.task_usages)
        if loaded.anchor:
            covered, tokens = loaded.anchor
            self.agent.compactor.meter.anchor(history, covered, tokens)
        if not (loaded.window_silent and self.access.sources.get("CONTEXT_WINDOW")):    # the person's setting wins
            self.agent.compactor.endpoint.learn_window(loaded.window, quiet=True, silent=loaded.window_silent)
        self.agent.compactor.endpoint.resume_answered(loaded.answered)
        if loaded.prepared and (loaded.repaired or not self.agent.compactor.background.restore(history, loaded.prepared)):
            history.note({"t": "dropped", "n": loaded.prepared["n"], "why": "the resumed history is not the one "
                          "it summarized"})
        return history

    def _restore(self, loaded: LoadedSession, model: str | None = None) -> None:
        """After a resume: the checkpoints it recorded, and the model chosen (`model`: --model wins)."""
        restore_checkpoints(self, loaded)
        choice = model or loaded.model_choice
        if choice and choice != self.access.pins.chosen:
            set_model(self, choice, quiet=True, log=choice != loaded.model_choice)

    def _attachments(self, text: str) -> tuple[str, ...]:
        """The files a message mentions with @path (loop/mentions.py), recorded in the work ledger."""
        if "@" not in text:
            return ()
        got = attach(text, self.workspace, budget_for(self.agent.compactor.limit), self.agent.tool_ctx.redact)
        for line in got.refused:
            self.emit(Notice(line, "warning"))
        turn = self.continuity.turn + 1          # the number the message gets when the turn records it
        for path in got.paths:
            self.continuity.ledger.record({"k": "file", "path": path, "do": "attached by you", "turn": turn})
        if got.paths:
            self.emit(Notice(f"[attached {', '.join(got.paths)}]", "info"))
        return tuple(got.blocks)

    def close(self, reason: str = "") -> None:
        hook_events.end(self, reason)
        self.agent.compactor.collect()            # a summary ready by now is logged, for --continue
        self.agent.compactor.background.close()
        self.messages.log.close()
        self.access.close()

    @property
    def env_path(self) -> Path:
        return self.env_file or self.workspace / ".env"

    @property
    def demo(self) -> bool:
        """The built-in demo model answers (no key configured, or --demo)."""
        return self.access.demo_active

    # ---- building from the settings ---------------------------------------------------
    def _read_settings(self) -> None:
        self.settings, self.warnings = self.access.settings(), self.access.result.warnings
        self.settings = with_model_window(self.settings, self.access.sources)     # the window follows the model
        self.window_source = self.access.sources.get("CONTEXT_WINDOW")          # None: not set by the person
        if self.approvals is None:    # fixed at start: a settings file the model can edit must not relax it
            self.approvals = Approvals(self.approval_mode or self.settings.approval_mode,
                                       parse_allow_list(self.settings.allow_commands), self._allowed_tools())
            self.sandbox = Sandbox.for_session(self.settings, self.environ)     # fixed at start too
            self.approvals.sandbox_problem = self.sandbox.problem

    def _allowed_tools(self) -> tuple[str, ...]:
        """`permissions.allow` of the person's settings.json — never the project's (a repository may not
        change approvals): the MCP tools that run without a question."""
        loaded = settings_json.read(settings_json.user_file(self.environ))
        if loaded.problem:
            self.warnings = list(self.warnings) + [loaded.problem]
        allow = loaded.data.get("permissions", {}).get("allow", []) if isinstance(loaded.data.get("permissions"),
                                                                                  dict) else []
        return tuple(a for a in allow if isinstance(a, str)) if isinstance(allow, list) else ()

    def start_servers(self) -> None:
        """The MCP servers, once per run (servers/manager.py): asks about a project's servers, starts what may
        start, and gives their tools to the agent."""
        if self.servers is None:
            log = self.messages.log
            folder = log.path.with_name(f"{log.id}.mcp") if log is not None else None
            self.servers = Servers(self.workspace, self.settings, dict(process_environ() if self.environ is None
                                                                       else self.environ),
                                   self.access.secrets(), self.access.user_file, folder, set(REGISTRY))
        self.servers.settings = self.settings
        if self.servers.start(self.ask, self.emit):
            self._attach_servers()

    def _attach_servers(self) -> None:
        if self.servers is not None and self.servers.started:
            self.agent.tool_ctx.servers = self.servers
            self.agent.sync_tools()

    def end_servers(self) -> None:
        if self.servers is not None:
            self.servers.close()

    def _make_model(self):
        """The model client for the current settings; None when nothing may be sent (no key, an
        endpoint problem)."""
        usable = self.settings.has_credentials and not self.settings.endpoint_problem
        return make_provider(self.settings, self.access.result.credential_source(),
                             self.access.secrets()) if usable else None

    def load(self) -> None:
        """Build the agent from the current settings (a new one, with a fresh compactor, when there
        is none yet: at start and after /clear)."""
        if self.agent is not None:
            self._rebuild()
            return
        self._read_settings()
        self.continuity.workspace = self.workspace
        self.agent = Agent(self.settings, self.workspace, self._make_model(), self.emit, continuity=self.continuity,
                           approvals=self.approvals, ask=self.approver, secrets=self.access.secrets())
        # refused to write_file / edit_file: the settings and the endpoints the person agreed to
        self.agent.tool_ctx.settings_files = (self.env_path, consent_file(self.access.user_file))
        self.agent.tool_ctx.sandbox = self.sandbox
        self.agent.hooks = self.agent.compactor.hooks = self.hooks
        self.agent.use_skills(self.skills)
        self._attach_servers()                    # after /clear or /resume: the same servers
        self.delegator = attach_delegation(self.agent, lambda record: self.messages.note(record), self.environ,
                                           lambda: self.price)
        self.warnings = self.warnings + self.delegator.problems()     # agent files not read, and why
        self._adapt_to_endpoint()
        self._add_instructions_warning()

    def _adapt_to_endpoint(self) -> None:
        """What was learned about this endpoint in earlier sessions (credentials.endpoint_adaptations)."""
        url, user_file = self.settings.base_url, self.access.user_file
        self.agent.plain_form = "plain_system" in endpoint_adaptations(user_file, url)

        def remember() -> str:
            try:
                return str(remember_adaptation(user_file, url, "plain_system"))
            except OSError:
                return ""
        self.agent.remember_plain = remember

    def _rebuild(self) -> None:
        """New settings: a new model client and what reads the settings; the agent, its tools' context
        and the compactor's state stay."""
        before_url = self.settings.base_url
        before_window = (self.settings.context_window, self.window_source)
        self._read_settings()
        agent = self.agent
        agent.settings, agent.provider, agent.approvals = self.settings, self._make_model(), self.approvals
        agent.tool_ctx.settings, agent.tool_ctx.secrets = self.settings, self.access.secrets()
        agent.tool_ctx.sandbox = self.sandbox          # rebuilt with the approvals (after a consent), else the same
        agent.compactor.use_settings(self.settings)
        if self.window_source and (self.settings.context_window, self.window_source) != before_window:
            agent.compactor.endpoint.forget_silence()          # set now: the person's window wins over an empty answer's
        if self.settings.base_url != before_url:      # what was learned belongs to the endpoint
            self._adapt_to_endpoint()
        self._add_instructions_warning()

    def _add_instructions_warning(self) -> None:
        if self.agent.instructions.warning:
            self.warnings = self.warnings + [self.agent.instructions.warning]

    def set_emit(self, emit) -> None:
        """Where events go (the UI): the last subscriber of the bus, after the ledger and the usage log."""
        if self._ui is not None:
            self.bus.unsubscribe(self._ui)
        self._ui = self.bus.subscribe(emit)

    def set_asker(self, approver) -> None:
        """How approvals are asked (the REPL's prompt); None (the default) refuses what needs asking.
        (`self.ask` is the other question channel: settings consent and /login, see access/model_access.py.)"""
        self.approver = self.agent.ask = hook_events.notifying(self.hooks, approver)

    def missing_key_message(self) -> str:
        return self.settings.endpoint_problem or missing_key_message(self.env_path.parent, self.environ)

    def _reload_if_changed(self) -> None:
        """A settings file edited while s08 runs is used from the next turn — except the endpoint, the
        key and the model, which change only with the person's consent (see access/model_access.py)."""
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

    def _blocked(self) -> str | None:
        """Why no request may go now (said on screen), or None: the settings re-read, the endpoint
        agreed to, a key there. The one check before every model call (turn, /compact, /retry, -p)."""
        self._reload_if_changed()
        if not self.settle_endpoint():
            return "endpoint not agreed to"
        if self.agent.provider is None:
            self.emit(Notice(self.missing_key_message(), "error"))
            return "no API key"
        return None

    def login(self, key: str | None = None) -> str | None:
        if key is None and self.ask is None:
            self.emit(Notice("/login asks for a key: run it in the interactive REPL (s08 without -p or a pipe)",
                             "error"))
            return UNUSABLE
        if log_in(self.access, self.ask, self.emit, key):
            self._rebuild()
        return None

    def logout(self) -> None:
        if log_out(self.access, self.emit):
            self._rebuild()

    def settle_endpoint(self) -> bool:
        """Before the first request: an endpoint named by this folder's .env, and its settings that relax
        approvals, are used only if the person agrees (access/model_access.py asks once; -p and piped input send
        nothing to such an endpoint and ignore the relaxations). True when requests may go."""
        if not self.access.unsettled:
            return True
        relaxed = (self.access.relax_agreed.copy(), self.access.user_withheld)
        if not self.access.settle(self.ask, self.emit):
            return False
        if (self.access.relax_agreed, self.access.user_withheld) != relaxed:
            self.approvals = None                 # type: ignore[assignment]  # rebuilt from what was agreed to
        self._rebuild()
        return True

    def start_hooks(self, source: str = "") -> None:
        """The project's hooks asked about (once), then SessionStart (hook_events.py)."""
        hook_events.start(self, source)

    def probe_window(self) -> None:
        """Ask the server its context window (llm/window_probe.py) once requests may go to it, unless
        CONTEXT_WINDOW was set or the endpoint is Anthropic's own; the answer is used when it is in
        (before a turn, after each reply: Compactor.take_told), never waited for."""
        if self.window_probe is None and not self.demo and self.settings.has_credentials \
                and not self.settings.endpoint_problem and not self.access.unsettled \
                and not self.access.sources.get("CONTEXT_WINDOW") and probe_wanted(self.settings.base_url):
            key = self.settings.anthropic_api_key or self.settings.anthropic_auth_token
            self.window_probe = WindowProbe.start(self.settings.base_url, self.settings.model_id, key)
            self.agent.compactor.endpoint.window_probe = self.window_probe
        compactor = self.agent.compactor
        if not self.access.sources.get("CONTEXT_WINDOW"):
            compactor.endpoint.take_told()
        elif compactor.endpoint.window_probe is not None or compactor.window.told:   # set since (a reloaded .env):
            compactor.endpoint.window_probe, compactor.window.told = None, None     # the setting wins
            compactor.rebudget()

    # ---- the conversation --------------------------------------------------------------
    def turn(self, text: str | None) -> TurnResult:
        blocked = self._blocked()
        if blocked:
            return TurnResult(ok=False, error=blocked)
        hooked = hook_events.before_prompt(self, text) if self.hooks else ()
        if hooked is None:
            return TurnResult(ok=False, error="refused by a hook")
        self.ledger.begin_turn()
        self.checkpoints.prompt = self.continuity.turn + (1 if text and text.strip() else 0)
        attached = self._attachments(text) if text else ()
        note = ""
        if text and text.strip():           # plan mode on, or just switched off: the model is told (plan_mode.py)
            note, self.plan_told = note_for(self.approvals.mode == "plan", self.plan_told)
        self.start_servers()
        self.probe_window()
        result = run_turn(self.messages, text, self.agent, tuple(attached) + hooked, note=note)
        if self.hooks:
            result = hook_events.after_turn(self, result)
        if self.ledger.turn.calls:
            self.emit(TurnStatus(self.agent.compactor.measure(self.messages), self.agent.compactor.limit,
                                 self.ledger.turn.hit_rate, self.ledger.session.cost,
                                 self.settings.caching and not self.agent.plain_form, self.demo,
                                 self.approvals.summary(),
                                 self.agent.compactor.background.status()))
        return result

    @property
    def price(self):
        """The price of the model answering now."""
        return self.price_for(self.settings.model_id)

    def price_for(self, model: str):
        """(input, output) USD per million tokens of `model`; MODEL_PRICE applies to the person's own
        model (not the demo's, which is free); None when unknown."""
        own = self.access.pins.apply(self.access.result.settings)
        mine = model == own.model_id and self.access.pins.chosen in (None, self.access.pins.model_base)
        return price_of(model, own.model_price if mine else "")

    def clear(self) -> None:
        started = self.hooks_started
        self.close("clear")
        old = self.agent.compactor      # the window belongs to the endpoint, not the conversation
        learned, silent, told = old.window.learned, old.endpoint.silent_at, (old.window.told, old.window.told_from)
        self.continuity = Continuity()          # a new session (the old one stays resumable), remembering nothing
        self.agent = None                       # type: ignore[assignment]
        self.load()                             # and a fresh compactor: no state of the old conversation
        self._use_history(self._new_history())
        self.plan_told = False
        self.agent.compactor.endpoint.learn_window(learned, quiet=True, silent=silent)
        if told[0]:
            self.agent.compactor.window.tell(*told)
            self.agent.compactor.continuity.use_settings(self.settings, self.agent.compactor.limit)
        self.agent.compactor.endpoint.window_probe = old.endpoint.window_probe
        self.ledger.new_session()               # the run's total goes on
        self.approvals.forget()                 # "always" answers belonged to the old session
        self.last_tool = None
        self.emit(ClearScreen())
        self.emit(Notice("[new conversation: history cleared]", "info"))
        if started:
            self.start_hooks("clear")

    def switch_to(self, loaded: LoadedSession) -> None:
        """/resume: leave this session (it stays resumable) and go on with `loaded`, as a start with --resume
        would — its history, continuity, checkpoints, model choice and token totals."""
        self.close("resume")
        self.continuity = loaded.continuity
        self.agent = None                       # type: ignore[assignment]
        self.load()                             # a fresh agent and compactor for that conversation
        self.ledger.new_session()
        self.resumed = loaded
        self._use_history(self._resume(loaded))
        self._restore(loaded)
        if loaded.repaired:
            for state in self._state_records():
                self.messages.note(state)
        self.approvals.forget()
        self.last_tool = None
        self.emit(ClearScreen())
        self.emit(SessionResumed(loaded, list(self.messages)))

    def compact(self, focus: str = "") -> None:
        if not self.messages:
            self.emit(Notice("nothing to compact yet", "warning"))
            return
        if self._blocked():
            return
        self.messages[:] = self.agent.compactor.compact(self.messages, focus)

    def set_plan_mode(self, on: bool) -> None:
        """/plan: plan mode on, or back to the mode the session had before it (default if none)."""
        approvals = self.approvals
        if on and approvals.mode != "plan":
            self.mode_before_plan, approvals.mode = approvals.mode, "plan"
        elif not on and approvals.mode == "plan":
            approvals.mode = getattr(self, "mode_before_plan", "default")
        self.emit(Notice(f"[approvals: {approvals.mode}"
                         + (" — only reading; the model plans and changes nothing]" if on else "]"), "info"))

    def retry(self) -> None:
        self.agent.compactor.background.drop("/retry sends the turn again")
        drop_interruption_marks(self.messages)
        if not self.messages or self.messages[-1]["role"] != "user":
            self.emit(Notice("nothing to retry: the last message is not waiting for an answer", "warning"))
            return
        self.turn(None)

    def resume_hint(self) -> str:
        """How to come back to this session ("" when nothing was saved)."""
        log = self.messages.log
        if log is None or not log.path.exists():
            return ""
        where = "" if self.workspace == Path(os.getcwd()).resolve() else f" -w {shlex.quote(str(self.workspace))}"
        return f"session {log.id} saved\nresume it with: {program_name(exact=True)}{where} -c   (or --resume {log.id})"

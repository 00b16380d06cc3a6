"""The Compactor: the pipeline run on the history before every model call, and its other paths.

    messages[:] = compactor.prepare(messages)

        tool_result_budget   outputs too big for the context → .task_outputs/
        snip_compact         past SNIP_MAX_MESSAGES → drop the middle (→ .transcripts/)
        micro_compact        old tool results → "[Previous: used <tool>]"
        compact_history      still over the limit → model-written summary

Cheap, deterministic layers first (LAYERS, each one object, layer.py); the model is asked only when they
were not enough. `compact()` serves the compact tool and /compact; `reactive()` serves "prompt is too
long" (and what an endpoint does instead, loop.py decides). `fit` is the last step of every path: the
request fits the window with room for the answer (room.py). With BACKGROUND_COMPACT=on the summary is
prepared before it is needed and goes in when one is called for (prepared.py); off, it is made then.

The Compactor orchestrates parts, each named for its decision: recent.py (what must stay), cut.py (how
to cut to a target), room.py (what a request must fit), schedule.py (when to prepare a summary),
prepared.py (applying one prepared in the background, background.py runs it), breaker.py (when
automatic summaries stop), fallback.py (the cut without the model), summary.py (making a summary),
endpoint_window.py (what the endpoint shows about its window and its counts), window.py (the window,
and the CacheClock: when a turn starts cold). It holds what they need across calls and keeps it when
the settings change (`use_settings`): the session's Continuity, the MessageIndex (index.py), the
Window, the clock, the breaker, the snip transcript.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from events import Compaction, CompactionKind, Emit, ignore, Notice
from storage import SNIPPED
from .background import Background
from .breaker import Breaker
from .budget import BudgetSettings, ToolResultBudget
from .continuity import Continuity
from .endpoint_window import EndpointWindow
from .index import ContextMeter, MessageIndex
from .layer import Layer, LayerContext
from .fallback import FALLBACK_SHARE, cut_without_model
from .prepared import PreparedSummaries
from .micro import MicroCompact
from .recent import recent_budget
from .room import ROOM_GOAL, answer_room, fit_target, make_room, no_room
from .schedule import Schedule
from .snip import SnipCompact
from .summary import (Summarize, SummaryFailed, SummaryJob, compact_history, input_budget,
                      reactive_compact, summary_of)
from .tokens import estimate_tokens, usage_tokens
from .window import CacheClock, Window

if TYPE_CHECKING:
    from config import Settings

AUTO, MANUAL, REACTIVE = CompactionKind.AUTO_COMPACT, CompactionKind.MANUAL_COMPACT, CompactionKind.REACTIVE_COMPACT
LAYERS: tuple[type[Layer], ...] = (ToolResultBudget, SnipCompact, MicroCompact)     # the cheap layers, in order
WINDOW_ROOM = 0.8          # a prompt past the limit may grow to this share of the window while a summary is prepared


class Compactor:
    def __init__(self, settings, workspace: Path, summarize: Summarize, emit: Emit = ignore,
                 system=None, tools=None, continuity: Continuity | None = None, clock=None):
        self.workspace, self.summarize, self.emit = Path(workspace), summarize, emit
        self.system, self.tools = system, tools
        self.continuity = continuity or Continuity(workspace=self.workspace)
        self.cache = CacheClock(clock) if clock else CacheClock()
        self.background = Background(self.workspace)            # the summary prepared ahead (background.py)
        self.background_summarize: Callable = lambda request, _emit: self.summarize(request)
        self.schedule = Schedule()                # when it is prepared and goes in (schedule.py)
        self.prepare_between_turns = True         # False when no turn follows (-p): nothing to prepare for
        self.hooks = None                         # PreCompact / PostCompact (hooks/session.py), or None
        self.breaker = Breaker()                  # when automatic summaries stop (breaker.py)
        self.prepared = PreparedSummaries(self)   # starting and applying it (prepared.py)
        self.cold_turn = False
        self.no_room_said = False       # the one line that the system prompt and tools leave no room was said
        snipped = [p for p in self.continuity.ledger.transcripts() if Path(p).name.startswith(f"{SNIPPED}_")]
        self.snip_transcript: Path | None = self.workspace / snipped[-1] if snipped else None
        self.window = Window(settings.context_limit, settings.context_window)
        self.endpoint = EndpointWindow(        # what the endpoint shows about it (endpoint_window.py)
            self.window, lambda messages: estimate_tokens(messages, self.system, self.tools),
            lambda event: self.emit(event), lambda: self.limit, self.rebudget)
        self.index = MessageIndex(settings.preserved_tools)
        self.meter = ContextMeter(self.index)
        self.settings: Settings = settings
        self.use_settings(settings)

    def use_settings(self, settings) -> None:
        """New settings (a reloaded .env): the layers are built again from them; what the compactor
        learned about the session (continuity, index, window, clock, failures, snip transcript) stays."""
        if BudgetSettings.from_settings(settings) != BudgetSettings.from_settings(self.settings):
            self.index = MessageIndex(settings.preserved_tools)     # decisions that depend on these are redone
            self.meter = ContextMeter(self.index)
        self.settings = settings
        self.layers: tuple[Layer, ...] = tuple(layer.from_settings(settings) for layer in LAYERS)
        self.window.limit_setting, self.window.window_setting = settings.context_limit, settings.context_window
        self.rebudget()

    def rebudget(self) -> None:
        """The limit or the window changed: what the continuity keeps is budgeted again."""
        self.continuity.use_settings(self.settings, self.limit, self.window.tokens)

    @property
    def limit(self) -> int:
        """Where the summary starts: the window's limit, but never past what a request may measure."""
        return min(self.window.limit, self.fit_target)

    @property
    def fit_target(self) -> int:
        """What a request (system, tools, history) may measure: the window less the answer's room (room.py)."""
        return fit_target(self.window.tokens, self.settings.max_tokens)

    @property
    def room(self) -> int:
        """Tokens a prompt may reach past the limit while a summary is prepared: the window, less the
        answer's and a margin's share. Past it the recent work is cleared too."""
        return int(self.window.tokens * WINDOW_ROOM)

    @property
    def recent_budget(self) -> int:
        return recent_budget(self.settings.recent_work, self.limit)

    def begin_turn(self, ttl: str = "5m") -> None:
        """A new user turn: failures are counted at most once per turn; a turn that starts after the
        prompt cache expired (for breakpoints of this `ttl` mode, window.py's CacheClock) is a cold one: its
        first call clears old results whatever their batch size, and summarizes the history once it is past
        COLD_COMPACT_AT of the limit, because the prompt is written again anyway."""
        self.breaker.begin_turn()
        self.schedule.begin_turn()
        self.cold_turn = self.cache.cold(ttl)

    # ---- measuring ---------------------------------------------------------------------
    def measure(self, messages: list[dict]) -> int:
        return self.meter.measure(messages, self.system, self.tools)

    def observe(self, messages: list[dict], usage) -> None:
        """A reply was appended: anchor the meter on its usage, unless the endpoint's count is not
        trusted (endpoint_window.py)."""
        estimate = self.meter.estimate(messages, self.system, self.tools)
        if self.endpoint.usage(usage_tokens(usage), estimate):
            self.meter.observe(messages, usage)
        else:
            self.meter.forget()
        self.endpoint.answered(self.measure(messages), estimate)    # as the next size is measured
        self.cache.used()

    # ---- the pipeline ------------------------------------------------------------------
    def cheap_layers(self, messages: list[dict], clear_all: bool = False, hold_snip: bool = False) -> list[dict]:
        """The LAYERS in order, each looking again only at what changed since the last call (the index
        knows). `clear_all`: clear old results whatever their batch size; `hold_snip`: no snip now (a summary
        being prepared covers what it would cut). A layer that cannot write to
        disk (a full disk, a read-only workspace) is skipped for this call: that must not end the turn."""
        context = LayerContext(self.workspace, self.continuity, self.window, self.index, self.emit,
                               cold=clear_all, snip_transcript=self.snip_transcript)
        self.index.sync(messages)
        out = messages
        for layer in self.layers:
            if hold_snip and layer.name is CompactionKind.SNIP_COMPACT:
                continue
            try:
                new = layer(out, context)
            except OSError as exc:
                self.emit(Notice(f"[{layer.name.label} could not write to disk: {exc.strerror or exc}; "
                                 "what it would move stays in the context]", "warning"))
                continue
            if new is not out:
                self.index.sync(new)
            out = new
        self.snip_transcript = context.snip_transcript
        return out

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Run the four layers; returns the history to send (the input is never mutated), cut to fit the
        window with room for the answer whatever they did (`fit`)."""
        out = self.fit(self._prepare(messages))
        self.schedule.last_size = self.measure(out)
        return out

    def _prepare(self, messages: list[dict]) -> list[dict]:
        cold, self.cold_turn = self.cold_turn, False      # only the turn's first call starts cold
        first = self.schedule.first_call()
        prep = self.prepared.current(messages)
        out = self.cheap_layers(messages, clear_all=cold, hold_snip=prep is not None)
        size, limit = self.measure(out), self.limit
        if self.schedule.last_size is None and first:    # a new session or a resumed one: the history
            self.schedule.last_size = self.measure(out[:-1])     # before this message is not its growth
        self.schedule.grew_to(size)
        early = cold and size > self.settings.cold_compact_at * limit and len(out) > 1    # not the turn's own
        #                                                              message alone: nothing before it to summarize
        if size <= limit and not early:
            if prep is not None and prep.ready and len(out) > self.prepared.snip_max():
                return self.prepared.apply(prep, out, messages, size, "a snip is due")      # better than the snip
            if first and prep is not None and prep.ready and self.schedule.turn_would_pass(size, limit):
                return self.prepared.apply(prep, out, messages, size, "this turn would pass the limit")
            if prep is not None and prep.ready and prep.held:
                return self.prepared.apply(prep, out, messages, size, "the results it covers were cleared")
            return out
        said = False                          # the limit's line, said once a call
        if prep is not None and not prep.done.is_set() and size > limit and self.breaker.auto_enabled:
            if not prep.passed:               # said once: the limit is passed, the summary goes in when ready
                said = prep.passed = True
                self.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} > {limit:,} tokens · the summary "
                                           "being prepared goes in when it is ready"))
            if self.prepared.hold_now(out, prep, size):     # carried while that is cheaper (prepared.py)
                out, count = self.prepared.hold(out, prep, "while the summary is prepared")
                if count:
                    size = self.measure(out)
            if size <= self.room:             # the recent work stays while the window has room: go on
                return out
        if not self.breaker.auto_enabled:
            self.breaker.warn_off(size, limit, self.emit)
            return out
        if size > limit:
            if not said and not (prep is not None and prep.passed):    # said when it was passed
                self.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} > {limit:,} tokens"))
        else:
            self.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} tokens and the prompt cache "
                                       "has expired: compacting now costs nothing extra"))
        if prep is not None:
            return self.prepared.apply(prep, out, messages, size)
        why = ("summary", f"{size:,} > {limit:,} tokens") if size > limit else \
            ("cold", f"{size:,} tokens, prompt cache expired")
        return self._summarize(out, "", AUTO, measured=size, sent=messages, why=why)

    # ---- the summary prepared in the background (prepared.py) ----------------------------
    def collect(self) -> None:
        """At a safe point of the loop's thread: take what the background job left (prepared.py)."""
        self.prepared.collect()

    def after_reply(self, sent: list[dict], messages, final: bool = True) -> None:
        """A model call answered: start preparing a summary if one is due (prepared.py)."""
        self.prepared.after_reply(sent, messages, final)

    # ---- a summary now, and what to do when it fails --------------------------------------
    def _summarize(self, messages: list[dict], focus: str, kind: CompactionKind, measured: int | None = None,
                   scale: float = 1.0, sent: list[dict] | None = None, stated: int | None = None,
                   why: tuple[str, str] = ("summary", ""), hooked: bool = False) -> list[dict]:
        """Summarize for `kind` (auto_compact, manual_compact, reactive_compact); on failure keep the
        history and — except for a manual compact — fall back to the non-model reduction. `stated`: the
        window an error just stated, used for this compaction even when too small to keep believing.
        PreCompact hooks run first (`hooked`: they already did) and may add to the focus or block it."""
        trigger = "manual" if kind is MANUAL else "auto"
        if self.hooks and not hooked:
            focus, refused = self.hooks.pre_compact(trigger, focus)
            if refused is not None:
                return self._hooked_instead(messages, messages, measured, refused, "", kind)
        s, window = self.settings, min(self.window.tokens, stated or self.window.tokens)
        budget = int(input_budget(window, s.summary_max_tokens) / self.endpoint.usage_scale)     # in the endpoint's tokens
        job = SummaryJob(self.summarize, focus=focus, workspace=self.workspace, system=self.system,
                         tools=self.tools, window=window, max_input_tokens=budget,
                         measured=measured or self.measure(messages), sent=sent, continuity=self.continuity,
                         emit=self.emit, kind=why[0], trigger=why[1], recent_work=self.recent_budget)
        began = time.monotonic()
        try:
            if kind is REACTIVE:
                new = reactive_compact(messages, job, scale)
            else:
                new = compact_history(messages, job)
            self.background.timed.append(time.monotonic() - began)     # how long a summary takes here
        except SummaryFailed as exc:
            if exc.trivial and kind is not MANUAL and self.measure(messages) <= self.room:
                return messages         # all but the recent work is too little to summarize, and the window has room
            if exc.trivial:
                self.emit(Notice(f"[{kind.label}: {exc}]", "info"))
            else:
                self.breaker.failed(kind, exc, self.emit)
            return messages if kind is MANUAL else self._fallback(messages)
        self.breaker.succeeded()
        self.meter.forget()
        if self.hooks:
            self.hooks.post_compact(trigger, summary_of(new))
        return new

    def _hooked_instead(self, out: list[dict], messages: list[dict], measured: int | None, refused: str | None,
                        added: str, kind: CompactionKind = AUTO) -> list[dict]:
        """A PreCompact hook blocked the summary (the fallback instead, said; a manual one keeps the history)
        or gave instructions a prepared summary did not have (a summary with them instead)."""
        if refused is None:
            self.emit(Notice("[a PreCompact hook added instructions: the prepared summary is made again with them]",
                             "info"))
            return self._summarize(out, added, AUTO, measured=measured, sent=messages, hooked=True)
        self.emit(Notice(f"[a PreCompact hook blocked the {kind.label}: {refused}; "
                         + ("the history was kept]" if kind is MANUAL else "cutting without the model instead]"),
                         "warning"))
        return out if kind is MANUAL else self._fallback(out)

    def _fallback(self, messages: list[dict]) -> list[dict]:
        """No model: cut without it (fallback.py)."""
        out, self.snip_transcript = cut_without_model(messages, self.settings, self.workspace, self.continuity,
                                                      self.snip_transcript, self.emit, self.system, self.tools,
                                                      int(self.limit * FALLBACK_SHARE))
        return out

    def fit(self, messages: list[dict], scale: float | None = None) -> list[dict]:
        """The last step of every path (prepare, compact, reactive): the history cut until the request
        fits the window with room for the answer (room.py), whatever the summary did. `scale`: how much
        the endpoint's count exceeds s08's estimate (default: the largest it said). When the system prompt
        and tools alone leave no room, one line says so (once)."""
        scale = self.endpoint.scale if scale is None else max(1.0, self.endpoint.usage_scale, scale)
        target = self.fit_target

        def measure(history: list[dict]) -> int:
            return self.meter.measure(history, self.system, self.tools, scale)

        if measure(messages) <= target:
            return messages
        out = make_room(messages, int(target * ROOM_GOAL), measure, self.workspace, self.continuity, self.emit,
                        self.settings)
        if out is not messages:
            self.meter.forget()
        fixed = int(estimate_tokens([], self.system, self.tools) * scale)
        if measure(out) > target and fixed > target - answer_room(self.window.tokens, self.settings.max_tokens) \
                and not self.no_room_said:
            self.no_room_said = True
            self.emit(Notice(no_room(fixed, self.window.tokens, self.settings.max_tokens), "warning"))
        return out

    # ---- on request ------------------------------------------------------------------
    def compact(self, messages: list[dict], focus: str = "") -> list[dict]:
        """The compact tool and /compact: summarize now (with an optional focus)."""
        self.emit(Compaction(MANUAL, f"[{MANUAL.label}]" + (f" focus: {focus}" if focus else "")))
        self.collect()
        self.background.drop("a manual compact summarized the history")
        self.breaker.reset()
        return self.fit(self._summarize(messages, focus, MANUAL,
                                        why=("manual", "compact" + (f", focus: {focus}" if focus else ""))))

    def reactive(self, messages: list[dict], counted: int | None = None, maximum: int | None = None,
                 why: str = "") -> list[dict]:
        """The API said the prompt is too long (`counted` > `maximum` tokens, when it said the numbers):
        the window it stated is used from now on; keep a recent tail, summarize the rest. The API's
        count against our own estimate of the same request scales every budget to the API's tokens.
        `why`: what the endpoint did instead of saying so (the line shown then)."""
        said = f" ({counted:,} > {maximum:,} tokens)" if counted and maximum else ""
        prep = self.prepared.current(messages)
        estimate = estimate_tokens(messages, self.system, self.tools)
        scale = self.endpoint.too_long(counted, estimate)
        self.emit(Compaction(REACTIVE, f"[{REACTIVE.label}] " + (why or f"the API says the prompt is too long{said}; "
                                                                  "compacting and retrying once")))
        self.endpoint.learn_window(maximum)
        if prep is not None:
            applied = self.prepared.apply(prep, messages, messages, counted or estimate)
            if not maximum or estimate_tokens(applied, self.system, self.tools) * scale < maximum:
                return self.fit(applied)
            messages = applied
        return self.fit(self._summarize(messages, "", REACTIVE, scale=scale, stated=maximum,
                                        why=("reactive", f"prompt is too long{said}")))

"""The pipeline, in the seeds' order, run on the history before every model call.

    messages[:] = compactor.prepare(messages)

        tool_result_budget   outputs too big for the context → .task_outputs/
        snip_compact         past SNIP_MAX_MESSAGES → drop the middle (→ .transcripts/)
        micro_compact        old tool results → "[Previous: used <tool>]"
        compact_history      still over CONTEXT_LIMIT tokens → model-written summary

Cheap, deterministic layers first; the model is asked only when they were not
enough. The cheap ones are LAYERS, in order (each one object, see layer.py): adding one is
one module plus one entry there. The Compactor holds what the layers need across calls, and keeps it
when the settings change (`use_settings`):
  - the session's Continuity: the person's messages and the work ledger, which every cut keeps;
  - the MessageIndex (index.py): what each layer and the meter decide about a message is computed
    once for that message object, so a call's own work does not grow with the history;
  - the Window (window.py): CONTEXT_WINDOW, the server's word (take_told), the one the API stated or an
    empty answer bounded (silence_is_overflow), and the limit it implies;
  - the CacheClock (window.py): a turn that starts after the prompt cache expired starts "cold" —
    then old results are cleared whatever their batch size, and the history is summarized once it is
    past COLD_COMPACT_AT of the limit, because the prompt is written again anyway;
  - the session's snip transcript (SnipCompact hands back the one it started, in the LayerContext),
    and the Breaker (breaker.py): after MAX_FAILURES failed summaries in a row the automatic summary
    stops until /compact. A failed summary keeps the history and falls back to the cut without the
    model (fallback.py).
`compact()` serves the compact tool and /compact; `reactive()` serves "prompt is too long" (and what
an endpoint says instead: an empty answer to a prompt past what it answered before, an answer cut by
the window — loop.py decides).

Usage is checked, not trusted: some compatible endpoints report input tokens without the system
prompt and tools, or without what their own cache held (a gateway in front of llama.cpp reported 17
where the model counted 525). A usage under USAGE_TRUST_SHARE of s08's own estimate of the same
request is not anchored on: the meter and every compaction decision use the estimate, and the
compactor says so once (`usage_doubt`, which /context shows).

With BACKGROUND_COMPACT=on the summary is prepared before it is needed (prepared.py starts and applies
it, background.py runs it): `after_reply` starts summarizing the history as just sent, in a thread — at
a turn's end when the next turns would pass the limit, inside a turn two calls before it. When a
compaction is called for (the limit, a cold cache, "prompt is too long", the first call of a turn that
would pass the limit) the prepared summary replaces the part it covers (`_apply`); after its snapshot
the calls stay and the seen results become pointers. At the limit while it is still written the loop
clears what it covers, all at once, instead of waiting (`_cut`), and applies it once it is ready. While
one is prepared, snip_compact waits (a ready summary is applied instead when a snip is due). Off:
exactly the blocking design.

Every path keeps the recent work whole (recent.py: the newest RECENT_WORK of the limit the model has
seen): a summary keeps it after the summary message, pointers stop before it, micro_compact leaves
it; only a window with no room clears it (prepared.py, cut.py). The parts the Compactor orchestrates, each
named for its decision: recent.py (what must stay), cut.py (how to cut to a target), schedule.py (when
to prepare a summary), prepared.py (applying one prepared in the background), breaker.py (when
automatic summaries stop), fallback.py (the cut without the model), background.py and summary.py
(making a summary), room.py (what a request must fit, and the cut that makes it fit: `fit`, the last
step of prepare, compact and reactive — whatever the summary did, the request fits the window with
room for the answer; the limit never passes what a request may measure).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from events import Compaction, CompactionKind, Emit, ignore, Notice
from storage import SNIPPED
from .background import Background, Preparation
from .breaker import Breaker
from .budget import BudgetSettings, ToolResultBudget
from .continuity import Continuity
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
from .window import API_STATED, CacheClock, Window

if TYPE_CHECKING:
    from config import Settings

AUTO, MANUAL, REACTIVE = CompactionKind.AUTO_COMPACT, CompactionKind.MANUAL_COMPACT, CompactionKind.REACTIVE_COMPACT
LAYERS: tuple[type[Layer], ...] = (ToolResultBudget, SnipCompact, MicroCompact)     # the cheap layers, in order
WINDOW_ROOM = 0.8          # a prompt past the limit may grow to this share of the window while a summary is prepared
USAGE_TRUST_SHARE = 0.5             # a usage under half of s08's estimate is taken as incomplete
MAX_USAGE_SCALE = 2.0               # a usage over s08's estimate scales what must fit the window, up to this


class Compactor:
    def __init__(self, settings, workspace: Path, summarize: Summarize, emit: Emit = ignore,
                 system=None, tools=None, continuity: Continuity | None = None, clock=None):
        self.workspace, self.summarize, self.emit = Path(workspace), summarize, emit
        self.system, self.tools = system, tools
        self.continuity = continuity or Continuity(workspace=self.workspace)
        self.cache = CacheClock(clock) if clock else CacheClock()
        self.on_window: Callable[[dict], None] | None = None    # records a learned window (the session log)
        self.silent_at: int | None = None         # the empty answer's size the learned window came from
        self.window_probe = None                  # asking the server its window (llm/window_probe.py), or None
        self.background = Background(self.workspace)            # the summary prepared ahead (background.py)
        self.background_summarize: Callable = lambda request, _emit: self.summarize(request)
        self.schedule = Schedule()                # when it is prepared and goes in (schedule.py)
        self.prepare_between_turns = True         # False when no turn follows (-p): nothing to prepare for
        self.hooks = None                         # PreCompact / PostCompact (hooks/session.py), or None
        self.breaker = Breaker()                  # when automatic summaries stop (breaker.py)
        self.prepared = PreparedSummaries(self)   # starting and applying it (prepared.py)
        self.usage_doubt = ""           # why the endpoint's usage is not trusted ("" while it is)
        self.largest_answered = 0       # the largest prompt (tokens) this endpoint answered in the session
        self.largest_estimate = 0       # the same prompt as s08 estimates it (the unit of a window an empty answer bounds)
        self.api_scale = 1.0            # the endpoint's count of a prompt over s08's estimate, when it said one
        self.usage_scale = 1.0          # the same, from the usage it reported (a log counts more than prose)
        self.silences = 0               # empty answers in a row
        self.cold_turn = False
        self.no_room_said = False       # the one line that the system prompt and tools leave no room was said
        snipped = [p for p in self.continuity.ledger.transcripts() if Path(p).name.startswith(f"{SNIPPED}_")]
        self.snip_transcript: Path | None = self.workspace / snipped[-1] if snipped else None
        self.window = Window(settings.context_limit, settings.context_window)
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
        self.continuity.use_settings(settings, self.limit, self.window.tokens)

    @property
    def failures(self) -> int:
        return self.breaker.failures

    @failures.setter
    def failures(self, count: int) -> None:
        self.breaker.failures = count

    @property
    def auto_enabled(self) -> bool:
        return self.breaker.auto_enabled

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
        prompt cache expired (for breakpoints of this `ttl` mode) is a cold one (see the module docstring)."""
        self.breaker.begin_turn()
        self.schedule.begin_turn()
        self.cold_turn = self.cache.cold(ttl)

    # ---- measuring ---------------------------------------------------------------------
    def measure(self, messages: list[dict]) -> int:
        return self.meter.measure(messages, self.system, self.tools)

    def observe(self, messages: list[dict], usage) -> None:
        """A reply was appended: anchor the meter on its usage — unless that is far below s08's own
        estimate of the same request (then the estimate stands, and that is said once)."""
        reported = usage_tokens(usage)
        estimate = self.meter.estimate(messages, self.system, self.tools)
        if reported < estimate * USAGE_TRUST_SHARE:
            self.meter.forget()
            if not self.usage_doubt:
                said = f"{reported:,} tokens reported" if reported else "no tokens reported"
                self.usage_doubt = (f"the endpoint's usage looks incomplete ({said} where s08 estimates "
                                    f"{estimate:,}); the meter and compaction use s08's estimate")
                self.emit(Notice(f"[{self.usage_doubt}]", "warning"))
        else:
            self.meter.observe(messages, usage)
            if estimate:
                self.usage_scale = max(self.usage_scale, min(reported / estimate, MAX_USAGE_SCALE))
        self.largest_answered = max(self.largest_answered, self.measure(messages))    # as the next size is measured
        self.largest_estimate = max(self.largest_estimate, estimate)     # the same, in s08's own estimate
        self.silences = 0
        self.cache.used()
        self.take_told()

    def silence_is_overflow(self, size: int, messages: list[dict] | None = None) -> bool:
        """An empty answer to a prompt of `size` tokens (`messages`): a context overflow when the prompt is
        near the window s08 knows, or larger than any this endpoint answered in the session (a window s08
        does not know), or when the endpoint was silent the time before too (a resumed session may start
        past the window). Then the window is below this prompt and above the largest answered: learned
        (window.py, silence_bound) so that the next request fits — in s08's own estimate of both prompts,
        the unit compaction cuts to (the endpoint's count of the same text can be far higher, and it
        said none for the silent one)."""
        self.silences += 1
        overflow = size >= self.window.tokens * 0.9 or 0 < self.largest_answered < size or self.silences > 1
        silent = estimate_tokens(messages, self.system, self.tools) if messages is not None else size
        if overflow:
            answered = self.answered_estimate(size, silent)
            answered = answered if answered < silent else 0
            if self.window.bound(answered, silent):
                self.silent_at = silent
                self._window_changed(f"[the endpoint answered nothing to a prompt s08 estimates at ~{silent:,} "
                                     "tokens" + (f", after answering ~{answered:,}" if answered else "")
                                     + f": taking its context window as ~{self.window.tokens:,} tokens; "
                                       f"compacting at {self.limit:,}]", quiet=False)
        return overflow

    def answered_estimate(self, size: int, silent: int) -> int:
        """The largest answered prompt in s08's own estimate. A resumed session answered nothing in this
        process yet: what its log says was answered (the endpoint's count, resume_answered) is scaled
        the way the silent prompt's estimate (`silent`) compares with its measure (`size`)."""
        if self.largest_estimate or not self.largest_answered or size <= 0:
            return self.largest_estimate
        return self.largest_answered * silent // size

    def resume_answered(self, tokens: int) -> None:
        """A resumed session: the largest prompt (and answer) the endpoint answered in it, from the log's
        usage records. A process that resumes has answered nothing itself; without this its first silence
        would have nothing to be larger than, and a history grown past the window would stay silent."""
        self.largest_answered = max(self.largest_answered, tokens)

    def forget_silence(self) -> bool:
        """The person set CONTEXT_WINDOW (a reloaded .env): it wins over a window an empty answer bounded
        before, which may have been one glitch (not over one the API stated). True when one was dropped."""
        if not self.silent_at:
            return False
        self.window.learned, self.window.learned_from, self.silent_at = None, API_STATED, None
        self.continuity.use_settings(self.settings, self.limit, self.window.tokens)
        return True

    def window_cut(self, size: int) -> None:
        """An answer the window cut off when prompt and answer measured `size` tokens: the window is at
        most that (at least MIN_WINDOW, window.py's cut), used for the rest of the session and recorded."""
        if self.window.cut(size):
            self.silent_at = None
            self._window_changed(f"[context window is {self.window.tokens:,} tokens for this model; compacting "
                                 f"at {self.limit:,}]", quiet=False)

    def learn_window(self, maximum: int | None, quiet: bool = False, silent: int | None = None) -> None:
        """The API stated its window (or, `silent`, an earlier session learned it from an empty answer at
        that size): use it for the rest of the session, and say so once."""
        if not self.window.restore(maximum, silent):
            return
        self.silent_at = silent
        self._window_changed(f"[context window is {self.window.tokens:,} tokens for this model; compacting at "
                             f"{self.limit:,}]", quiet)

    def _window_changed(self, said: str, quiet: bool) -> None:
        self.continuity.use_settings(self.settings, self.limit, self.window.tokens)
        if self.on_window is not None and self.window.learned:
            self.on_window(self.window_record())
        if not quiet:
            self.emit(Notice(said, "warning"))

    def window_record(self) -> dict:
        """The session log's record of the learned window (resumed with learn_window)."""
        return {"t": "window", "tokens": self.window.learned,
                **({"silent": self.silent_at} if self.silent_at else {})}

    def take_told(self) -> None:
        """The window the server said when asked (llm/window_probe.py), once its answer is in: used
        from now on unless CONTEXT_WINDOW was set (the probe is not started then)."""
        probe, told = self.window_probe, None
        if probe is not None:
            told = probe.result()
        if told is None:
            return
        self.window_probe = None
        if self.window.tell(told.tokens, told.source):
            self.continuity.use_settings(self.settings, self.limit, self.window.tokens)
            self.emit(Notice(f"[context window {self.window.tokens:,} tokens ({self.window.source}); "
                             f"compacting at {self.limit:,}]", "info"))

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
        prep = self._prepared(messages)
        out = self.cheap_layers(messages, clear_all=cold, hold_snip=prep is not None)
        size, limit = self.measure(out), self.limit
        if self.schedule.last_size is None and first:    # a new session or a resumed one: the history
            self.schedule.last_size = self.measure(out[:-1])     # before this message is not its growth
        self.schedule.grew_to(size)
        early = cold and size > self.settings.cold_compact_at * limit and len(out) > 1    # not the turn's own
        #                                                              message alone: nothing before it to summarize
        if size <= limit and not early:
            if prep is not None and prep.ready and len(out) > self._snip_max():
                return self._apply(prep, out, messages, size, "a snip is due")      # better than the snip
            if first and prep is not None and prep.ready and self.schedule.turn_would_pass(size, limit):
                return self._apply(prep, out, messages, size, "this turn would pass the limit")
            if prep is not None and prep.ready and prep.held:
                return self._apply(prep, out, messages, size, "the results it covers were cleared")
            return out
        if prep is not None and not prep.done.is_set() and size > limit and self.auto_enabled:
            if not prep.held:                 # said once: the limit is passed, the summary goes in when ready
                self.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} > {limit:,} tokens · the summary "
                                           "being prepared goes in when it is ready"))
            out, count = self._cut(out, prep, "while the summary is prepared")   # the older work: the summary
            if count:                                                            # covers the snapshot's part
                prep.held = True
                size = self.measure(out)
            if size <= self.room:             # the recent work stays while the window has room: go on
                return out
        if not self.auto_enabled:
            self.breaker.warn_off(size, limit, self.emit)
            return out
        if size > limit:
            self.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} > {limit:,} tokens"))
        else:
            self.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} tokens and the prompt cache "
                                       "has expired: compacting now costs nothing extra"))
        if prep is not None:
            return self._apply(prep, out, messages, size)
        why = ("summary", f"{size:,} > {limit:,} tokens") if size > limit else \
            ("cold", f"{size:,} tokens, prompt cache expired")
        return self._summarize(out, "", AUTO, measured=size, sent=messages, why=why)

    # ---- the summary prepared in the background (prepared.py) ----------------------------
    @property
    def prompt_key(self) -> str:
        return self.prepared.key

    def _snip_max(self) -> int:
        return self.prepared.snip_max()

    def collect(self) -> None:
        """At a safe point of the loop's thread: take what the background job left (prepared.py)."""
        self.prepared.collect()

    def _prepared(self, messages) -> Preparation | None:
        return self.prepared.current(messages)

    def after_reply(self, sent: list[dict], messages, final: bool = True) -> None:
        """A model call answered: start preparing a summary if one is due (prepared.py)."""
        self.prepared.after_reply(sent, messages, final)

    def _cut(self, messages: list[dict], prep: Preparation, why: str) -> tuple[list[dict], int]:
        return self.prepared.hold(messages, prep, why)

    def _apply(self, prep: Preparation, out: list[dict], messages: list[dict], measured: int,
               why: str = "") -> list[dict]:
        return self.prepared.apply(prep, out, messages, measured, why)

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
        budget = int(input_budget(window, s.summary_max_tokens) / self.usage_scale)     # in the endpoint's tokens
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
                self._count_failure(kind, exc)
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

    def _count_failure(self, kind: CompactionKind, exc: Exception, where: str = "") -> None:
        self.breaker.failed(kind, exc, self.emit, where)

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
        scale = max(1.0, self.usage_scale, self.api_scale if scale is None else scale)
        target = self.fit_target

        def measure(history: list[dict]) -> int:
            return int(self.measure(history) * scale)

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
        prep = self._prepared(messages)
        estimate = estimate_tokens(messages, self.system, self.tools)
        scale = counted / estimate if counted and estimate else 1.0
        self.api_scale = max(self.api_scale, min(scale, 4.0)) if counted else self.api_scale
        self.emit(Compaction(REACTIVE, f"[{REACTIVE.label}] " + (why or f"the API says the prompt is too long{said}; "
                                                                  "compacting and retrying once")))
        self.learn_window(maximum)
        if prep is not None:
            applied = self._apply(prep, messages, messages, counted or estimate)
            if not maximum or estimate_tokens(applied, self.system, self.tools) * scale < maximum:
                return self.fit(applied)
            messages = applied
        return self.fit(self._summarize(messages, "", REACTIVE, scale=scale, stated=maximum,
                                        why=("reactive", f"prompt is too long{said}")))

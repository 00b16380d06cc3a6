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
  - the Window (window.py): CONTEXT_WINDOW or the one the API stated, and the limit it implies;
  - the CacheClock (window.py): a turn that starts after the prompt cache expired starts "cold" —
    then old results are cleared whatever their batch size, and the history is summarized once it is
    past COLD_COMPACT_AT of the limit, because the prompt is written again anyway;
  - the session's snip transcript (SnipCompact hands back the one it started, in the LayerContext),
    and the count of turns whose summary failed, in a row: after
    MAX_FAILURES the automatic summary stops until the person runs /compact, so a broken summary call
    can never make every turn slow or loop. A failed summary keeps the history and falls back to
    snipping and clearing harder.
`compact()` serves the compact tool and /compact; `reactive()` serves "prompt is too long" (and what
an endpoint says instead: an empty answer to a prompt past what it answered before, an answer cut by
the window — loop.py decides).

Usage is checked, not trusted: some compatible endpoints report input tokens without the system
prompt and tools, or without what their own cache held (a gateway in front of llama.cpp reported 17
where the model counted 525). A usage under USAGE_TRUST_SHARE of s08's own estimate of the same
request is not anchored on: the meter and every compaction decision use the estimate, and the
compactor says so once (`usage_doubt`, which /context shows).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from events import Compaction, CompactionKind, Emit, ignore, Notice
from storage import SNIPPED, relative
from .budget import BudgetSettings, ToolResultBudget, persist_outputs
from .continuity import Continuity
from .index import ContextMeter, MessageIndex
from .layer import Layer, LayerContext
from .micro import MicroCompact, micro_compact
from .snip import SnipCompact, snip_to_transcript
from .summary import Summarize, SummaryFailed, SummaryJob, compact_history, input_budget, reactive_compact
from .tokens import estimate_tokens, usage_tokens
from .window import CacheClock, Window

if TYPE_CHECKING:
    from config import Settings

AUTO, MANUAL, REACTIVE = CompactionKind.AUTO_COMPACT, CompactionKind.MANUAL_COMPACT, CompactionKind.REACTIVE_COMPACT
LAYERS: tuple[type[Layer], ...] = (ToolResultBudget, SnipCompact, MicroCompact)     # the cheap layers, in order
MAX_FAILURES = 3
USAGE_TRUST_SHARE = 0.5             # a usage under half of s08's estimate is taken as incomplete
FALLBACK_MIN_MESSAGES = 8
FALLBACK_PERSIST_CHARS = 4_000      # the fallback moves every output larger than this to disk


class Compactor:
    def __init__(self, settings, workspace: Path, summarize: Summarize, emit: Emit = ignore,
                 system=None, tools=None, continuity: Continuity | None = None, clock=None):
        self.workspace, self.summarize, self.emit = Path(workspace), summarize, emit
        self.system, self.tools = system, tools
        self.continuity = continuity or Continuity(workspace=self.workspace)
        self.cache = CacheClock(clock) if clock else CacheClock()
        self.on_window: Callable[[int], None] | None = None     # records a learned window (the session log)
        self.failures, self.auto_enabled = 0, True
        self.usage_doubt = ""           # why the endpoint's usage is not trusted ("" while it is)
        self.largest_answered = 0       # the largest prompt (tokens) this endpoint answered in the session
        self.api_scale = 1.0            # the endpoint's count of a prompt over s08's estimate, when it said one
        self.silences = 0               # empty answers in a row
        self.failed_this_turn = self.warned_this_turn = self.cold_turn = False
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
        self.continuity.use_settings(settings, self.limit)

    @property
    def limit(self) -> int:
        return self.window.limit

    def begin_turn(self, ttl: str = "5m") -> None:
        """A new user turn: failures are counted at most once per turn; a turn that starts after the
        prompt cache expired (for breakpoints of this `ttl` mode) is a cold one (see the module docstring)."""
        self.failed_this_turn = self.warned_this_turn = False
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
        self.largest_answered = max(self.largest_answered, self.measure(messages))    # as the next size is measured
        self.silences = 0
        self.cache.used()

    def silence_is_overflow(self, size: int) -> bool:
        """An empty answer to a prompt of `size` tokens: a context overflow when the prompt is near the window
        s08 knows, or larger than any this endpoint answered in the session (a window s08 does not know), or
        when the endpoint was silent the time before too (a resumed session may start past the window)."""
        self.silences += 1
        return size >= self.window.tokens * 0.9 or 0 < self.largest_answered < size or self.silences > 1

    def learn_window(self, maximum: int | None, quiet: bool = False) -> None:
        """The API stated its window: use it for the rest of the session, and say so once."""
        if not self.window.learn(maximum):
            return
        self.continuity.use_settings(self.settings, self.limit)
        if self.on_window is not None and self.window.learned:
            self.on_window(self.window.learned)
        if not quiet:
            self.emit(Notice(f"[context window is {self.window.tokens:,} tokens for this model; compacting at "
                             f"{self.limit:,}]", "warning"))

    # ---- the pipeline ------------------------------------------------------------------
    def cheap_layers(self, messages: list[dict], clear_all: bool = False) -> list[dict]:
        """The LAYERS in order, each looking again only at what changed since the last call (the index
        knows). `clear_all`: clear old results whatever their batch size. A layer that cannot write to
        disk (a full disk, a read-only workspace) is skipped for this call: that must not end the turn."""
        context = LayerContext(self.workspace, self.continuity, self.window, self.index, self.emit,
                               cold=clear_all, snip_transcript=self.snip_transcript)
        self.index.sync(messages)
        out = messages
        for layer in self.layers:
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
        """Run the four layers; returns the history to send (the input is never mutated)."""
        cold, self.cold_turn = self.cold_turn, False      # only the turn's first call starts cold
        out = self.cheap_layers(messages, clear_all=cold)
        size, limit = self.measure(out), self.limit
        early = cold and size > self.settings.cold_compact_at * limit
        if size <= limit and not early:
            return out
        if not self.auto_enabled:
            if not self.warned_this_turn and size > limit:
                self.warned_this_turn = True
                self.emit(Notice(f"[auto_compact is off after {MAX_FAILURES} failed summaries: {size:,} > "
                                 f"{limit:,} tokens — run /compact to try again]", "warning"))
            return out
        if size > limit:
            self.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} > {limit:,} tokens"))
        else:
            self.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} tokens and the prompt cache "
                                       "has expired: compacting now costs nothing extra"))
        why = ("summary", f"{size:,} > {limit:,} tokens") if size > limit else \
            ("cold", f"{size:,} tokens, prompt cache expired")
        return self._summarize(out, "", AUTO, measured=size, sent=messages, why=why)

    def _summarize(self, messages: list[dict], focus: str, kind: CompactionKind, measured: int | None = None,
                   scale: float = 1.0, sent: list[dict] | None = None, stated: int | None = None,
                   why: tuple[str, str] = ("summary", "")) -> list[dict]:
        """Summarize for `kind` (auto_compact, manual_compact, reactive_compact); on failure keep the
        history and — except for a manual compact — fall back to the non-model reduction. `stated`: the
        window an error just stated, used for this compaction even when too small to keep believing."""
        s, window = self.settings, min(self.window.tokens, stated or self.window.tokens)
        job = SummaryJob(self.summarize, focus=focus, workspace=self.workspace, system=self.system,
                         tools=self.tools, window=window, max_input_tokens=input_budget(window, s.summary_max_tokens),
                         measured=measured or self.measure(messages), sent=sent, continuity=self.continuity,
                         emit=self.emit, kind=why[0], trigger=why[1])
        try:
            if kind is REACTIVE:
                new = reactive_compact(messages, job, scale)
            else:
                new = compact_history(messages, job)
        except SummaryFailed as exc:
            if exc.trivial:
                self.emit(Notice(f"[{kind.label}: {exc}]", "info"))
            else:
                self._count_failure(kind, exc)
            return messages if kind is MANUAL else self._fallback(messages)
        self.failures, self.auto_enabled = 0, True
        self.meter.forget()
        return new

    def _count_failure(self, kind: CompactionKind, exc: Exception) -> None:
        self.emit(Notice(f"[{kind.label} failed: {exc}; the history was kept]", "warning"))
        if self.failed_this_turn:
            return
        self.failed_this_turn = True
        self.failures += 1
        if self.failures >= MAX_FAILURES and self.auto_enabled:
            self.auto_enabled, self.warned_this_turn = False, True
            self.emit(Notice(f"[auto_compact is off after {MAX_FAILURES} failed summaries in a row; "
                             "run /compact to try again]", "warning"))

    def _fallback(self, messages: list[dict]) -> list[dict]:
        """No model: every big output to disk (read_file's and unseen ones too), snip down to a short
        tail, and clear every old result."""
        before = estimate_tokens(messages, self.system, self.tools)
        target = max(FALLBACK_MIN_MESSAGES, self.settings.snip_target_messages // 2)
        try:
            out, paths = persist_outputs(messages, FALLBACK_PERSIST_CHARS, FALLBACK_PERSIST_CHARS,
                                         self.settings.preview_chars, preserve=frozenset(),
                                         workspace=self.workspace, emit=self.emit)
            for path in paths:
                self.continuity.saved(relative(self.workspace, path), "output")
            out, snipped_to = snip_to_transcript(out, target, target, workspace=self.workspace,
                                                 transcript=self.snip_transcript, continuity=self.continuity,
                                                 emit=self.emit, trigger="fallback: no summary")
            self.snip_transcript = snipped_to or self.snip_transcript
        except OSError as exc:
            self.emit(Notice(f"[fallback could not write to disk: {exc.strerror or exc}]", "warning"))
            out = messages
        out = micro_compact(out, keep_recent=1, preserve=frozenset(), clear_at_least=0, emit=self.emit)
        after = estimate_tokens(out, self.system, self.tools)
        self.emit(Compaction(CompactionKind.FALLBACK, f"[fallback] cut without the model: {before:,} → {after:,} "
                             "tokens" if after < before else "[fallback] nothing more to cut without the model"))
        return out

    # ---- on request ------------------------------------------------------------------
    def compact(self, messages: list[dict], focus: str = "") -> list[dict]:
        """The compact tool and /compact: summarize now (with an optional focus)."""
        self.emit(Compaction(MANUAL, f"[{MANUAL.label}]" + (f" focus: {focus}" if focus else "")))
        self.failures, self.auto_enabled, self.failed_this_turn = 0, True, False
        return self._summarize(messages, focus, MANUAL, why=("manual", "compact" + (f", focus: {focus}" if focus else "")))

    def reactive(self, messages: list[dict], counted: int | None = None, maximum: int | None = None,
                 why: str = "") -> list[dict]:
        """The API said the prompt is too long (`counted` > `maximum` tokens, when it said the numbers):
        the window it stated is used from now on; keep a recent tail, summarize the rest. The API's
        count against our own estimate of the same request scales every budget to the API's tokens.
        `why`: what the endpoint did instead of saying so (the line shown then)."""
        said = f" ({counted:,} > {maximum:,} tokens)" if counted and maximum else ""
        estimate = estimate_tokens(messages, self.system, self.tools)
        scale = counted / estimate if counted and estimate else 1.0
        self.api_scale = max(self.api_scale, min(scale, 4.0)) if counted else self.api_scale
        self.emit(Compaction(REACTIVE, f"[{REACTIVE.label}] " + (why or f"the API says the prompt is too long{said}; "
                                                                  "compacting and retrying once")))
        self.learn_window(maximum)
        return self._summarize(messages, "", REACTIVE, scale=scale, stated=maximum,
                               why=("reactive", f"prompt is too long{said}"))

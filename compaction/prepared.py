"""Applying a summary prepared in the background (background.py makes it): when it is started, what
the loop clears at the limit while it is still written, and what becomes a pointer once it goes in.

    after a model call                  start(history as sent)       at a turn's end: when the next turns
                                                                     would pass the limit (schedule.py);
                                                                     inside a turn: when the next CALLS_AHEAD
                                                                     calls would pass it
    before a call, past the limit,      hold_now → hold(history)     carried while the summary is expected
      the summary still written                                      within fewer calls than make up the cache
                                                                     rewrite; else what its snapshot holds
                                                                     (it covers it), all at once; still past
                                                                     the limit, the older work after it too;
                                                                     the window full, the recent work, oldest
                                                                     first
    before a call, when it is due       apply(prep, history)         the summary replaces the snapshot's
                                                                     part; the recent work stays whole; the
                                                                     seen results between the snapshot and
                                                                     the recent work become pointers

Why so: what the model read between the snapshot and the moment the summary goes in is in no summary.
Started two calls before the limit — not a summary-time before it — the summary leaves out only what is
read while it is written, and reads the history it covers from the prompt cache. Keeping that part
whole instead was measured (bench/background.py): every long-turn file then ends whole or summarized,
but the part is written to the prompt cache again after the summary and carried in every request, +12 %
to +49 % billed input; as pointers it costs +1 % to +6 %.

`PreparedSummaries` is the Compactor's part for this (pipeline.py calls it); it reads the compactor
(`host`) for the settings, the window, the meter and the blocking paths it falls back to.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from events import Compaction, CompactionKind, SummaryWait
from messages import blocks
from storage import finish_transcript
from storage.safe import own_path
from .background import Preparation, covers, prompt_key
from .boundaries import result_text
from .cut import clear_to_pointers, clearing_saves, picks_to_target, seen_between
from .markers import PLACEHOLDER_PREFIX
from .recent import recent_start
from .summary import (MIN_SUMMARIZABLE_TOKENS, SummaryFailed, SummaryJob, input_budget, note_transcript,
                      summarized_history)
from .tokens import estimate_tokens

if TYPE_CHECKING:
    from .pipeline import Compactor

AUTO = CompactionKind.AUTO_COMPACT
CACHE_READ, CACHE_WRITE = 0.1, 1.25     # what a token read from the prompt cache and one written to it are billed,
                                        # against an uncached one (the API's prices)
REFRESH_SHARE = 0.1         # a ready summary is made again at a turn's end when what no summary covers is
                            # more than this share of the limit and the next turn will apply it (the
                            # person's pause hides it; earlier, it would be made again at every turn's end)


def held_picks(messages: list[dict], covered: int, recent: int) -> set[tuple[int, int]]:
    """At the limit while a summary of messages[:covered] is written: the seen results it covers, before
    the recent work (`recent`, recent.py) — cleared all at once, the summary holds them."""
    return seen_between(messages, 0, min(covered, recent))


class PreparedSummaries:
    def __init__(self, host: Compactor):
        self.host = host

    @property
    def key(self) -> str:
        h = self.host
        return prompt_key(h.settings.model_id, h.system, h.tools, h.settings.summary_max_tokens)

    def snip_max(self) -> int:
        return next((layer.settings.max_messages for layer in self.host.layers  # type: ignore[attr-defined]
                     if layer.name is CompactionKind.SNIP_COMPACT), 1 << 30)

    def collect(self) -> None:
        """At a safe point of the loop's thread: take what the background job left (its usage events,
        its record in the session log); a failed one counts against the summary like a blocking one."""
        h = self.host
        failed = h.background.collect(h.emit)
        if failed is not None and failed.error is not None and str(failed.error) != "cancelled":
            h.breaker.failed(AUTO, failed.error, h.emit, " (prepared in the background)")

    def current(self, messages) -> Preparation | None:
        """The prepared summary (ready or in flight) that may replace a prefix of `messages`, if any."""
        h = self.host
        self.collect()
        if h.background.current is None:
            return None
        if h.settings.background_compact != "on":
            h.background.drop("BACKGROUND_COMPACT is off")
            return None
        return h.background.usable(messages, self.key)

    def after_reply(self, sent: list[dict], messages, final: bool = True) -> None:
        """A model call answered (`final`: without tool calls — the turn ends, the person reads and types).
        Past PREPARE_AT of the limit, start summarizing the history as it was sent (`sent`: it ends where
        the reply begins, so no tool round is cut and the cache holds it):
          - at a turn's end, when the next turns, adding as much as the last ones, would pass the limit
            (schedule.py) — the person's pause hides the summary; the next turn applies it first if that
            turn alone would pass the limit, else at the limit; a ready one is made again at a turn's
            end when more than REFRESH_SHARE of the limit came after it and the next turn will apply it;
          - inside a turn, when the next call, growing as much as the largest of the last ones, would
            pass the limit: it covers all but what is read while it is written."""
        h = self.host
        self.collect()
        size = h.measure(messages)
        h.schedule.answered(size, time.monotonic(), final)
        if (h.settings.background_compact != "on" or not h.breaker.auto_enabled or h.breaker.failed_this_turn
                or not sent or sent[-1].get("role") != "user"):
            return
        if (size < h.settings.prepare_at * h.limit or estimate_tokens(sent) < MIN_SUMMARIZABLE_TOKENS
                or final and not h.prepare_between_turns):
            return
        if final and not h.schedule.due_between_turns(size, h.limit):
            return
        prep = self.current(messages)
        if prep is not None:                           # one at a time
            uncovered = size - estimate_tokens(list(prep.snapshot), h.system, h.tools)
            if not (final and prep.ready and uncovered > REFRESH_SHARE * h.limit
                    and h.schedule.turn_would_pass(size, h.limit)):    # made again only for the turn
                return                                                 # that will apply it
            h.background.drop("a newer snapshot is prepared")
        elif not final and not h.schedule.due_in_turn(size, h.limit):
            return
        s, window = h.settings, h.window.tokens
        job = SummaryJob(h.summarize, workspace=h.workspace, system=h.system, tools=h.tools,
                         window=window, max_input_tokens=input_budget(window, s.summary_max_tokens), measured=size,
                         trigger=f"prepared in the background at {size:,} tokens, for the limit {h.limit:,}")
        h.background.start(sent, self.key, job, h.background_summarize)

    def hold_now(self, messages: list[dict], prep: Preparation, size: int) -> bool:
        """Past the limit with `prep` still written: clear what it covers now? Clearing writes the prompt
        cache again from the first cleared result (CACHE_WRITE × the rest, and again when the summary goes
        in); carrying it past the limit reads it at each call (CACHE_READ × what clearing would save). So it
        is carried while the summary is expected within fewer calls than make up the rewrite — how long
        summaries took here, how long this turn's calls take — and cleared otherwise, or when nothing tells
        yet (the session's first summary), or the prompt passed the limit by more than the recent work's
        budget (RECENT_WORK × the limit), or the window is full. A summary later than expected (retries,
        a slow endpoint) is carried only until what carrying cost equals the rewrite: never more than
        twice the better choice. With nothing of the snapshot's left to clear (or that done), the older
        work after it is weighed the same way."""
        h = self.host
        if size > min(h.room, h.limit + h.recent_budget):      # carried no further past the limit than the
            return True                                         # recent work's size
        typical, call = h.background.typical_seconds(), h.schedule.call_seconds()
        if typical is None or not call:
            return True
        recent = recent_start(messages, h.recent_budget)
        saves, first = clearing_saves(messages, held_picks(messages, prep.n, recent))
        if not saves:
            saves, first = clearing_saves(messages, seen_between(messages, 0, recent))
        rent, buy = CACHE_READ * saves, CACHE_WRITE * max(0, estimate_tokens(messages[first:]) - saves)
        calls = max(0.0, typical - (time.monotonic() - prep.started)) / call
        if prep.buy is None:
            prep.buy = buy              # the price when first carried: what carrying is weighed against
        prep.carried += rent
        return calls * rent > buy or prep.carried > prep.buy

    def hold(self, messages: list[dict], prep: Preparation, why: str) -> tuple[list[dict], int]:
        """(history, count cleared): the limit is reached while `prep` is written: what its snapshot holds
        (`held_picks`), all at once — the prompt cache is
        written again once, not at every call past the limit; still past the limit, the older work after
        it too (no summary will cover it); the window full still, the recent work, oldest first (cut.py).
        Anything cleared marks `prep` held (it goes in once ready) and starts its carrying cost afresh."""
        h = self.host
        recent = recent_start(messages, h.recent_budget)
        out, count = clear_to_pointers(messages, held_picks(messages, prep.n, recent), h.workspace, h.continuity,
                                       h.emit, why)
        if h.measure(out) > h.limit:               # (positions are unchanged: clearing moves no message)
            out, more = clear_to_pointers(out, seen_between(out, 0, recent), h.workspace, h.continuity, h.emit,
                                          why + ", no summary covering them")
            count += more
        if h.measure(out) > h.room:
            out, more = self.to_room(out, recent, why + ", the window being full")
            count += more
        if count:
            prep.held, prep.carried, prep.buy = True, 0.0, None
        return out, count

    def to_room(self, messages: list[dict], recent: int, why: str) -> tuple[list[dict], int]:
        """The window has no room: seen results cleared oldest first — before `recent` first — down to it."""
        h = self.host
        picks = picks_to_target(messages, h.room, h.measure, recent)
        return clear_to_pointers(messages, picks, h.workspace, h.continuity, h.emit, why)

    def apply(self, prep: Preparation, out: list[dict], messages: list[dict], measured: int,
              why: str = "") -> list[dict]:
        """Put the prepared summary in place of what it covers (waiting for it if it is in flight); the recent
        work stays whole, and the results the model has seen between the snapshot and the recent work become
        pointers to their saved copies (no summary covers them). Still over the limit: the next summary is prepared after the next answer, or — past the
        room — the blocking summary tops it up. It failed: as a blocking summary that failed."""
        h = self.host
        waited = 0.0
        if not prep.done.is_set():
            h.emit(SummaryWait(prep.started))
            begun = time.monotonic()
            h.background.wait(prep, lambda _started: None)
            waited = time.monotonic() - begun
            self.collect()
            if prep.text is None:
                return h._fallback(out)
        if h.hooks:        # PreCompact fires as the prepared summary goes in (it cannot change it any more)
            added, refused = h.hooks.pre_compact("auto", "")
            if refused is not None or added:
                h.background.drop("a PreCompact hook " + ("blocked it" if refused is not None else "added instructions"))
                return h._hooked_instead(out, messages, measured, refused, added)
        base = out if covers(prep.snapshot, out) else messages if covers(prep.snapshot, messages) else None
        if base is None:
            h.background.drop("the history it covers changed")
            return h._summarize(out, "", AUTO, measured=measured, sent=messages, hooked=bool(h.hooks))
        note_transcript(h.continuity, prep.transcript, h.emit, prep.header)
        recent = recent_start(base, h.recent_budget)
        keep_from = min(prep.n, recent)         # the recent work stays whole, in the snapshot's part too
        try:
            new, _ = summarized_history(base, keep_from, prep.text or "", prep.transcript, h.continuity,
                                        h.system, h.tools,        # smaller than what it summarized (a part
                                        estimate_tokens(list(prep.snapshot) + base[prep.n:],  # cleared while
                                                        h.system, h.tools))                   # it was written)
        except SummaryFailed as exc:
            h.background.drop(str(exc))
            h.breaker.failed(AUTO, exc, h.emit)
            return h._fallback(out)
        h.background.applied(prep)
        if h.hooks:
            h.hooks.post_compact("auto", prep.text or "")
        shift = 1 - keep_from                   # base index → index in `new` (the summary message is first)
        new, _ = clear_to_pointers(new, seen_between(new, prep.n + shift, recent + shift), h.workspace,
                                   h.continuity, h.emit, "no summary covers")   # after the snapshot, before the
        #   recent work: kept whole, it would be written to the prompt cache again and carried in every request
        #   (measured: +12 % to +49 % billed input in bench/background.py's long turn)
        after = estimate_tokens(new, h.system, h.tools)
        uncovered = sum(1 for m in new[1:] for b in blocks(m) if b.get("type") == "tool_result"
                        and result_text(b).startswith(PLACEHOLDER_PREFIX))
        try:
            finish_transcript(own_path(prep.transcript, h.workspace), tokens_before=measured, tokens_after=after)
        except OSError:
            pass                           # the header keeps tokens_after null
        h.breaker.succeeded()
        h.meter.forget()
        ago = time.monotonic() - (prep.finished or time.monotonic())
        made = "from the session log" if prep.restored else f"prepared in {prep.seconds:.1f} s, {ago:.0f} s ago"
        wait = f" · waited {waited:.1f} s" if waited >= 0.05 else ""
        h.emit(Compaction(CompactionKind.COMPACTED, f"[{AUTO.label} applied: {measured:,} → {after:,} tokens · "
                          f"{made}{wait}]" + (f" ({why})" if why else ""),
                          {"before": measured, "after": after, "transcript": prep.transcript,
                           "header": {**prep.header, "tokens_before": measured, "tokens_after": after},
                           "prepared_seconds": prep.seconds, "waited": waited, "covered": prep.n,
                           "uncovered": uncovered}))
        if base is not out:                # the history as sent: the cheap layers run on the result
            new = h.cheap_layers(new)
        size = h.measure(new)
        if h.limit < size <= h.room:       # the next summary is prepared after the next answer (past the
            return new                     # limit, it is due at once): nobody waits for a top-up
        if size > h.limit:                 # the part after the snapshot alone is too big: top it up
            h.emit(Compaction(AUTO, f"[{AUTO.label} triggered] {size:,} > {h.limit:,} tokens after the "
                                    "prepared summary"))
            return h._summarize(new, "", AUTO, measured=size)
        return new

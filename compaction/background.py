"""Summaries prepared in the background, so a compaction never stops the person or the agent.

    after a model call, context > PREPARE_AT × limit       start(snapshot)   one thread, one at a time
        snapshot = the history exactly as just sent        (it ends where the reply starts: a clean
                                                            boundary, and the prompt cache holds it)
        thread:  transcript of the snapshot → the summary request of the blocking compaction
                 (summary.ask_summary: same system, tools, cached prefix, checks) → text or SummaryFailed
    before a model call, when a compaction is called for   the prepared summary replaces
        (the limit, a cold cache, "prompt is too long",      history[:len(snapshot)] (pipeline.py applies
         a turn that would pass the limit)                   it with summary.summarized_history, as a
                                                            blocking one); after it, the calls stay and
                                                            the results the model has seen become pointers
        in flight at the limit? the results the model has seen are cleared (the summary covers the
        snapshot's part from what it was sent) and the loop goes on; only if that is not enough does it
        wait for it (SummaryWait events, with the seconds) — never does it start another

The thread never touches the history, the continuity or the session log: it works on its own deep
copy of the snapshot and leaves its result and the events of its model call (usage, retries) in its
Preparation; the loop's thread takes them at a safe point (`collect`), logs the records and emits the
events, so nothing the job does lands in the middle of what the person types.

A preparation covers the present history when the present one starts with the snapshot's messages:
the same objects, or the same messages with only the contents of their blocks rewritten by a cheap
layer (a result cleared or persisted) — never moved, dropped or added. Its `key` (model, system
prompt, tools, summary size) must still be the compactor's. Anything else makes it stale:
it is dropped, never applied (`drop`: /clear, /compact, /retry, a resume repair).

Session log records (session.py), written by the loop's thread through `on_record`:
    {"t": "prepare",  "n": 34, "hash": …, "key": …}                 a summary of the first 34 messages started
    {"t": "prepared", "n": 34, "hash": …, "key": …, "text": …, "transcript": …, "seconds": 12.1}  it is ready
    {"t": "dropped",  "n": 34, "why": "…"}                          it will never be applied
    {"t": "applied",  "n": 34}                                      it replaced them (the "replace" follows)
Replay (session_replay.py) keeps the last "prepared" one no later record invalidated; a resume offers
it again (`restore`) only if the resumed history's first n messages hash the same.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from events import Emit, RequestStarted, ResponseDone, Retrying
from storage import transcript_header
from messages import blocks
from .boundaries import safe_cuts
from .summary import SummaryFailed, SummaryJob, ask_summary, save_transcript

WAIT_STEP = 0.25          # seconds between two looks of the waiting loop (Ctrl-C is felt at once)


class Cancelled(BaseException):
    """Raised inside the job's model call once s08 no longer wants its result (not an Exception: no
    retry or failure path catches it)."""


def history_hash(messages) -> str:
    return hashlib.sha256(json.dumps(list(messages), sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:32]


def prompt_key(model: str, system, tools, summary_max_tokens: int) -> str:
    """What the summary request depends on besides the history: a change makes a prepared summary stale."""
    text = json.dumps([model, system, tools, summary_max_tokens], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _shape(message: dict) -> tuple:
    return (message.get("role"), tuple((b.get("type"), b.get("id") or b.get("tool_use_id")) for b in blocks(message)))


def covers(snapshot, messages) -> bool:
    """Does `messages` start with `snapshot` (same objects, or only their blocks' contents rewritten),
    followed by a clean boundary?"""
    k = len(snapshot)
    if k == 0 or len(messages) < k:
        return False
    for old, new in zip(snapshot, messages):
        if old is not new and _shape(old) != _shape(new):
            return False
    return safe_cuts(list(messages))[k]


@dataclass
class Preparation:
    snapshot: tuple              # the history as sent: the loop's own message objects (never mutated)
    key: str
    hash: str
    started: float               # time.monotonic()
    transcript: str = ""
    header: dict = field(default_factory=dict)     # the transcript's first line (storage.transcript_header)
    text: str | None = None
    error: SummaryFailed | None = None
    seconds: float = 0.0         # how long it took
    finished: float | None = None  # time.monotonic() when it was ready
    restored: bool = False       # from the session log (a resume)
    collected: bool = False      # the loop has taken its events and logged it
    held: bool = False           # the limit was held by clearing results while it was prepared: apply it once ready
    passed: bool = False         # the limit was passed while it was prepared (said once)
    carried: float = 0.0         # what carrying past the limit what it covers cost so far (prepared.py)
    buy: float | None = None     # … and what clearing it cost when it was first carried
    events: list = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    @property
    def n(self) -> int:
        return len(self.snapshot)

    @property
    def ready(self) -> bool:
        return self.done.is_set() and self.text is not None

    def _emit(self, event) -> None:
        """The job's model call reports here (from its thread): usage and retries are kept for the loop;
        the rest (the text streaming in) only tells the job whether to stop."""
        if isinstance(event, (ResponseDone, Retrying)):
            self.events.append(event)
        elif self.cancelled.is_set() and not isinstance(event, RequestStarted):
            raise Cancelled()


Summarize = Callable[[list[dict], Emit], tuple[str, "str | None"]]


class Background:
    """The compactor's one background summary (or none), and its records."""

    def __init__(self, workspace: Path):
        self.workspace = Path(workspace)
        self.current: Preparation | None = None
        self.on_record: Callable[[dict], None] | None = None
        self.wasted = self.started_count = 0
        self.threads: list[threading.Thread] = []
        self.timed: list[float] = []          # seconds each finished summary job took

    # ---- the loop's thread -------------------------------------------------------------------
    def start(self, snapshot: list[dict], key: str, job: SummaryJob, summarize: Summarize) -> Preparation:
        """Summarize `snapshot` (the history as just sent) in a new thread."""
        prep = Preparation(tuple(snapshot), key, history_hash(snapshot), time.monotonic())
        source = copy.deepcopy(list(snapshot))      # the job's own copy: nothing it holds is the loop's

        def model(request: list[dict]):
            return summarize(request, prep._emit)
        job = replace(job, summarize=model, emit=lambda _event: None, continuity=None)
        prep.thread = threading.Thread(target=self._run, args=(prep, source, job), name="s08-summary", daemon=True)
        self.current = prep
        self.started_count += 1
        self._record({"t": "prepare", "n": prep.n, "hash": prep.hash, "key": key})
        self.threads = [t for t in self.threads if t.is_alive()] + [prep.thread]
        prep.thread.start()
        return prep

    @staticmethod
    def _run(prep: Preparation, source: list[dict], job: SummaryJob) -> None:
        try:
            workspace = Path(job.workspace or Path.cwd())
            prep.header = transcript_header(workspace, job.kind, job.trigger, job.measured, None,
                                            0, len(source), len(source))
            prep.transcript = save_transcript(source, workspace, prep.header)[0]
            prep.text = ask_summary(source, job, prep.transcript)
        except SummaryFailed as exc:
            prep.error = exc
        except Cancelled:
            prep.error = SummaryFailed("cancelled")
        except BaseException as exc:  # noqa: BLE001 — a bug in the job must not kill s08; it is reported
            prep.error = SummaryFailed(f"{type(exc).__name__}: {exc}")
        finally:
            prep.seconds = time.monotonic() - prep.started
            prep.finished = time.monotonic()
            prep.done.set()

    def collect(self, emit: Emit) -> Preparation | None:
        """At a safe point: hand over the finished job's events and log it. Returns the preparation if
        it just failed (the caller counts the failure)."""
        prep = self.current
        if prep is None or prep.collected or not prep.done.is_set():
            return None
        prep.collected = True
        self.timed.append(prep.seconds)
        for event in prep.events:
            emit(event)
        prep.events = []
        if prep.text is not None:
            self._record({"t": "prepared", "n": prep.n, "hash": prep.hash, "key": prep.key, "text": prep.text,
                          "transcript": prep.transcript, "seconds": round(prep.seconds, 3)})
            return None
        self.current = None
        self.wasted += 1
        self._record({"t": "dropped", "n": prep.n, "why": str(prep.error)})
        return prep

    def usable(self, messages, key: str) -> Preparation | None:
        """The preparation (ready or in flight) that covers `messages` with this key; a stale one is dropped."""
        prep = self.current
        if prep is None:
            return None
        if prep.key != key:
            self.drop("the summary's prompt changed (model, system prompt, tools or SUMMARY_MAX_TOKENS)")
            return None
        if not covers(prep.snapshot, messages):
            self.drop("the history it covers changed")
            return None
        return prep

    def wait(self, prep: Preparation, tick: Callable[[float], None]) -> None:
        """Wait for the preparation in flight; `tick(started)` between looks. A Ctrl-C interrupts the
        wait (the turn), not the preparation."""
        while not prep.done.wait(WAIT_STEP):
            tick(prep.started)

    def typical_seconds(self) -> float | None:
        """How long the last summaries took (None before the first)."""
        return max(self.timed[-3:]) if self.timed else None

    def applied(self, prep: Preparation) -> None:
        self.current = None
        self._record({"t": "applied", "n": prep.n})

    def drop(self, why: str) -> None:
        """The preparation will never be applied: stop its job (cheaply) and forget it."""
        prep, self.current = self.current, None
        if prep is None:
            return
        prep.cancelled.set()
        if not (prep.done.is_set() and prep.text is None):        # a failed one was counted already
            self.wasted += 1
        self._record({"t": "dropped", "n": prep.n, "why": why})

    def restore(self, messages, prepared: dict | None) -> bool:
        """A resumed session's prepared summary (session_replay.py), if the resumed history still starts
        with exactly what it summarized."""
        if not prepared or len(messages) < prepared["n"] or history_hash(messages[:prepared["n"]]) != prepared["hash"]:
            return False
        now = time.monotonic()
        prep = Preparation(tuple(messages[:prepared["n"]]), prepared["key"], prepared["hash"], now,
                           transcript=prepared["transcript"], text=prepared["text"], seconds=prepared["seconds"],
                           finished=now, restored=True, collected=True)
        prep.done.set()
        self.current = prep
        return True

    def close(self) -> None:
        """s08 is leaving: the job in flight stops at its next streamed piece; its thread is a daemon."""
        if self.current is not None and not self.current.done.is_set():
            self.current.cancelled.set()

    # ---- any thread (the status line reads it) ----------------------------------------------------
    def status(self) -> str:
        prep = self.current
        if prep is None:
            return ""
        if not prep.done.is_set():
            return f"preparing summary… {int(time.monotonic() - prep.started)}s"
        return "summary ready" if prep.text is not None else ""

    def describe(self) -> str:
        """/context's line about it."""
        prep = self.current
        if prep is None:
            return "none"
        if not prep.done.is_set():
            held = "; the limit was reached, so the results the model had seen were cleared meanwhile" if prep.held else ""
            return f"being prepared for {int(time.monotonic() - prep.started)} s, covers the first {prep.n} messages{held}"
        if prep.text is None:
            return f"failed: {prep.error}"
        ago = int(time.monotonic() - (prep.finished or prep.started))
        took = "from the session log" if prep.restored else f"prepared in {prep.seconds:.1f} s, {ago} s ago"
        return f"ready ({took}), covers the first {prep.n} messages"

    def _record(self, record: dict) -> None:
        if self.on_record is not None:
            self.on_record(record)

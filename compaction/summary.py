"""Layer 4 — compact_history (and reactive_compact): replace the history with a model-written summary.

    history ──► .transcripts/<session>-NNN-<kind>.jsonl          (a header, then everything, one message per line)
        └────► summary request: the history as sent + the summary instruction (no tools)
                 (shortened oldest-first only when it would not fit the model's window)
    new history = [ summary message: "[compacted] … transcript: <path>"
                                     + the summary
                                     + the work ledger                      ┐ continuity.py: kept by
                                     + the person's messages, verbatim ]    ┘ s08, not by the summary
                  + the recent work (recent.py: the newest results the model has seen, up to
                    RECENT_WORK of the limit) and the latest tool round, if the model has not seen it yet

`summarize(messages) -> (text, stop_reason)` is passed in (the app gives it
the real model). A summary that fails — an error, empty, cut off by
max_tokens, or not smaller than what it replaces — raises SummaryFailed and
the input is left as it was. reactive_compact is the same operation keeping a
larger recent tail, for when the API has already said the prompt is too long.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from events import Compaction, CompactionKind, Emit, ignore
from messages import blocks
from llm.contract import ErrorKind
from storage import SUMMARIZED, finish_transcript, relative, transcript_header, write_transcript
from .boundaries import safe_cuts, unseen_start
from .continuity import Continuity
from .markers import COMPACTED_PREFIX, SUMMARY_PREFIX
from .recent import recent_start
from .tokens import estimate_message, estimate_tokens

CONTEXT_WINDOW, SUMMARY_MAX_TOKENS = 200_000, 2_000     # defaults = config.py's
MAX_REACTIVE_RETRIES = 1
CLIP_STEPS = (20_000, 4_000, 1_000, 200)   # when shortening, one block keeps at most this much (head + tail)
WINDOW_MARGIN = 1_000
MIN_SUMMARIZABLE_TOKENS = 400              # less than this before the kept tail: not worth a model call
MIN_HEAD_TOKENS = 200                      # a summary cut down to fit keeps at least this
HEAD_SLACK = 20                            # tokens a summary cut down to fit stays under what it replaces

SUMMARY_INSTRUCTION = """<summary-request>
Summarize the conversation above so that the work can continue from your summary alone; the full
transcript is saved separately. Do not call any tools. Use these sections:
1. User goals and explicit instructions — quote every request and constraint of the user verbatim.
2. Files touched — exact paths, and what was read, created or changed in each.
3. Commands run — the commands and their outcomes (exit codes, key output, errors).
4. Decisions — what was decided and why.
5. Errors — problems met and whether they were resolved.
6. Current state — what is done and what is in progress.
7. Next steps — what remains for the user's current request.
{focus}Be concise but keep every detail needed to continue: names, paths, numbers. Stay under about 700 words.
</summary-request>"""

Summarize = Callable[[list[dict]], tuple[str, str | None]]


@dataclass(frozen=True)
class SummaryJob:
    """One summary to make: the model call and what the summary message is built with.

    summarize         the model (`summarize(messages) -> (text, stop_reason)`)
    focus             what /compact asked to pay special attention to
    workspace         where the transcript is saved (default: the current folder)
    system, tools     the prompt's fixed part, for the sizes
    window            the model's window in tokens (sizes reactive_compact's tail and the default budget)
    max_input_tokens  what the summary request may use (default: input_budget(window))
    measured          the prompt size the caller measured, shown in the event
    sent              the history as it was last sent, before this call's cheaper layers rewrote it
    continuity        the person's messages and the work ledger (default: read from the history)
    emit              where the events go
    kind, trigger     what the transcript's header says: summary, cold, manual or reactive, and why
    recent_work       tokens of the newest seen results kept verbatim after the summary (recent.py)
    """
    summarize: Summarize
    focus: str = ""
    workspace: Path | None = None
    system: Any = None
    tools: Any = None
    window: int = CONTEXT_WINDOW
    max_input_tokens: int | None = None
    measured: int | None = None
    sent: list[dict] | None = None
    continuity: Continuity | None = None
    emit: Emit = ignore
    kind: str = SUMMARIZED
    trigger: str = ""
    recent_work: int = 0


class SummaryFailed(Exception):
    """The summary could not be made; the message says why in one line. `trivial` means there was
    nothing worth summarizing (not a failure of the model, so it does not count against it)."""

    def __init__(self, message: str, trivial: bool = False):
        super().__init__(message)
        self.trivial = trivial


def input_budget(window: int, summary_max_tokens: int = SUMMARY_MAX_TOKENS) -> int:
    """Tokens the summary request may use: the window minus room for the summary and a margin."""
    return window - min(summary_max_tokens, window // 4) - min(WINDOW_MARGIN, window // 20)


def summary_instruction(focus: str = "") -> str:
    extra = f"Pay special attention to: {focus.strip()}\n" if focus and focus.strip() else ""
    return SUMMARY_INSTRUCTION.format(focus=extra)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit:,} chars left out of this summary request ...]\n{text[-half:]}"


def _shortened_summary(text: str, limit: int) -> str:
    """A summary too long for the room a small window leaves: its head and tail (the history it covers
    is whole in its transcript)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return (f"{text[:half]}\n[… {len(text) - limit:,} characters of this summary left out to fit the model's "
            f"window …]\n{text[-half:]}")


def _clip_message(message: dict, limit: int) -> dict:
    out = []
    for b in blocks(message):
        if b.get("type") == "text":
            b = {**b, "text": _clip(b["text"], limit)}
        elif b.get("type") == "tool_result" and isinstance(b.get("content"), str):
            b = {**b, "content": _clip(b["content"], limit)}
        elif b.get("type") == "tool_use" and len(json.dumps(b.get("input", {}))) > limit:
            b = {**b, "input": {k: _clip(v, limit // 4) if isinstance(v, str) else v for k, v in b["input"].items()}}
        out.append(b)
    return {**message, "content": out}


def summary_request(messages: list[dict], instruction: str, max_input_tokens: int, system=None,
                    tools=None, transcript: str = "") -> list[dict]:
    """The messages of the summary call: the history as sent plus the instruction. Only when that
    would not fit: clip big blocks (harder and harder) and drop the oldest messages, cutting only
    where no tool pair is split, until it fits."""
    ask = {"role": "user", "content": instruction}
    fixed = estimate_tokens([ask], system, tools)
    if fixed + sum(estimate_message(m) for m in messages) <= max_input_tokens:
        return messages + [ask]
    safe = safe_cuts(messages)
    starts = [i for i in range(len(messages)) if safe[i]] or [len(messages) - 1]
    for limit in CLIP_STEPS:
        clipped = [_clip_message(m, limit) for m in messages]
        sizes = [estimate_message(m) for m in clipped]
        suffix = [0] * (len(clipped) + 1)
        for i in range(len(clipped) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + sizes[i]
        fitting = [i for i in starts if fixed + suffix[i] <= max_input_tokens]
        if fitting or limit == CLIP_STEPS[-1]:
            start = fitting[0] if fitting else starts[-1]
            break
    kept = clipped[start:]
    if start:
        note = {"role": "user", "content": f"[{start} earlier messages are left out of this summary request "
                                           f"to fit the model's window; they are in {transcript}]"}
        kept = [note] + kept
    return kept + [ask]


def _keep_from(messages: list[dict], keep_tail_tokens: int) -> int:
    """Where the verbatim tail starts: the unseen round, or a larger recent tail (reactive)."""
    keep_from, safe = unseen_start(messages), safe_cuts(messages)
    if keep_tail_tokens:
        budget = keep_tail_tokens - sum(estimate_message(m) for m in messages[keep_from:])
        while keep_from > 1 and budget - estimate_message(messages[keep_from - 1]) >= 0:
            keep_from -= 1
            budget -= estimate_message(messages[keep_from])
        while keep_from < len(messages) and not safe[keep_from]:
            keep_from += 1
    return keep_from


def _ask(summarize: Summarize, make_request) -> tuple[str, str | None]:
    """Call the model; if it says the summary request itself is too long, retry once at half size."""
    for budget_share in (1.0, 0.5):
        try:
            return summarize(make_request(budget_share))
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 — any failure of the call is a failed summary
            if budget_share == 1.0 and getattr(exc, "kind", None) is ErrorKind.PROMPT_TOO_LONG:
                continue
            raise SummaryFailed(f"the summary call failed: {exc}") from None
    raise AssertionError("unreachable")


def compact_history(messages: list[dict], job: SummaryJob, keep_from: int | None = None) -> list[dict]:
    """Summarize the history and return the short one; raise SummaryFailed leaving the input as it was.

    The summary request is the history as it was last sent (`job.sent`: its prefix is what the prompt
    cache holds) up to the round the model has not seen, which is kept verbatim anyway; then the
    instruction. `keep_from` (a summary prepared in the background, background.py): the history is
    summarized up to there — `job.sent` is then that part, as it was sent — and kept verbatim after."""
    return _summarized(messages, job, keep_tail_tokens=0, kind=CompactionKind.COMPACTED, keep_from=keep_from)


def reactive_compact(messages: list[dict], job: SummaryJob, scale: float = 1.0) -> list[dict]:
    """After "prompt is too long": keep a recent tail of about a quarter of the window, summarize the
    rest (only the part that goes away is sent). `scale` is how much the API's count exceeds our
    estimate (from the error), so both the tail and the summary request are sized in the API's tokens."""
    scale = max(1.0, scale)
    job = replace(job, max_input_tokens=int((job.max_input_tokens or input_budget(job.window)) / scale))
    return _summarized(messages, job, keep_tail_tokens=int(job.window // 4 / scale),
                       kind=CompactionKind.REACTIVE_COMPACT)


def _check_reply(text: str, stop_reason: str | None) -> str:
    """The summary's text, or SummaryFailed saying why it cannot be used."""
    text = (text or "").strip()
    if not text:
        raise SummaryFailed("the model returned an empty summary")
    if stop_reason == "max_tokens":
        raise SummaryFailed("the summary was cut off by SUMMARY_MAX_TOKENS")
    if stop_reason in ("tool_use", "refusal"):
        raise SummaryFailed("the model answered with a tool call instead of a summary" if stop_reason == "tool_use"
                            else "the model declined to summarize")
    return text


def save_transcript(messages: list[dict], workspace: Path, header: dict) -> tuple[str, Path]:
    """Save the history a summary replaces: (its path relative to the workspace, the file); SummaryFailed
    if it cannot be written."""
    try:
        saved = write_transcript(workspace, messages, header)
        return relative(workspace, saved), saved
    except OSError as exc:
        raise SummaryFailed(f"cannot save the transcript: {exc.strerror or exc}") from None


def note_transcript(keep: Continuity, transcript: str, emit: Emit, header: dict) -> None:
    keep.saved(transcript, "transcript")
    emit(Compaction(CompactionKind.TRANSCRIPT, f"[transcript saved: {transcript}]", {"path": transcript,
                                                                                   "header": header}))


def ask_summary(source: list[dict], job: SummaryJob, transcript: str) -> str:
    """The model's summary of `source` (the history as sent), checked; SummaryFailed if it cannot be used.
    The one summary call: the blocking compaction and the one prepared in the background both make it."""
    budget = job.max_input_tokens or input_budget(job.window)
    instruction = summary_instruction(job.focus)
    return _check_reply(*_ask(job.summarize, lambda share: summary_request(
        source, instruction, int(budget * share), job.system, job.tools, transcript)))


def summarized_history(messages: list[dict], keep_from: int, text: str, transcript: str, keep: Continuity,
                       system=None, tools=None, before: int | None = None) -> tuple[list[dict], int]:
    """(the history with messages[:keep_from] replaced by the summary message, its size): the summary,
    then what the continuity keeps (the work ledger, the person's messages the rest no longer shows);
    messages[keep_from:] stay as they are. SummaryFailed when that is not smaller; else the continuity
    records the cut (`commit`)."""
    before = estimate_tokens(messages, system, tools) if before is None else before
    tail = messages[keep_from:]

    def built(text: str, extra: list[dict], cut: bool = False) -> tuple[list[dict], int]:
        content = [{"type": "text", "text": f"{COMPACTED_PREFIX} The conversation so far was summarized to save "
                                            f"context; all of it is in {transcript} (read_file or grep it when you "
                                            "need exact details). After the summary: s08's work ledger and the "
                                            "user's own messages, which s08 keeps itself"
                                            + (", cut down to fit the model's window." if cut else ".")},
                   {"type": "text", "text": SUMMARY_PREFIX + text}] + extra
        new = [{"role": "user", "content": content}] + tail
        return new, estimate_tokens(new, system, tools)

    extra, moved = keep.blocks_for_cut(tail, transcript)
    new, after = built(text, extra)
    if after >= before:       # what rides along is most of the history (a small window): the summary's
        replaced = before - estimate_tokens(tail, system, tools)      # text gets at most a quarter of what
        text = _shortened_summary(text, int(max(MIN_HEAD_TOKENS, replaced // 4) * 3.5))     # it replaces, and
        room = before - built(text, [], True)[1] - HEAD_SLACK               # what rides along the rest (shortened
        extra, moved = keep.blocks_for_cut(tail, transcript, room=max(0, room))     # with its pointers)
        new, after = built(text, extra, True)
    if after >= before:
        raise SummaryFailed(f"the summary ({after:,} tokens) is not smaller than the history ({before:,})")
    keep.commit(moved, transcript)
    return new, after


def summary_of(history: list[dict]) -> str:
    """The summary's text in a history a summary starts ("" when it does not)."""
    first = blocks(history[0]) if history else []
    for b in first:
        if b.get("type") == "text" and b.get("text", "").startswith(SUMMARY_PREFIX):
            return b["text"][len(SUMMARY_PREFIX):]
    return ""


def _summarized(messages: list[dict], job: SummaryJob, keep_tail_tokens: int, kind: CompactionKind,
                keep_from: int | None = None) -> list[dict]:
    given = keep_from is not None
    if keep_from is None:
        keep_from = _keep_from(messages, keep_tail_tokens) if messages else 0
        if not keep_tail_tokens and job.recent_work:      # the recent work stays too (the summary covers it);
            recent = recent_start(messages, job.recent_work)      # /compact summarizes it when nothing else is
            if job.kind != "manual" or estimate_tokens(messages[:recent]) >= MIN_SUMMARIZABLE_TOKENS:
                keep_from = min(keep_from, recent)
    if estimate_tokens(messages[:keep_from]) < MIN_SUMMARIZABLE_TOKENS:
        raise SummaryFailed("there is too little to summarize yet", trivial=True)
    workspace, system, tools, emit = Path(job.workspace or Path.cwd()), job.system, job.tools, job.emit
    before = estimate_tokens(messages, system, tools)
    header = transcript_header(workspace, job.kind, job.trigger, job.measured or before, None, 0, keep_from,
                               len(messages))
    transcript, saved = save_transcript(messages, workspace, header)
    keep = job.continuity or Continuity.from_history(messages, workspace)
    note_transcript(keep, transcript, emit, header)

    as_sent = job.sent if job.sent is not None else messages
    if given:
        source = as_sent[:keep_from]
    else:
        source = messages[:keep_from] if keep_tail_tokens else as_sent[:unseen_start(as_sent)] or as_sent
    text = ask_summary(source, job, transcript)
    new, after = summarized_history(messages, keep_from, text, transcript, keep, system, tools, before)
    shown = job.measured or before     # the size that triggered us, when the caller measured it
    try:
        finish_transcript(saved, tokens_after=after)
    except OSError:
        pass                           # the header keeps tokens_after null; the session log has it
    emit(Compaction(kind, f"[{kind.label}] {shown:,} → {after:,} tokens", {"before": shown, "after": after,
                                                                          "transcript": transcript,
                                                                          "header": {**header, "tokens_after": after}}))
    return new

"""Layer 4 — compact_history (and reactive_compact): replace the history with a model-written summary.

    history ──► .transcripts/transcript_<time>_<id>.jsonl       (everything, one message per line)
        └────► summary request: the history as sent + the summary instruction (no tools)
                 (shortened oldest-first only when it would not fit the model's window)
    new history = [ summary message: "[compacted] … transcript: <path>"
                                     + the first request, verbatim
                                     + the summary
                                     + the current request, verbatim ]
                  + the latest tool round, if the model has not seen it yet

`summarize(messages) -> (text, stop_reason)` is passed in (the app gives it
the real model). A summary that fails — an error, empty, cut off by
max_tokens, or not smaller than what it replaces — raises SummaryFailed and
the input is left as it was. reactive_compact is the same operation keeping a
larger recent tail, for when the API has already said the prompt is too long.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from config import Settings
from events import Compaction, Emit, ignore
from history import blocks
from storage import relative, write_transcript
from .boundaries import (COMPACTED_PREFIX, FIRST_REQUEST_PREFIX, SUMMARY_PREFIX, first_request,
                         latest_request, safe_cuts, unseen_start)
from .tokens import estimate_message, estimate_tokens

D = Settings()
MAX_REACTIVE_RETRIES = 1
FIRST_REQUEST_MAX_CHARS = 8_000
SUMMARY_INPUT_BLOCK_CHARS = 20_000   # when shortening, one block keeps at most this much (head + tail)
WINDOW_MARGIN = 1_000

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
{focus}Be concise but keep every detail needed to continue: names, paths, numbers. At most about 1,200 words.
</summary-request>"""

Summarize = Callable[[list[dict]], tuple[str, str | None]]


class SummaryFailed(Exception):
    """The summary could not be made; the message says why in one line."""


def input_budget(window: int, summary_max_tokens: int = D.summary_max_tokens) -> int:
    """Tokens the summary request may use: the window minus room for the summary and a margin."""
    return window - min(summary_max_tokens, window // 4) - min(WINDOW_MARGIN, window // 20)


def summary_instruction(focus: str = "") -> str:
    extra = f"Pay special attention to: {focus.strip()}\n" if focus and focus.strip() else ""
    return SUMMARY_INSTRUCTION.format(focus=extra)


def _clip_block(block: dict, limit: int) -> dict:
    def clip(text: str) -> str:
        if len(text) <= limit:
            return text
        half = limit // 2
        return f"{text[:half]}\n[... {len(text) - limit:,} chars left out of this summary request ...]\n{text[-half:]}"
    if block.get("type") == "text":
        return {**block, "text": clip(block["text"])}
    if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
        return {**block, "content": clip(block["content"])}
    return block


def summary_request(messages: list[dict], instruction: str, max_input_tokens: int, system=None,
                    tools=None, transcript: str = "") -> list[dict]:
    """The messages of the summary call: the history as sent plus the instruction, shortened
    (huge blocks clipped, then oldest messages dropped at safe cuts) only if it would not fit."""
    ask = {"role": "user", "content": instruction}
    fixed = estimate_tokens([ask], system, tools)
    if fixed + sum(estimate_message(m) for m in messages) <= max_input_tokens:
        return messages + [ask]
    clipped = [{**m, "content": [_clip_block(b, SUMMARY_INPUT_BLOCK_CHARS) for b in blocks(m)]} for m in messages]
    sizes = [estimate_message(m) for m in clipped]
    safe, total, start = safe_cuts(clipped), sum(sizes), 0
    while start < len(clipped) - 1 and (fixed + total > max_input_tokens or not safe[start]):
        total -= sizes[start]
        start += 1
    kept = clipped[start:]
    if start:
        note = {"role": "user", "content": f"[{start} earlier messages are left out of this summary request "
                                           f"to fit the model's window; they are in {transcript}]"}
        kept = [note] + kept
    return kept + [ask]


def compact_history(messages: list[dict], summarize: Summarize, *, focus: str = "",
                    workspace: Path | None = None, system=None, tools=None,
                    max_input_tokens: int | None = None, keep_tail_tokens: int = 0,
                    label: str = "compacted", measured: int | None = None, emit: Emit = ignore) -> list[dict]:
    """Summarize the history and return the short one; raise SummaryFailed leaving the input as it was.
    `measured` is the prompt size the caller measured (usage-anchored), shown in the event."""
    if not messages:
        raise SummaryFailed("nothing to compact")
    workspace = Path(workspace or Path.cwd())
    before = estimate_tokens(messages, system, tools)
    transcript = relative(workspace, write_transcript(workspace, messages))
    emit(Compaction("transcript", f"[transcript saved: {transcript}]", {"path": transcript}))

    keep_from, safe = unseen_start(messages), safe_cuts(messages)
    if keep_tail_tokens:
        budget = keep_tail_tokens - sum(estimate_message(m) for m in messages[keep_from:])
        while keep_from > 1 and budget - estimate_message(messages[keep_from - 1]) >= 0:
            keep_from -= 1
            budget -= estimate_message(messages[keep_from])
        while keep_from < len(messages) and not safe[keep_from]:
            keep_from += 1
    window = max_input_tokens or input_budget(D.context_window)
    request = summary_request(messages, summary_instruction(focus), window, system, tools, transcript)
    try:
        text, stop_reason = summarize(request)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 — any failure of the call is a failed summary
        raise SummaryFailed(f"the summary call failed: {exc}") from None
    text = (text or "").strip()
    if not text:
        raise SummaryFailed("the model returned an empty summary")
    if stop_reason == "max_tokens":
        raise SummaryFailed("the summary was cut off by SUMMARY_MAX_TOKENS")

    content = [{"type": "text", "text": f"{COMPACTED_PREFIX} The conversation so far was summarized to save "
                                        f"context. Full transcript: {transcript} (read it with read_file "
                                        "when you need exact details)."}]
    at, request_now = latest_request(messages)
    first = first_request(messages)
    if first and first != (request_now[0]["text"] if request_now else None):
        content.append({"type": "text", "text": FIRST_REQUEST_PREFIX + first[:FIRST_REQUEST_MAX_CHARS]})
    content.append({"type": "text", "text": SUMMARY_PREFIX + text})
    if request_now and at < keep_from:
        content += [dict(b) for b in request_now]      # the current request, verbatim
    new = [{"role": "user", "content": content}] + messages[keep_from:]
    after = estimate_tokens(new, system, tools)
    if after >= before:
        raise SummaryFailed(f"the summary ({after:,} tokens) is not smaller than the history ({before:,})")
    shown = max(measured or 0, before)     # the size that triggered us, when the caller measured it
    emit(Compaction(label, f"[{label}] {shown:,} → {after:,} tokens", {"before": shown, "after": after,
                                                                      "transcript": transcript}))
    return new


def reactive_compact(messages: list[dict], summarize: Summarize, *, window: int | None = None,
                     **kwargs) -> list[dict]:
    """After "prompt is too long": keep a recent tail of about a quarter of the window, summarize the rest."""
    window = window or D.context_window
    kwargs.setdefault("max_input_tokens", input_budget(window))
    return compact_history(messages, summarize, keep_tail_tokens=window // 4, label="reactive_compact", **kwargs)

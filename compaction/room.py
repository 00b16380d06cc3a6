"""What a request must fit, and the cut that makes it fit.

    answer_room(window, max_tokens)   the tokens kept for the answer: MAX_TOKENS, but at most ANSWER_SHARE
                                      of a small window (never under MIN_ANSWER_ROOM)
    fit_target(window, max_tokens)    what the system prompt, the tools and the history may measure: the
                                      window less the answer's room (under a learned window that is the
                                      limit window.py already keeps, WINDOW_SHARE of it)
    make_room(history, target, …)     cut until the history measures at most the target

Every path of the Compactor ends here (prepare, compact, reactive), and the fallback cuts to the same
target: whatever the summary did — failed, was not smaller, was not asked for — the request sent fits
the window with room for the answer, so no session can be stuck by its own history. The cut, each step
only while the history is still over the target, the cheapest first:

    1 results    the results the model has seen → pointers to their saved copies, oldest first, the
                 recent work too (cut.py)
    2 outputs    the results it has not seen yet, past a share of the target → .task_outputs/, a preview
                 left in place (budget.py)
    3 summary    a summary's text shortened; it is whole in its transcript
    4 older      the oldest messages → a transcript of their own (.transcripts/…-room.jsonl), replaced by
                 one message that carries the work ledger, the loaded skills and the person's messages
                 in the room left (continuity.py: whole, else "shortened here … whole in …", else
                 counted in one line that says where), the newest first
    5 in place   what is left is the newest round: the person's messages in it are shortened in place
                 with the same pointer, oldest first and the newest last, then other long texts (an
                 answer, a tool call's input, a result) are clipped, each saying where it is whole

The one thing no cut can shrink is the system prompt and the tools: when they alone leave no room, the
Compactor says so in one line (`no_room`) and the endpoint's own refusal ends the turn, not the session.
MIN_WINDOW is the smallest window this leaves a working session at: s08's system prompt and tools are
about 1,300 tokens, the answer gets 1,024 of a 4,096 window, and about 1,700 are left for the history.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from config import MIN_CONTEXT_WINDOW
from events import Compaction, CompactionKind, Emit
from messages import blocks
from storage import relative, reserve_transcript, transcript_header, write_transcript
from .boundaries import safe_cuts
from .budget import persist_outputs
from .continuity import Continuity
from .cut import clear_to_pointers, picks_to_target
from .markers import SNIP_PREFIX, SUMMARY_PREFIX
from .tokens import estimate_message, estimate_text
from .user_messages import shortened
from .window import CHARS_PER_TOKEN, WINDOW_SHARE

SHORTENED = "of yours is shortened here"

MIN_WINDOW = MIN_CONTEXT_WINDOW   # the smallest window s08 accepts (see above); CONTEXT_WINDOW below it is refused
MIN_ANSWER_ROOM = 512             # the answer never gets less than this
ANSWER_SHARE = 1 - WINDOW_SHARE   # nor more than this share of the window (8,000 of 200,000; 1,024 of 4,096)
ROOM_KIND = "room"                # the transcript kind of the messages a cut moved out to make room
ROOM_GOAL = 0.8                   # a history that must be cut is cut to this share of the target: the next
                                  # short question fits without another cut (and another summary call)
CARRY_SHARE = 0.75                # a cut keeps up to this share of what the window leaves the history for
                                  # what rides along (the person's messages, the ledger, the skills)
MIN_CLIP_CHARS = 200              # a text is never clipped below this (head + tail)

Measure = Callable[[list[dict]], int]


def answer_room(window: int, max_tokens: int) -> int:
    """Tokens kept free for the answer in a window of `window` tokens."""
    return max(MIN_ANSWER_ROOM, min(max_tokens, int(window * ANSWER_SHARE)))


def fit_target(window: int, max_tokens: int) -> int:
    """What a request (system + tools + messages) may measure in this window, the answer's room kept."""
    return window - answer_room(window, max_tokens)


def no_room(fixed: int, window: int, max_tokens: int) -> str:
    """The one line said when the system prompt and tools alone (`fixed` tokens) leave no room."""
    return (f"[the system prompt and tools alone measure {fixed:,} tokens: with {answer_room(window, max_tokens):,} "
            f"kept for the answer, a {window:,}-token window leaves no room for the conversation; use a larger "
            "window (CONTEXT_WINDOW), fewer tools (MCP servers) or a shorter AGENTS.md]")


def make_room(messages: list[dict], target: int, measure: Measure, workspace: Path, continuity: Continuity,
              emit: Emit, settings=None, in_place: bool = True) -> list[dict]:
    """The history cut (steps 1–5 of the module docstring) until `measure(history) <= target`, or as
    close as it can; never mutates `messages`. A disk that cannot be written skips what needs it.
    `in_place`: False skips step 5 (the fallback: the window's own cut follows it and does step 5 if the
    window needs it)."""
    before = measure(messages)
    if before <= target or not messages:
        return messages
    out = messages
    steps = (_clear_seen, _persist_unseen, _shorten_summary, _move_older) + ((_shorten_in_place,) if in_place else ())
    for step in steps:
        try:
            out = step(out, target, measure, workspace, continuity, emit, settings)
        except OSError as exc:
            emit(Compaction(CompactionKind.FALLBACK, f"[making room could not write to disk: {exc.strerror or exc}]"))
        if measure(out) <= target:
            break
    after = measure(out)
    if out is not messages:
        emit(Compaction(CompactionKind.FALLBACK, f"[fallback] cut to fit the window: {before:,} → {after:,} tokens "
                        f"(at most {target:,}, the answer's room kept)",
                        {"before": before, "after": after, "target": target}))
    return out


def _clear_seen(messages, target, measure, workspace, continuity, emit, _settings):
    picks = picks_to_target(messages, target, measure)
    return clear_to_pointers(messages, picks, workspace, continuity, emit, "to fit the window")[0]


def _persist_unseen(messages, target, measure, workspace, continuity, emit, settings):
    chars = max(MIN_CLIP_CHARS * 4, int(target * CHARS_PER_TOKEN) // 4)
    preview = min(getattr(settings, "preview_chars", 2_000), chars // 4)
    out, paths = persist_outputs(messages, chars, chars, preview, preserve=frozenset(), workspace=workspace,
                                 emit=emit)
    for path in paths:
        continuity.saved(relative(workspace, path), "output")
    return out


def _shorten_summary(messages, target, measure, workspace, continuity, emit, _settings):
    """A summary at the head: its text cut to what the rest leaves (it is whole in its transcript)."""
    if not messages or messages[0].get("role") != "user":
        return messages
    content = blocks(messages[0])
    at = next((j for j, b in enumerate(content) if b.get("type") == "text"
               and str(b.get("text", "")).startswith(SUMMARY_PREFIX)), None)
    if at is None:
        return messages
    text = content[at]["text"]
    over = measure(messages) - target
    keep = max(MIN_CLIP_CHARS, len(text) - int(over * CHARS_PER_TOKEN * 1.2))
    if keep >= len(text):
        return messages
    new = SUMMARY_PREFIX + _clip(text[len(SUMMARY_PREFIX):], keep, "the transcript named above")
    return [{**messages[0], "content": content[:at] + [{**content[at], "text": new}] + content[at + 1:]}] + messages[1:]


def _move_older(messages, target, measure, workspace, continuity, emit, _settings):
    """The oldest messages to a transcript; one message in their place carries what continuity keeps,
    in the room the rest leaves. The cut is the earliest safe one whose tail leaves room for the marker."""
    safe = safe_cuts(messages)
    fixed = measure(messages) - sum(estimate_message(m) for m in messages)      # system + tools (as measured)
    sizes = [estimate_message(m) for m in messages]
    suffix = [0] * (len(messages) + 1)
    for i in range(len(messages) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + sizes[i]
    marker_cost = 60
    starts = [i for i in range(1, len(messages)) if safe[i]]
    if not starts:
        return messages
    first = [i for i in starts if messages[i].get("role") == "assistant"] or starts   # the tail starts with an
    start = next((i for i in first if fixed + suffix[i] + marker_cost <= target), first[-1])    # answer: the
    # marker is a message of its own (else it goes in front of the person's message there)
    moved_out, tail = messages[:start], messages[start:]
    path = reserve_transcript(workspace, ROOM_KIND)
    shown = relative(workspace, path)
    marker = {"type": "text", "text": f"{SNIP_PREFIX}{len(moved_out)} messages → {shown}] to make room in the "
                                      "model's window (read_file it for what they said)"}
    kept = continuity.user_budget + continuity.ledger_budget + continuity.skills_budget
    room = max(target - fixed - suffix[start] - estimate_text(marker["text"]) - 10,       # what rides along
               min(kept, int((target - fixed) * CARRY_SHARE)))      # keeps its share: step 5 clips the rest
    extra, moved = continuity.blocks_for_cut(tail, shown, only_unseen=True, room=max(0, room))
    head = [marker] + extra
    if tail and tail[0].get("role") == "user":        # two user messages in a row: one message instead
        out = [{"role": "user", "content": head + blocks(tail[0])}] + tail[1:]
    else:
        out = [{"role": "user", "content": head}] + tail
    header = transcript_header(workspace, ROOM_KIND, "to fit the model's window", measure(messages), None,
                               0, start, len(messages))
    write_transcript(workspace, moved_out, header, path)
    continuity.commit(moved, shown)
    plural = "s" * (len(moved_out) != 1)
    emit(Compaction(CompactionKind.SNIP_COMPACT, f"moved {len(moved_out)} message{plural} → {shown} to fit the window",
                    {"path": str(path), "count": len(moved_out), "header": header}))
    return out


def _shorten_in_place(messages, target, measure, workspace, continuity, emit, _settings):
    """Long texts that are not the person's clipped, largest first; then the person's messages still in
    the history shortened in place, oldest first and the newest last — all of it whole in a transcript
    written first."""
    over = measure(messages) - target
    if over <= 0:
        return messages
    path = write_transcript(workspace, messages, transcript_header(workspace, ROOM_KIND, "to fit the model's window "
                                                                   "(texts shortened in place)", measure(messages),
                                                                   None, 0, len(messages), len(messages)))
    shown = relative(workspace, path)
    continuity.saved(shown, "transcript")
    typed = {e.text: i for i, e in enumerate(continuity.typed.entries) if not e.dropped}
    spots = []              # (order, i, j, number): the largest other texts first; then the typed ones, oldest first
    for i, m in enumerate(messages):
        for j, b in enumerate(blocks(m)):
            text = _text_of(b)
            if text is None or len(text) <= MIN_CLIP_CHARS * 2:
                continue
            if m.get("role") == "user" and b.get("type") == "text" and text in typed:
                spots.append(((1, i), i, j, typed[text]))
            elif SHORTENED not in text:        # a message of theirs already shortened keeps its pointer
                spots.append(((0, -len(text)), i, j, None))
    spots.sort(key=lambda s: s[0])
    out, copied = list(messages), set()
    for _order, i, j, number in spots:
        if over <= 0:
            break
        if i not in copied:                 # only what changes is a new object (index.py keys on identity)
            out[i], copied = {**out[i], "content": list(blocks(out[i]))}, copied | {i}
        block = out[i]["content"][j]
        text = _text_of(block) or ""
        keep = max(MIN_CLIP_CHARS, len(text) - int(over * CHARS_PER_TOKEN * 1.1) - 400)
        if keep >= len(text):
            continue
        if number is not None:
            new_text = shortened(number + 1, text, keep, shown)
            continuity.typed.saved(number, shown)
        else:
            new_text = _clip(text, keep, shown)
        out[i]["content"][j] = _with_text(block, new_text)
        over -= estimate_text(text) - estimate_text(new_text)
    return out


def _text_of(block: dict) -> str | None:
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "tool_result" and isinstance(block.get("content"), str):
        return block["content"]
    if kind == "tool_use":
        return json.dumps(block.get("input", {}), ensure_ascii=False)
    return None


def _with_text(block: dict, text: str) -> dict:
    kind = block.get("type")
    if kind == "text":
        return {**block, "text": text}
    if kind == "tool_result":
        return {**block, "content": text}
    return {**block, "input": {"clipped": text}}      # a tool call's input, only when nothing else is left


def _clip(text: str, keep: int, where: str) -> str:
    head, tail = text[:keep // 2], text[len(text) - (keep - keep // 2):]
    return f"{head}\n[… {len(text) - keep:,} of {len(text):,} characters left out here to fit the window; whole in {where} …]\n{tail}"

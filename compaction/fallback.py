"""The cut without the model: what a compaction does when no summary can be had (the summary failed,
or automatic summaries are off after MAX_FAILURES in a row).

    every output over FALLBACK_PERSIST_CHARS → .task_outputs/ (read_file's and unseen ones too)
    clear every old result but the newest
    cut to a token target: FALLBACK_SHARE of the limit (room.py: the oldest messages to a transcript,
        what continuity keeps riding along in the room left, then the newest round's texts shortened)

It is the one path that does not keep the recent work whole (recent.py): it runs when the summary
could not make room, and the window must have it. Without a target (a direct call) it snips down to
max(FALLBACK_MIN_MESSAGES, SNIP_TARGET_MESSAGES / 2) messages instead, as it did before windows were
measured.
"""

from __future__ import annotations

from pathlib import Path

from events import Compaction, CompactionKind, Emit, Notice
from storage import relative
from .budget import persist_outputs
from .continuity import Continuity
from .micro import micro_compact
from .room import make_room
from .snip import snip_to_transcript
from .tokens import estimate_tokens

FALLBACK_MIN_MESSAGES = 8
FALLBACK_PERSIST_CHARS = 4_000      # the fallback moves every output larger than this to disk
FALLBACK_SHARE = 0.7                # the fallback cuts to this share of the limit: the next call does not
                                    # pass it again at once


def cut_without_model(messages: list[dict], settings, workspace: Path, continuity: Continuity,
                      snip_transcript: Path | None, emit: Emit, system=None,
                      tools=None, target: int | None = None) -> tuple[list[dict], Path | None]:
    """(history, the session's snip transcript): every big output to disk, every old result cleared, and
    the history cut to `target` tokens (room.py) — or, without a target, snipped down to a short tail. A
    disk that cannot be written skips what needs it (said once)."""
    before = estimate_tokens(messages, system, tools)
    out = messages
    try:
        out, paths = persist_outputs(messages, FALLBACK_PERSIST_CHARS, FALLBACK_PERSIST_CHARS,
                                     settings.preview_chars, preserve=frozenset(), workspace=workspace, emit=emit)
        for path in paths:
            continuity.saved(relative(workspace, path), "output")
        if target is None:
            count = max(FALLBACK_MIN_MESSAGES, settings.snip_target_messages // 2)
            out, snipped_to = snip_to_transcript(out, count, count, workspace=workspace, transcript=snip_transcript,
                                                 continuity=continuity, emit=emit, trigger="fallback: no summary")
            snip_transcript = snipped_to or snip_transcript
    except OSError as exc:
        emit(Notice(f"[fallback could not write to disk: {exc.strerror or exc}]", "warning"))
    out = micro_compact(out, keep_recent=1, preserve=frozenset(), clear_at_least=0, emit=emit)
    if target is not None:
        out = make_room(out, target, lambda m: estimate_tokens(m, system, tools), workspace, continuity, emit,
                        settings, in_place=False)
    after = estimate_tokens(out, system, tools)
    emit(Compaction(CompactionKind.FALLBACK, f"[fallback] cut without the model: {before:,} → {after:,} tokens"
                    if after < before else "[fallback] nothing more to cut without the model"))
    return out, snip_transcript

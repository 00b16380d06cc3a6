"""Cut to a token target: clear the tool results the model has seen, oldest first, each saved to
.task_outputs/ and left as a pointer, until the history measures at most the target.

    cut_to_target(history, target, measure, workspace, keep_from=recent_start(…))
        pass 1  the results before `keep_from` (older work), oldest first, only as many as needed
        pass 2  still over: the recent work too (the window has no room), oldest first

A result that cannot be written stays whole (the cut then falls short: the caller sees the size).
The Compactor uses it when the limit is reached while a summary is still being prepared and the
window has no room for more; a small window cuts to its own target with it. `clear_to_pointers` is
the one way the Compactor clears seen results (the ledger records each copy, one event says so):
by target (`picks_to_target`) or by position (`seen_between`: after a summary's snapshot).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from events import Compaction, CompactionKind, Emit
from storage import TASK_OUTPUTS_DIR
from .continuity import Continuity
from .micro import clear_saving, clearable_results, saved_pointer
from .tokens import estimate_text, estimate_tokens


def picks_to_target(messages: list[dict], target: int, measure: Callable[[list[dict]], int],
                    keep_from: int | None = None, start: int = 0, kept: bool = False) -> set[tuple[int, int]]:
    """The (message, block) positions of the seen results from `start` on that clearing, oldest first —
    those before `keep_from` first, then the rest (`kept`: never the rest) — brings `measure(history)`
    to at most `target`, or as close as it can."""
    need = measure(messages) - target
    if need <= 0:
        return set()
    keep_from = len(messages) if keep_from is None else keep_from
    candidates = [c for c in _savings(messages) if c[0] >= start]
    ordered = [c for c in candidates if c[0] < keep_from] + [c for c in candidates if c[0] >= keep_from and not kept]
    picks = set()
    for i, j, saving in ordered:
        if need <= 0:
            break
        picks.add((i, j))
        need -= saving
    return picks


def cut_to_target(messages: list[dict], target: int, measure: Callable[[list[dict]], int], workspace: Path,
                  keep_from: int | None = None, start: int = 0) -> tuple[list[dict], int, list[dict]]:
    """(history, count cleared, outputs written): seen results from `start` on cleared oldest first until
    `measure(history) <= target` — those before `keep_from` first, then the rest. Never mutates."""
    picks = picks_to_target(messages, target, measure, keep_from, start)
    return clear_saving(messages, workspace, picks) if picks else (messages, 0, [])


def clear_to_pointers(messages: list[dict], picks: set[tuple[int, int]], workspace: Path, continuity: Continuity,
                      emit: Emit, why: str) -> tuple[list[dict], int]:
    """(history, count): the seen results at `picks` cleared to pointers to their saved copies, each copy
    recorded in the continuity's ledger, and one event that says how many and why."""
    new, count, outputs = clear_saving(messages, workspace, picks)
    if not count:
        return messages, 0
    for o in outputs:
        continuity.saved(o["path"], "output")
    tokens = estimate_tokens(messages) - estimate_tokens(new)
    emit(Compaction(CompactionKind.MICRO_COMPACT, f"cleared {count} tool result{'s' * (count > 1)} {why} "
                    f"(~{tokens:,} tokens; saved in {TASK_OUTPUTS_DIR}/)",
                    {"count": count, "tokens": tokens, "outputs": outputs}))
    return new, count


def _savings(messages: list[dict]) -> list[tuple[int, int, int]]:
    """(message, block, tokens its clearing saves) of every seen result, oldest first."""
    return [(i, j, estimate_text(text) - estimate_text(saved_pointer(name, text)))
            for i, j, name, text in clearable_results(messages, 0, frozenset())]


def clearing_saves(messages: list[dict], picks: set[tuple[int, int]]) -> tuple[int, int]:
    """(tokens, first message): what clearing the results at `picks` would save, and where the prompt
    would first change (the prompt cache is written again from there)."""
    chosen = [(i, saving) for i, j, saving in _savings(messages) if (i, j) in picks]
    return sum(s for _, s in chosen), min((i for i, _ in chosen), default=len(messages))


def seen_between(messages: list[dict], start: int, end: int) -> set[tuple[int, int]]:
    """The positions of the seen results in messages[start:end]."""
    return {(i, j) for i, j, _name, _text in clearable_results(messages, 0, frozenset()) if start <= i < end}

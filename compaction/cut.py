"""Cut to a token target: clear the tool results the model has seen, oldest first, each saved to
.task_outputs/ and left as a pointer, until the history measures at most the target.

    cut_to_target(history, target, measure, workspace, keep_from=recent_start(…))
        pass 1  the results before `keep_from` (older work), oldest first, only as many as needed
        pass 2  still over: the recent work too (the window has no room), oldest first

A result that cannot be written stays whole (the cut then falls short: the caller sees the size).
The Compactor uses it when the limit is reached while a summary is still being prepared and the
window has no room for more; a small window (issue 32) cuts to its own target with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .micro import clear_saving, clearable_results
from .markers import placeholder
from .tokens import estimate_text


def cut_to_target(messages: list[dict], target: int, measure: Callable[[list[dict]], int], workspace: Path,
                  keep_from: int | None = None, start: int = 0) -> tuple[list[dict], int, list[dict]]:
    """(history, count cleared, outputs written): seen results from `start` on cleared oldest first until
    `measure(history) <= target` — those before `keep_from` first, then the rest. Never mutates."""
    size = measure(messages)
    if size <= target:
        return messages, 0, []
    keep_from = len(messages) if keep_from is None else keep_from
    candidates = [(i, j, estimate_text(text) - estimate_text(placeholder(name, text)))
                  for i, j, name, text in clearable_results(messages, 0, frozenset()) if i >= start]
    ordered = [c for c in candidates if c[0] < keep_from] + [c for c in candidates if c[0] >= keep_from]
    picks, need = set(), size - target
    for i, j, saving in ordered:
        if need <= 0:
            break
        picks.add((i, j))
        need -= saving
    return clear_saving(messages, workspace, picks)

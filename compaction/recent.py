"""What must stay whole through every compaction: the work the model did last.

    history:  … older work …  | assistant tool_use · user results (seen) · … | the round not seen yet
                               └───────── recent work: the newest messages ──┘
                                 the model has seen, up to RECENT_WORK × CONTEXT_LIMIT tokens

The files the model read seconds ago are the ones it is working on: a summary says they were read, a
pointer says where a copy is, and either way a model reads them again. So every compaction keeps the
recent work verbatim — micro_compact does not clear it, a blocking summary keeps it after the summary
message (the summary covers it too), a summary prepared in the background keeps it after what it
covers, and the results no summary covers become pointers only before it. Only when the window itself
has no room is it cleared (cut.py: oldest first, after everything older).

`recent_start` is the safe cut where that part begins (never after the round the model has not seen).
"""

from __future__ import annotations

from .boundaries import safe_cuts, unseen_start
from .tokens import estimate_message

RECENT_WORK = 0.1        # the default share of the limit (config.py's)
MAX_SHARE = 0.5          # RECENT_WORK is capped: a summary must still leave room under the limit


def recent_budget(share: float, limit: int) -> int:
    """Tokens of recent work kept whole, for RECENT_WORK = `share` of the limit."""
    return int(max(0.0, min(share, MAX_SHARE)) * limit)


def recent_start(messages: list[dict], budget: int) -> int:
    """The safe cut from which `messages` hold the newest work the model has seen — its results, calls
    and messages, together at most `budget` tokens — and everything after it (the round it has not
    seen). A message that would pass the budget ends the walk: what is kept is the newest, whole."""
    start = unseen_start(messages)
    if budget <= 0 or start <= 1:
        return start
    used, i = 0, start
    while i > 1:
        cost = estimate_message(messages[i - 1])
        if used + cost > budget:
            break
        used += cost
        i -= 1
    if i == start:
        return start
    safe = safe_cuts(messages)
    while i < start and not safe[i]:
        i += 1
    return i

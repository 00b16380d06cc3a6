"""When automatic summaries stop: after MAX_FAILURES failed summaries in a row (at most one counted per
turn, so one bad turn's retries do not add up), until the person runs /compact or a summary succeeds.
A broken summary call can then never make every turn slow or loop; a failed one keeps the history
(the Compactor falls back to the cut without the model)."""

from __future__ import annotations

from events import CompactionKind, Emit, Notice

MAX_FAILURES = 3


class Breaker:
    def __init__(self):
        self.failures, self.auto_enabled = 0, True
        self.failed_this_turn = self.warned_this_turn = False

    def begin_turn(self) -> None:
        self.failed_this_turn = self.warned_this_turn = False

    def succeeded(self) -> None:
        self.failures, self.auto_enabled = 0, True

    def reset(self) -> None:
        """/compact: the person asks for a summary, whatever failed before."""
        self.failures, self.auto_enabled, self.failed_this_turn = 0, True, False

    def failed(self, kind: CompactionKind, exc: Exception, emit: Emit, where: str = "") -> None:
        emit(Notice(f"[{kind.label} failed{where}: {exc}; the history was kept]", "warning"))
        if self.failed_this_turn:
            return
        self.failed_this_turn = True
        self.failures += 1
        if self.failures >= MAX_FAILURES and self.auto_enabled:
            self.auto_enabled, self.warned_this_turn = False, True
            emit(Notice(f"[auto_compact is off after {MAX_FAILURES} failed summaries in a row; "
                        "run /compact to try again]", "warning"))

    def warn_off(self, size: int, limit: int, emit: Emit) -> None:
        """Past the limit while automatic summaries are off: say so once a turn."""
        if not self.warned_this_turn and size > limit:
            self.warned_this_turn = True
            emit(Notice(f"[auto_compact is off after {MAX_FAILURES} failed summaries: {size:,} > "
                        f"{limit:,} tokens — run /compact to try again]", "warning"))

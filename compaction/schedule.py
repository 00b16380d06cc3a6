"""When a summary is prepared in the background (background.py) and when a ready one goes in: how fast
the context grows inside a turn, how much a turn adds, and the rules that read them.

    inside a turn    the size after each of the last GROWTH_POINTS model calls → what one call adds;
                     a summary is due once CALLS_AHEAD calls adding as much as the largest would pass
                     the limit (it then covers nearly all, from the history the prompt cache holds)
    from turn to turn  the tokens each of the last TURNS_REMEMBERED turns added (what a compaction took
                     out is not deducted) → the next turn is expected to add as much as the largest;
                     at a turn's end a summary is due when LOOKAHEAD_TURNS such turns would pass the
                     limit, and a turn that alone would pass it applies a ready one before its first call

The Compactor (pipeline.py) feeds it every size it measures (`grew_to`), each answer (`answered`) and
each new turn (`begin_turn`); the schedule never sees the history itself.
"""

from __future__ import annotations

GROWTH_POINTS = 6           # the last model calls whose sizes give how fast the context grows
CALLS_AHEAD = 2             # inside a turn, start a summary when this many calls like the last ones would pass
                            # the limit (one is too few: the next result may be larger than the last ones)
TURNS_REMEMBERED = 3        # the next turn is expected to grow the context as much as the largest of these
LOOKAHEAD_TURNS = 2         # at a turn's end, prepare when this many such turns would pass the limit (a turn
                            # larger than the last ones must not find nothing prepared)


class Schedule:
    def __init__(self):
        self.growth: list[tuple[float, int]] = []     # (time, size) after this turn's last model calls
        self.turn_growths: list[int] = []             # tokens the last turns added
        self.turn_added = 0                           # tokens this turn added so far
        self.last_size: int | None = None             # the size last measured (None: nothing yet — a
                                                      # resumed history is not one turn's growth)
        self.recorded = False                         # this turn's growth is in turn_growths (a paused
                                                      # turn answers twice)
        self.turn_start = False                       # the next call is the turn's first
        self.answer_times: list[float] = []           # when this turn's last model calls answered
        self.call_time: float | None = None           # how long one call took lately (tool run included)

    def begin_turn(self) -> None:
        self.growth, self.turn_added, self.turn_start, self.recorded = [], 0, True, False
        self.answer_times = []

    def first_call(self) -> bool:
        """Is this the turn's first call? (Asked once per call, before it.)"""
        first, self.turn_start = self.turn_start, False
        return first

    def grew_to(self, size: int) -> None:
        if self.last_size is not None:
            self.turn_added += max(0, size - self.last_size)
        self.last_size = size

    def answered(self, size: int, now: float, final: bool) -> None:
        """A model call answered, leaving the context at `size` (`final`: the turn ends)."""
        self.grew_to(size)
        self.answer_times = times = self.answer_times[-(GROWTH_POINTS - 1):] + [now]
        if len(times) > 1 and times[-1] > times[0]:
            self.call_time = (times[-1] - times[0]) / (len(times) - 1)
        self.growth = [(t, n) for t, n in self.growth[-(GROWTH_POINTS - 1):] if n <= size] + [(now, size)]
        if final:
            kept = self.turn_growths[:-1] if self.recorded else self.turn_growths
            self.turn_growths, self.recorded = (kept + [self.turn_added])[-TURNS_REMEMBERED:], True

    def call_seconds(self) -> float | None:
        """How long one model call takes lately, tool run included, measured inside turns (the person's
        pauses are not calls); None before a turn had two."""
        return self.call_time

    def next_turn(self) -> int:
        """How much the next turn is expected to add: as much as the largest of the last turns (0 before one ended)."""
        return max(self.turn_growths[-TURNS_REMEMBERED:], default=0)

    def turn_would_pass(self, size: int, limit: int, turns: int = 1) -> bool:
        return size + turns * self.next_turn() > limit

    def due_between_turns(self, size: int, limit: int) -> bool:
        return self.turn_would_pass(size, limit, LOOKAHEAD_TURNS)

    def due_in_turn(self, size: int, limit: int) -> bool:
        """Would the next CALLS_AHEAD calls pass the limit, each adding as much as the largest of this turn's
        last calls? (Nothing measured yet: would a turn like the last ones pass it?)"""
        steps = [n1 - n0 for (_, n0), (_, n1) in zip(self.growth, self.growth[1:]) if n1 > n0]
        if not steps:
            return len(self.growth) < 2 and self.turn_would_pass(size, limit)
        return size + CALLS_AHEAD * max(steps) > limit

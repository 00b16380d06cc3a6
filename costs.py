"""Token and cost accounting from the API's `usage`, per turn and per session.

    billed input (in input-token equivalents) = uncached + 1.25 × 5-minute cache writes
                                                + 2 × 1-hour cache writes + 0.1 × cache reads
    price = billed input × input price + output × output price

Prices are USD per million tokens, from a small table of Claude models
(MODEL_PRICE="input,output" overrides it; a model not in the table is
"unknown"). A cache write is priced by its lifetime: 1.25× for 5 minutes, 2× for an hour (the usage's
`cache_creation` says which; without it, 5 minutes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from events import ResponseDone

WRITE_FACTOR, WRITE_1H_FACTOR, READ_FACTOR = 1.25, 2.0, 0.1
PRICES = {                          # USD per million tokens: (input, output)
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
}


def price_of(model: str, override: str = "") -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None when unknown."""
    if override:
        a, b = (float(x) for x in override.replace(" ", "").split(","))
        return a, b
    base = re.sub(r"-\d{8}$", "", model)            # a dated id (claude-opus-4-5-20251101) is its model
    return PRICES.get(base)


@dataclass
class Tally:
    uncached: int = 0
    writes: int = 0              # all cache writes, 1-hour ones included
    writes_1h: int = 0
    reads: int = 0
    output: int = 0
    calls: int = 0
    summary_calls: int = 0

    def add(self, usage: dict, summary: bool = False) -> None:
        self.uncached += usage.get("input_tokens") or 0
        self.writes += usage.get("cache_creation_input_tokens") or 0
        split = usage.get("cache_creation")
        self.writes_1h += (split.get("ephemeral_1h_input_tokens") or 0) if isinstance(split, dict) else 0
        self.reads += usage.get("cache_read_input_tokens") or 0
        self.output += usage.get("output_tokens") or 0
        self.calls += 1
        self.summary_calls += summary

    @property
    def prompt_tokens(self) -> int:
        return self.uncached + self.writes + self.reads

    @property
    def billed_input(self) -> float:
        return (self.uncached + WRITE_FACTOR * (self.writes - self.writes_1h) + WRITE_1H_FACTOR * self.writes_1h
                + READ_FACTOR * self.reads)

    @property
    def hit_rate(self) -> float | None:
        return self.reads / self.prompt_tokens if self.prompt_tokens else None

    def dollars(self, price: tuple[float, float] | None) -> float | None:
        if price is None:
            return None
        return (self.billed_input * price[0] + self.output * price[1]) / 1_000_000


class Ledger:
    """Watches ResponseDone events; keeps the current turn's, the session's and the whole run's tallies
    (the run's survives /clear, which starts a new session)."""

    def __init__(self):
        self.session, self.turn, self.run = Tally(), Tally(), Tally()

    def begin_turn(self) -> None:
        self.turn = Tally()

    def new_session(self) -> None:
        self.session, self.turn = Tally(), Tally()

    def __call__(self, event) -> None:
        if isinstance(event, ResponseDone) and event.usage:
            summary = event.purpose == "summary"
            self.session.add(event.usage, summary)
            self.turn.add(event.usage, summary)
            self.run.add(event.usage, summary)

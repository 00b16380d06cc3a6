"""Token and cost accounting from the API's `usage`, per turn and per session.

    billed input (in input-token equivalents) = uncached + 1.25 × 5-minute cache writes
                                                + 2 × 1-hour cache writes + 0.1 × cache reads
    price = billed input × input price + output × output price

Prices are USD per million tokens, from a small table of Claude models
(MODEL_PRICE="input,output" overrides it; a model not in the table is
"unknown"). A cache write is priced by its lifetime: 1.25× for 5 minutes, 2× for an hour (the usage's
`cache_creation` says which; without it, 5 minutes).

Each call is priced when it is counted, at the model (and price) that served it: a session can start
on the demo model (free), go on with a real one after /login, fall back after /logout, or be resumed
under another model, and none of that reprices the calls already made. `TokenTally.cost` is that sum;
`TokenTally.dollars(price)` prices every token at one price instead (what-if figures, bench/).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from access.demo import DEMO_MODEL
from events import ResponseDone, TaskFinished
from llm.usage import Usage

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
    DEMO_MODEL: (0.0, 0.0),         # the built-in offline demo model costs nothing
}
WINDOWS = {                         # tokens of context; CONTEXT_WINDOW, when set, wins
    "claude-opus-4-5": 200_000,
    "claude-opus-4-1": 200_000,
    "claude-opus-4": 200_000,
    "claude-sonnet-4-6": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-3-5-haiku": 200_000,
}
PARTS = ("uncached", "writes", "reads", "output")


def price_of(model: str, override: str = "") -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None when unknown."""
    if override:
        a, b = (float(x) for x in override.replace(" ", "").split(","))
        return a, b
    return PRICES.get(_base(model))                  # a dated id (claude-opus-4-5-20251101) is its model


def _base(model: str) -> str:
    return re.sub(r"-\d{8}$", "", model)


def window_of(model: str) -> int | None:
    """The model's context window in tokens, or None when the table does not know it."""
    return WINDOWS.get(_base(model))


def known_models() -> list[str]:
    """The models /model offers (the table's, without the demo model)."""
    return [m for m in PRICES if m != DEMO_MODEL]


def with_model_window(settings, sources: dict):
    """The settings with CONTEXT_WINDOW following the model, unless a setting names it."""
    window = window_of(settings.model_id)
    if sources.get("CONTEXT_WINDOW") or window is None or window == settings.context_window:
        return settings
    return dataclasses.replace(settings, context_window=window)


@dataclass
class TokenTally:
    uncached: int = 0
    writes: int = 0              # all cache writes, 1-hour ones included
    writes_1h: int = 0
    reads: int = 0
    output: int = 0
    calls: int = 0
    summary_calls: int = 0
    usd: dict = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))   # by part, each call at its price
    unpriced: int = 0            # calls at a model whose price is unknown
    models: dict = field(default_factory=dict)    # model → [calls, its price]

    def add(self, usage, summary: bool = False, price: tuple[float, float] | None = None,
            model: str = "") -> None:
        """Count one call (a Usage, or the API's usage dict), priced at `price` (that of `model`, which
        served it; None: unknown)."""
        u = Usage.of(usage)
        uncached, writes, writes_1h, reads, output = u.input, u.cache_write, u.cache_write_1h, u.cache_read, u.output
        self.uncached += uncached
        self.writes += writes
        self.writes_1h += writes_1h
        self.reads += reads
        self.output += output
        self.calls += 1
        self.summary_calls += summary
        if price is None:
            self.unpriced += 1
        else:
            billed = {"uncached": uncached, "reads": READ_FACTOR * reads,
                      "writes": WRITE_FACTOR * (writes - writes_1h) + WRITE_1H_FACTOR * writes_1h, "output": 0}
            for name, tokens in billed.items():
                self.usd[name] += tokens * price[0] / 1_000_000
            self.usd["output"] += output * price[1] / 1_000_000
        seen = self.models.setdefault(model, [0, price])
        seen[0] += 1

    @classmethod
    def from_record(cls, record: dict) -> "TokenTally | None":
        """A tally as a session log's task record kept it (dataclasses.asdict), or None if it is not one:
        counts are integers from 0, amounts finite numbers from 0; anything else refuses the record."""
        tally = cls()
        for name in ("uncached", "writes", "writes_1h", "reads", "output", "calls", "summary_calls", "unpriced"):
            value = record.get(name, 0)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 10**12:
                return None
            setattr(tally, name, value)
        usd = record.get("usd", {})
        if not isinstance(usd, dict):
            return None
        for part in PARTS:
            value = usd.get(part, 0.0)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < 10**9:
                return None
            tally.usd[part] = float(value)
        return tally

    def merge(self, other: "TokenTally") -> None:
        """Add another tally's calls (a sub-agent's, each already priced at the model that served it)."""
        for name in ("uncached", "writes", "writes_1h", "reads", "output", "calls", "summary_calls", "unpriced"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for part, usd in other.usd.items():
            self.usd[part] = self.usd.get(part, 0.0) + usd
        for model, (calls, price) in other.models.items():
            self.models.setdefault(model, [0, price])[0] += calls

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

    @property
    def cost(self) -> float | None:
        """What the calls cost, each at the price of the model that served it; None when a price is unknown."""
        return None if self.unpriced else sum(self.usd.values())

    def dollars(self, price: tuple[float, float] | None) -> float | None:
        """Every token at one `price` (a what-if; `cost` is what was really spent)."""
        if price is None:
            return None
        return (self.billed_input * price[0] + self.output * price[1]) / 1_000_000


class CostTracker:
    """Watches ResponseDone events; keeps the current turn's, the session's and the whole run's tallies
    (the run's survives /clear, which starts a new session). `pricing()` says which model answers now
    and at what price: a call is priced when it is counted."""

    def __init__(self, pricing=lambda: ("", None)):
        self.pricing = pricing
        self.session, self.turn, self.run = TokenTally(), TokenTally(), TokenTally()
        self.children = TokenTally()          # the session's sub-agents (delegation/), counted in the totals too

    def begin_turn(self) -> None:
        self.turn = TokenTally()

    def new_session(self) -> None:
        self.session, self.turn, self.children = TokenTally(), TokenTally(), TokenTally()

    def add(self, usage, summary: bool, model: str, price, resumed: bool = False) -> None:
        """One call; `resumed`: replayed from a session log (it counts for the session and the run)."""
        for tally in (self.session, self.run) if resumed else (self.session, self.turn, self.run):
            tally.add(usage, summary, price, model)

    def add_children(self, records: list) -> None:
        """The sub-agents' tallies of a resumed session (their task records), for the session and the run."""
        for record in records:
            tally = TokenTally.from_record(record) if isinstance(record, dict) else None
            if tally is not None:
                for total in (self.session, self.run, self.children):
                    total.merge(tally)

    def __call__(self, event) -> None:
        if isinstance(event, TaskFinished) and isinstance(event.tally, TokenTally):   # a sub-agent's calls
            for tally in (self.session, self.turn, self.run, self.children):
                tally.merge(event.tally)
        if isinstance(event, ResponseDone) and event.usage:
            model, price = self.pricing()
            self.add(event.usage, event.purpose == "summary", model, price)

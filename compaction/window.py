"""How much room there is, and when compacting costs least.

    Window       the model's context window in use: CONTEXT_WINDOW, or what the API said when it refused
                 a prompt ("prompt is too long: N tokens > M maximum"), learned once and kept for the
                 session (and for its resume). A learned window brings CONTEXT_LIMIT down to
                 WINDOW_SHARE of it, and the sizes of outputs kept in the context with it.
    CacheClock   when the prompt cache was last used. A turn that starts more than CACHE_TTL later
                 starts cold: the whole prompt must be written to the cache again anyway, so rewriting
                 it (compacting) costs nothing extra then. It also notices that the person pauses
                 longer than the cache lives, which is when a 1-hour cache for the stable prefix pays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from config import MIN_CONTEXT_WINDOW

WINDOW_SHARE = 0.75           # with a learned window, compact at 75% of it
MIN_WINDOW = MIN_CONTEXT_WINDOW   # a stated window below this is not believed; CONTEXT_WINDOW below it is refused
CACHE_TTL = 300.0             # seconds the API keeps a (5-minute) cache entry after its last use
LIFETIMES = {"5m": CACHE_TTL, "prefix": CACHE_TTL, "1h": 3600.0}   # what expires first, per CACHE_TTL mode
CHARS_PER_TOKEN = 3.5         # to turn a window into characters of ASCII text, roughly
PERSIST_SHARE, ROUND_SHARE = 8, 4      # one output ≤ 1/8 of the window, one round ≤ 1/4 (in chars)


@dataclass
class Window:
    limit_setting: int                  # CONTEXT_LIMIT
    window_setting: int                 # CONTEXT_WINDOW
    learned: int | None = None          # the maximum the API stated

    @property
    def tokens(self) -> int:
        return min(self.learned, self.window_setting) if self.learned else self.window_setting

    @property
    def limit(self) -> int:
        """Where compact_history starts: CONTEXT_LIMIT, kept WINDOW_SHARE under a learned window."""
        if self.learned and self.learned < self.window_setting:
            return max(1, min(self.limit_setting, int(self.learned * WINDOW_SHARE)))
        return self.limit_setting

    @property
    def source(self) -> str:
        return "learned from the API" if self.learned and self.learned < self.window_setting else "CONTEXT_WINDOW"

    def learn(self, maximum: int | None) -> bool:
        """The API stated its maximum; True when that changes the window in use. An endpoint's error text
        is untrusted: a maximum below MIN_WINDOW would make every later call compact, so it is ignored."""
        if not maximum or maximum < MIN_WINDOW or maximum >= self.tokens:
            return False
        self.learned = maximum
        return True

    def persist_threshold(self, setting: int) -> int:
        return min(setting, int(self.tokens * CHARS_PER_TOKEN) // PERSIST_SHARE)

    def round_budget(self, setting: int) -> int:
        return min(setting, int(self.tokens * CHARS_PER_TOKEN) // ROUND_SHARE)


class CacheClock:
    def __init__(self, clock=time.monotonic):
        self.clock, self.last = clock, None
        self.pause: float | None = None   # the latest gap between two calls that outlived the 5-minute cache

    @property
    def paused(self) -> bool:
        return self.pause is not None

    def used(self) -> None:
        """A model call read or wrote the cache just now."""
        now = self.clock()
        if self.last is not None and now - self.last > CACHE_TTL:
            self.pause = now - self.last
        self.last = now

    def auto_ttl(self) -> str:
        """CACHE_TTL=auto, from how this person pauses (bench/cost.py chose it): 5m while the cache stays
        warm between turns; 1h once a pause has outlived the 5-minute cache but would not outlive an
        hour's (writing at 2× then beats rewriting the whole prompt at 1.25× after every pause); after a
        pause longer than an hour nothing would survive it, so only the stable prefix gets the hour."""
        if self.pause is None:
            return "5m"
        return "1h" if self.pause <= LIFETIMES["1h"] else "prefix"

    def cold(self, ttl: str = "5m") -> bool:
        """Has the conversation's cache expired, for breakpoints of this `ttl` mode (or was it never
        written by this process)?"""
        return self.last is None or self.clock() - self.last > LIFETIMES.get(ttl, CACHE_TTL)

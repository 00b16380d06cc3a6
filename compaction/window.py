"""How much room there is, and when compacting costs least.

    Window       the model's context window in use, and where it came from (`source`, shown in the
                 banner and /context). In order: CONTEXT_WINDOW (set, or its default); what the server
                 said when asked (`told`, llm/window_probe.py: llama.cpp's /props, Ollama's /api/show,
                 vLLM's and SGLang's /v1/models), which replaces CONTEXT_WINDOW unless the person set it;
                 then what the endpoint showed (`learned`, only ever smaller): the maximum the API stated
                 refusing a prompt ("prompt is too long: N tokens > M maximum"), the size of an answer
                 the window cut off (`cut`, at least MIN_WINDOW), or the bound an empty answer gave
                 (`bound`). A learned window is kept for the session (and for its resume); a
                 CONTEXT_WINDOW the person sets wins over an empty answer's bound (app.py).
                 A window below CONTEXT_WINDOW brings CONTEXT_LIMIT down to WINDOW_SHARE of it, and
                 the sizes of outputs kept in the context with it.
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
MIN_BOUND = MIN_WINDOW // 2   # an empty answer's bound is in s08's estimate, which can count a dense paste (logs,
                              # numbers) at half the endpoint's tokens: a MIN_WINDOW endpoint may show up here
MAX_TOLD = 16_777_216         # a server saying more than this (16M tokens) is not believed
API_STATED = "learned from the API"
CACHE_TTL = 300.0             # seconds the API keeps a (5-minute) cache entry after its last use
LIFETIMES = {"5m": CACHE_TTL, "prefix": CACHE_TTL, "1h": 3600.0}   # what expires first, per CACHE_TTL mode
CHARS_PER_TOKEN = 3.5         # to turn a window into characters of ASCII text, roughly
PERSIST_SHARE, ROUND_SHARE = 8, 4      # one output ≤ 1/8 of the window, one round ≤ 1/4 (in chars)


def silence_bound(answered: int, silent: int) -> int:
    """The window an empty answer to a prompt of `silent` tokens implies, when the largest prompt this
    endpoint answered was `answered` tokens (both as s08 estimates them: the endpoint counts its own
    way and said nothing of the silent prompt): it lies between the two, and where the endpoint does not
    say. The midpoint: s08 keeps its requests under 80 % of the window (compacting at WINDOW_SHARE), which
    for the midpoint is under the answered prompt whenever that was at least two thirds of the silent one
    — the usual case, a paste too many — so the next request fits; after a jump (a short question
    answered, then a big paste) it does not trust the silent size, and each further silence would halve
    what is unknown again. Taking the silent size itself fails again whenever the window is under 80 %
    of it; taking the answered size wastes most of the window after one short answer. Nothing answered
    (a resumed session, silent twice): half of it."""
    return max(0, answered) + max(0, silent - max(0, answered)) // 2


@dataclass
class Window:
    limit_setting: int                  # CONTEXT_LIMIT
    window_setting: int                 # CONTEXT_WINDOW
    learned: int | None = None          # the maximum the API stated, or the bound an empty answer gave
    learned_from: str = API_STATED      # where `learned` came from (shown)
    told: int | None = None             # what the server said when asked (llm/window_probe.py)
    told_from: str = ""                 # e.g. "llama.cpp /props n_ctx"

    @property
    def base(self) -> int:
        """The window before the endpoint showed anything: the server's word, or CONTEXT_WINDOW."""
        return self.told or self.window_setting

    @property
    def tokens(self) -> int:
        return min(self.learned, self.base) if self.learned else self.base

    @property
    def shrunk(self) -> bool:
        """The window in use is below CONTEXT_WINDOW: the limit follows it."""
        return self.tokens < self.window_setting

    @property
    def limit(self) -> int:
        """Where compact_history starts: CONTEXT_LIMIT, kept WINDOW_SHARE under a smaller window."""
        if self.shrunk:
            return max(1, min(self.limit_setting, int(self.tokens * WINDOW_SHARE)))
        return self.limit_setting

    @property
    def known(self) -> int | None:
        """The window the endpoint stated, told or showed (None: only CONTEXT_WINDOW is known)."""
        return self.tokens if self.learned or self.told else None

    @property
    def source(self) -> str:
        if self.learned and self.learned < self.base:
            return self.learned_from
        return self.told_from if self.told else "CONTEXT_WINDOW"

    def learn(self, maximum: int | None, origin: str = API_STATED, floor: int = MIN_WINDOW) -> bool:
        """The API stated its maximum; True when that changes the window in use. An endpoint's error text
        is untrusted: a maximum below MIN_WINDOW would make every later call compact, so it is ignored."""
        if not maximum or maximum < floor or maximum >= self.tokens:
            return False
        self.learned, self.learned_from = maximum, origin
        return True

    def bound(self, answered: int, silent: int) -> int | None:
        """An empty answer to `silent` tokens after `answered` were answered (silence_bound); the window
        learned, or None when it changes nothing (or is below MIN_BOUND: not believed)."""
        window = silence_bound(answered, silent)
        if self.learn(window, silence_origin(silent), MIN_BOUND):
            return window
        return None

    def cut(self, size: int) -> bool:
        """An answer the window cut off when prompt and answer measured `size` tokens (s08's measure): the
        window is at most that. Below MIN_WINDOW it is MIN_WINDOW, the smallest accepted: s08's measure of
        a window of exactly MIN_WINDOW can fall a few tokens short of it, and ignoring the cut would let
        the next request overflow. Under MIN_BOUND it is not believed (an output cap of a gateway, not a
        window, cuts an answer that short). True when that changes the window in use."""
        if size < MIN_BOUND:
            return False
        return self.learn(max(size, MIN_WINDOW), f"learned from an answer cut off at ~{size:,} tokens")

    def tell(self, tokens: int, source: str) -> bool:
        """The server said its window when asked; True when that changes the window in use."""
        if not MIN_WINDOW <= tokens <= MAX_TOLD or tokens == self.told:
            return False
        before = self.tokens
        self.told, self.told_from = tokens, source
        return self.tokens != before

    def restore(self, tokens: int | None, silent: int | None = None) -> bool:
        """A window learned in an earlier session (its log): from an empty answer at `silent` tokens, or
        stated by the API."""
        if silent:
            return self.learn(tokens, silence_origin(silent), MIN_BOUND)
        return self.learn(tokens)

    def persist_threshold(self, setting: int) -> int:
        return min(setting, int(self.tokens * CHARS_PER_TOKEN) // PERSIST_SHARE)

    def round_budget(self, setting: int) -> int:
        return min(setting, int(self.tokens * CHARS_PER_TOKEN) // ROUND_SHARE)


def silence_origin(silent: int) -> str:
    return f"learned from an empty answer at ~{silent:,} tokens"


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

"""One normalised usage record: what a model call cost in tokens, by kind.

    Usage.of(api_usage)   from the API's `usage` dict (untrusted: cleaned, clamped to [0, MAX_USAGE])
    usage.to_api()        back to the API's shape (the session log keeps that, so old logs still load)
    usage.total           everything it covers: the prompt (uncached + cache read + cache write) and output

The API's usage keys appear as literals only in this module. `cache_write` counts every cache write,
`cache_write_1h` the part of it written with a one-hour lifetime (the API's `cache_creation` split).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_USAGE = 10_000_000
INPUT, OUTPUT = "input_tokens", "output_tokens"
CACHE_READ, CACHE_WRITE = "cache_read_input_tokens", "cache_creation_input_tokens"
USAGE_KEYS = (INPUT, OUTPUT, CACHE_WRITE, CACHE_READ)
SPLIT, SPLIT_1H = "cache_creation", "ephemeral_1h_input_tokens"


def clean_count(value) -> int | None:
    """A token count as a sane integer in [0, MAX_USAGE], or None when it is not a number."""
    if isinstance(value, str) and value.strip().isdecimal():      # isdigit() takes "²", which int() refuses
        value = int(value.strip()[:12])
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return min(max(value, 0), MAX_USAGE)
    return None


def clean_usage(usage) -> dict:
    """The token counts of an API usage object as sane integers; anything else dropped (a key that
    is absent stays absent: a stream's later events update only what they carry)."""
    out: dict = {}
    if not isinstance(usage, dict):
        return out
    for key in USAGE_KEYS:
        value = clean_count(usage.get(key))
        if value is not None:
            out[key] = value
    split = usage.get(SPLIT)
    one_hour = clean_count(split.get(SPLIT_1H)) if isinstance(split, dict) else None
    if one_hour:
        out[SPLIT] = {SPLIT_1H: one_hour}
    return out


@dataclass(frozen=True)
class Usage:
    input: int = 0              # uncached prompt tokens
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0        # all cache writes, one-hour ones included
    cache_write_1h: int = 0

    @classmethod
    def of(cls, usage) -> "Usage":
        """From an API usage dict (cleaned), a Usage (itself), or None (all zero)."""
        if isinstance(usage, Usage):
            return usage
        u = clean_usage(usage)
        split = u.get(SPLIT, {})
        return cls(u.get(INPUT, 0), u.get(OUTPUT, 0), u.get(CACHE_READ, 0), u.get(CACHE_WRITE, 0),
                   min(split.get(SPLIT_1H, 0), u.get(CACHE_WRITE, 0)))

    def to_api(self) -> dict:
        """The API's shape: the four counts, and the one-hour split when there is one."""
        out: dict = {INPUT: self.input, OUTPUT: self.output, CACHE_WRITE: self.cache_write, CACHE_READ: self.cache_read}
        if self.cache_write_1h:
            out[SPLIT] = {SPLIT_1H: self.cache_write_1h}
        return out

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @property
    def total(self) -> int:
        return self.prompt + self.output

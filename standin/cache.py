"""The stand-in's prompt cache, simulated the way the API does it.

The request is a sequence of blocks in cache order — tools, system, messages —
each with a running hash of everything up to it. A block marked with
`cache_control` is a breakpoint:

- read: for each breakpoint, the cache is checked at that block and up to
  LOOKBACK blocks before it; the longest prefix found is read
  (`cache_read_input_tokens`, billed at 0.1×);
- write: the prefix up to each breakpoint is stored if it is at least
  MIN_CACHEABLE tokens; everything from the end of the read prefix to the last
  breakpoint is `cache_creation_input_tokens` (billed at 1.25×);
- the rest is `input_tokens`.

An entry lives its breakpoint's TTL (`"ttl": "5m"`, the default, or `"1h"`)
after it was last written or read; what a write costs depends on it, so the
written tokens are split in `cache_creation` by lifetime as the API does
(`ephemeral_5m_input_tokens`, `ephemeral_1h_input_tokens`: each stretch of
the prompt is billed at the lifetime of the breakpoint that ends it). The
clock is real time unless a test or benchmark gives its own. `shared_prefix()` is the same walk with every block a breakpoint, no
look-back limit and no expiry — the ideal a perfect cache would reach, used by
the cost benchmark.
"""

from __future__ import annotations

import hashlib
import threading
import time

from .tokens import REQUEST_OVERHEAD, request_blocks

LOOKBACK = 20
MIN_CACHEABLE = 1024
TTL = 300.0
TTLS = {"5m": TTL, "1h": 3600.0}


def _chain(body: dict) -> tuple[list[str], list[int], dict[int, str]]:
    """(running hashes, running token totals, breakpoint index → its ttl) of the request's blocks."""
    running = hashlib.sha256(str(body.get("model")).encode())
    hashes, totals, marks, total = [], [], {}, 0
    for i, (material, tokens, control) in enumerate(request_blocks(body)):
        running.update(material.encode("utf-8", "surrogatepass"))
        hashes.append(running.copy().hexdigest())
        total += tokens
        totals.append(total)
        if control:
            marks[i] = control.get("ttl", "5m") if isinstance(control, dict) else "5m"
    return hashes, totals, marks


class PromptCache:
    def __init__(self, min_cacheable: int = MIN_CACHEABLE, ttl: float = TTL, clock=time.monotonic):
        self.entries: dict[str, tuple[float, str]] = {}     # prefix hash → (when it expires, its ttl)
        self.min_cacheable, self.ttl, self.clock = min_cacheable, ttl, clock
        self.lock = threading.Lock()

    def _life(self, ttl: str) -> float:
        return self.ttl if ttl == "5m" else TTLS.get(ttl, self.ttl)

    def usage(self, body: dict) -> dict:
        """input / cache read / cache creation tokens of this request, updating the cache."""
        hashes, totals, marks = _chain(body)
        full = (totals[-1] if totals else 0) + REQUEST_OVERHEAD
        with self.lock:
            now = self.clock()
            read, hit = 0, None
            for mark in marks:
                for j in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                    entry = self.entries.get(hashes[j])
                    if entry and entry[0] >= now:
                        if totals[j] > read:
                            read, hit = totals[j], hashes[j]
                        break
            if hit:
                self.entries[hit] = (now + self._life(self.entries[hit][1]), self.entries[hit][1])   # a read refreshes it
            by_ttl, done = {"5m": 0, "1h": 0}, read
            for m, ttl in marks.items():
                if totals[m] < self.min_cacheable:
                    continue
                by_ttl[ttl if ttl in by_ttl else "5m"] += max(0, totals[m] - done)
                done = max(done, totals[m])
                entry = self.entries.get(hashes[m])
                if entry and entry[0] >= now:      # already cached: refreshed for its own lifetime, not upgraded
                    self.entries[hashes[m]] = (now + self._life(entry[1]), entry[1])
                else:
                    self.entries[hashes[m]] = (now + self._life(ttl), ttl)
        written = by_ttl["5m"] + by_ttl["1h"]
        return {"input_tokens": full - read - written, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written,
                "cache_creation": {"ephemeral_5m_input_tokens": by_ttl["5m"], "ephemeral_1h_input_tokens": by_ttl["1h"]}}


def shared_prefix(body: dict, seen: set[str]) -> tuple[int, int]:
    """(tokens of the longest prefix already in `seen`, total tokens); adds this request to `seen`."""
    hashes, totals, _marks = _chain(body)
    shared = next((totals[j] for j in range(len(hashes) - 1, -1, -1) if hashes[j] in seen), 0)
    seen.update(hashes)
    return shared, (totals[-1] if totals else 0) + REQUEST_OVERHEAD

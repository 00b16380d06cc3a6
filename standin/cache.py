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

An entry lives TTL seconds (5 minutes, as the API's default) after it was
last written or read; the clock is real time unless a test or benchmark gives
its own. `shared_prefix()` is the same walk with every block a breakpoint, no
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


def _chain(body: dict) -> tuple[list[str], list[int], list[int]]:
    """(running hashes, running token totals, breakpoint indexes) of the request's blocks."""
    running = hashlib.sha256(str(body.get("model")).encode())
    hashes, totals, marks, total = [], [], [], 0
    for i, (material, tokens, marked) in enumerate(request_blocks(body)):
        running.update(material.encode("utf-8", "surrogatepass"))
        hashes.append(running.copy().hexdigest())
        total += tokens
        totals.append(total)
        if marked:
            marks.append(i)
    return hashes, totals, marks


class PromptCache:
    def __init__(self, min_cacheable: int = MIN_CACHEABLE, ttl: float = TTL, clock=time.monotonic):
        self.entries: dict[str, float] = {}     # prefix hash → when it expires
        self.min_cacheable, self.ttl, self.clock = min_cacheable, ttl, clock
        self.lock = threading.Lock()

    def usage(self, body: dict) -> dict:
        """input / cache read / cache creation tokens of this request, updating the cache."""
        hashes, totals, marks = _chain(body)
        full = (totals[-1] if totals else 0) + REQUEST_OVERHEAD
        with self.lock:
            now = self.clock()
            read, hit = 0, None
            for mark in marks:
                for j in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                    if self.entries.get(hashes[j], -1) >= now:
                        if totals[j] > read:
                            read, hit = totals[j], hashes[j]
                        break
            if hit:
                self.entries[hit] = now + self.ttl          # a read refreshes the entry
            written = 0
            if marks and totals[marks[-1]] >= self.min_cacheable:
                written = max(0, totals[marks[-1]] - read)
                for m in marks:
                    if totals[m] >= self.min_cacheable:
                        self.entries[hashes[m]] = now + self.ttl
        return {"input_tokens": full - read - written, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written}


def shared_prefix(body: dict, seen: set[str]) -> tuple[int, int]:
    """(tokens of the longest prefix already in `seen`, total tokens); adds this request to `seen`."""
    hashes, totals, _marks = _chain(body)
    shared = next((totals[j] for j in range(len(hashes) - 1, -1, -1) if hashes[j] in seen), 0)
    seen.update(hashes)
    return shared, (totals[-1] if totals else 0) + REQUEST_OVERHEAD

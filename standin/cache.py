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

No TTL: entries live as long as the stand-in does. `shared_prefix()` is the
same walk with every block a breakpoint and no look-back limit — the ideal a
perfect cache would reach, used by the cost benchmark.
"""

from __future__ import annotations

import hashlib
import threading

from .tokens import REQUEST_OVERHEAD, request_blocks

LOOKBACK = 20
MIN_CACHEABLE = 1024


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
    def __init__(self):
        self.entries: set[str] = set()
        self.seen: set[str] = set()          # every prefix ever sent (for the ideal)
        self.lock = threading.Lock()

    def usage(self, body: dict) -> dict:
        """input / cache read / cache creation tokens of this request, updating the cache."""
        hashes, totals, marks = _chain(body)
        full = (totals[-1] if totals else 0) + REQUEST_OVERHEAD
        with self.lock:
            read = 0
            for mark in marks:
                for j in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                    if hashes[j] in self.entries:
                        read = max(read, totals[j])
                        break
            written = 0
            if marks and totals[marks[-1]] >= MIN_CACHEABLE:
                written = max(0, totals[marks[-1]] - read)
                self.entries.update(hashes[m] for m in marks if totals[m] >= MIN_CACHEABLE)
            self.seen.update(hashes)
        return {"input_tokens": full - read - written, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written}


def shared_prefix(body: dict, seen: set[str]) -> tuple[int, int]:
    """(tokens of the longest prefix already in `seen`, total tokens); adds this request to `seen`."""
    hashes, totals, _marks = _chain(body)
    shared = next((totals[j] for j in range(len(hashes) - 1, -1, -1) if hashes[j] in seen), 0)
    seen.update(hashes)
    return shared, (totals[-1] if totals else 0) + REQUEST_OVERHEAD

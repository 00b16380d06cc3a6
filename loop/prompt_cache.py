"""The prompt-cache policy of one conversation: where cache_control breakpoints go, and the anchor.

    marks = CacheMarks()
    system, messages, done = marks.mark(system, messages, purpose, ttl)   # before a call
    done()                                                                # after it succeeded

At most the API's 4 breakpoints: the system prompt (which caches the tools before it too), the
newest message, and the message that was newest in the previous call (the anchor) — so the cache
written then is read now even when more than 20 blocks were added since. The anchor is the
conversation's, not the client's: it relies on untouched messages staying the same objects.
"""

from __future__ import annotations

from messages import blocks as history_blocks

EPHEMERAL = {"type": "ephemeral"}
ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}
CACHEABLE = {"text", "tool_use", "tool_result", "image", "document"}


def _mark_last_block(message: dict, control: dict = EPHEMERAL) -> dict:
    """A copy of `message` with cache_control on its last block that can carry one."""
    blocks = history_blocks(message)
    for i in range(len(blocks) - 1, -1, -1):
        b = blocks[i]
        if b.get("type") in CACHEABLE and (b.get("type") != "text" or b.get("text", "").strip()):
            blocks[i] = {**b, "cache_control": control}
            return {**message, "content": blocks}
    return message


def cache_breakpoints(system: str, messages: list[dict], anchor, tail: bool = True, ttl: str = "5m"):
    """Prompt-caching breakpoints, at most the API's 4: the system prompt (which caches the tools
    before it too), the newest message, and the message that was newest in the previous call — so the
    cache written then is read now even when more than 20 blocks were added since. `ttl` is how long
    they live: "5m" (the API's default), "1h" (a write costs 2× instead of 1.25×, but outlives a pause
    of up to an hour), or "prefix": an hour for the stable prefix — the system prompt and the first
    message (a summary, or the request snip keeps at the head), marked on its own — and 5 minutes for
    the rest (the API wants 1-hour breakpoints before 5-minute ones).
    Returns (system blocks, messages with copies where marked, the new anchor). Never mutates."""
    prefix = ttl in ("prefix", "1h")
    rest = ONE_HOUR if ttl == "1h" else EPHEMERAL
    marked = list(messages)
    if ttl == "prefix" and len(messages) > 1:
        marked[0] = _mark_last_block(messages[0], ONE_HOUR)
    if anchor is not None:
        for i in range(len(messages) - 1, 0 if ttl == "prefix" else -1, -1):
            if messages[i] is anchor:
                marked[i] = _mark_last_block(messages[i], rest)
                break
    if tail and messages and marked[-1] is messages[-1]:
        marked[-1] = _mark_last_block(messages[-1], rest)
    control = ONE_HOUR if prefix else EPHEMERAL
    system_blocks = [{"type": "text", "text": system, "cache_control": control}] if system else system
    return system_blocks, marked, (messages[-1] if tail and messages else anchor)


class CacheMarks:
    """Where one conversation's cache ends: the newest message of its previous call (the anchor)."""

    def __init__(self):
        self.anchor = None

    def mark(self, system, messages: list[dict], purpose: str, ttl: str):
        """(system, messages, done): the request's parts with breakpoints, and what to call once the
        call succeeded (it moves the anchor). A summary call's breakpoints end at the history's last
        message: its prefix is read from the cache, and the instruction after it is not written to it
        (nothing would read it again). Only when the anchor is not in a summary request (a shortened
        one) is the history's end marked, so the look-back can find it."""
        if purpose == "summary":
            history = messages[:-1]
            present = any(m is self.anchor for m in history)
            system, marked, _ = cache_breakpoints(system, history, self.anchor, not present, ttl)
            return system, marked + messages[-1:], lambda: None
        system, marked, anchor = cache_breakpoints(system, messages, self.anchor, True, ttl)

        def done():
            self.anchor = anchor
        return system, marked, done

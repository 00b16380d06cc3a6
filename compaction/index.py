"""Facts about each message, computed once per message object, kept in step with the history.

    first = index.sync(messages)     the first position whose message differs from the last sync;
                                     the facts of everything before it are kept, the rest recomputed
    index.tokens[i], index.total     estimated tokens of each message, and of all of them
    index.results                    every tool_result: where it is, and what clearing it would save
    index.marks["budget"]            how far a consumer has looked; any change below lowers its mark

The pipeline runs before every model call. Without this it would walk the whole history each time —
harmless at 50 messages, but the cost of a turn should not depend on how long the session has been.
With it, a steady-state call costs the same at 200 and at 20,000 messages.

Which messages changed is learned from the history itself when it can say (`LoggedHistory`
counts its changes; see session/log.py), otherwise by comparing with the list seen last (a C-level
comparison that stops at the first difference; equal messages count as unchanged, since their facts
are equal too). The contract this relies on, and which every layer keeps: a layer never mutates a
message; it returns a new list in which every message it did not change is the same object.
"""

from __future__ import annotations

from dataclasses import dataclass

from messages import blocks
from .boundaries import result_text
from .markers import MIN_CHARS, PLACEHOLDER_PREFIX, placeholder
from .tokens import estimate_message, estimate_system, estimate_text, estimate_tools, usage_tokens


@dataclass(frozen=True)
class ResultFact:
    message: int       # index of the user message holding it
    block: int         # index of the block in that message
    name: str          # the tool that produced it
    saving: int | None  # tokens micro_compact would save by clearing it (None: it would not clear it)


class MessageIndex:
    def __init__(self, preserve: frozenset = frozenset(), min_chars: int = MIN_CHARS):
        self.preserve, self.min_chars = preserve, min_chars
        self.seen: list[dict] = []
        self.tokens: list[int] = []
        self.total = 0
        self.results: list[ResultFact] = []
        self.before: list[tuple[int, int]] = [(0, 0)]   # before[k] = (clearable count, saving) of results[:k]
        self.names: dict[str, str] = {}             # tool_use id → tool name
        self.marks: dict[str, int] = {}
        self.source: list[dict] | None = None       # the list last synced,
        self.version: int | None = None             # and its change counter then

    # ---- keeping in step ---------------------------------------------------------------------
    def _first_change(self, messages: list[dict]) -> int:
        k = min(len(messages), len(self.seen))
        since = getattr(messages, "lowest_change_since", None)
        if since is not None and messages is self.source and self.version is not None:
            return min(since(self.version), k)
        if messages[:k] == self.seen[:k]:
            return k
        low, high = 0, k                            # [0, low) equal, [0, high) not: halve with C-level compares
        while high - low > 1:
            mid = (low + high) // 2
            if messages[:mid] == self.seen[:mid]:
                low = mid
            else:
                high = mid
        return low

    def sync(self, messages: list[dict]) -> int:
        """Bring the facts in step with `messages`; returns the first position that changed."""
        first = self._first_change(messages)
        if first < len(self.seen):
            self.total -= sum(self.tokens[first:])
            del self.seen[first:], self.tokens[first:]
            while self.results and self.results[-1].message >= first:
                self.results.pop()
                self.before.pop()
        for i in range(len(self.seen), len(messages)):
            self._add(i, messages[i])
        for name, mark in self.marks.items():
            self.marks[name] = min(mark, first)
        self.source, self.version = messages, getattr(messages, "version", None)
        return first

    def _add(self, i: int, message: dict) -> None:
        self.seen.append(message)
        tokens = estimate_message(message)
        self.tokens.append(tokens)
        self.total += tokens
        role = message.get("role")
        for j, b in enumerate(blocks(message)):
            if role == "assistant" and b.get("type") == "tool_use":
                self.names[b.get("id", "")] = b.get("name", "tool")
            elif role == "user" and b.get("type") == "tool_result" and not isinstance(message.get("content"), str):
                name = self.names.get(b.get("tool_use_id", ""), "tool")
                fact = ResultFact(i, j, name, self._saving(b, name))
                count, saving = self.before[-1]
                self.results.append(fact)
                self.before.append((count, saving) if fact.saving is None else (count + 1, saving + fact.saving))

    def _saving(self, block: dict, name: str) -> int | None:
        """What micro_compact saves by clearing this result (the same tests as micro.py), or None."""
        if name in self.preserve or not isinstance(block.get("content"), (str, list)):
            return None
        text = result_text(block)
        if len(text) <= self.min_chars or text.startswith(PLACEHOLDER_PREFIX):
            return None
        new_text = placeholder(name, text)
        if len(new_text) >= len(text):
            return None
        return estimate_text(text) - estimate_text(new_text)

    # ---- questions -------------------------------------------------------------------------------
    def clearable(self, keep_recent: int, unseen_from: int) -> tuple[int, int]:
        """(how many results, tokens saved) micro_compact would clear now: every result it may clear
        but the `keep_recent` newest and those the model has not seen yet (at `unseen_from` or later).
        O(the newest few results)."""
        end = max(0, len(self.results) - keep_recent) if keep_recent > 0 else len(self.results)
        while end and self.results[end - 1].message >= unseen_from:
            end -= 1
        return self.before[end]

    def tokens_from(self, start: int) -> int:
        return sum(self.tokens[start:])


class ContextMeter:
    """The prompt's size in tokens: the last response's usage (exact for everything it covered) plus
    estimates of what was added since; without a usage that still applies, estimates of everything."""

    def __init__(self, index: MessageIndex | None = None):
        self.index = index or MessageIndex()
        self.covered, self.tokens = 0, 0
        self._fixed: tuple = (None, None, 0)       # (system, tools, their estimate)

    def observe(self, messages: list[dict], usage: dict) -> None:
        """Call after a reply was appended: `messages` now ends with what the usage covers."""
        total = usage_tokens(usage)
        if total > 0:
            self.anchor(messages, len(messages), total)

    def anchor(self, messages: list[dict], covered: int, tokens: int) -> None:
        """The first `covered` messages measured `tokens` (a usage; on resume, the log's last one)."""
        self.index.sync(messages)
        self.covered, self.tokens = covered, tokens
        self.index.marks["meter"] = covered

    def forget(self) -> None:
        self.covered, self.tokens = 0, 0

    def _fixed_tokens(self, system, tools) -> int:
        if self._fixed[0] != system or self._fixed[1] is not tools:
            self._fixed = (system, tools, estimate_system(system) + estimate_tools(tools))
        return self._fixed[2]

    def estimate(self, messages: list[dict], system=None, tools=None) -> int:
        """s08's own estimate of everything, whatever a usage said."""
        self.index.sync(messages)
        return self._fixed_tokens(system, tools) + self.index.total

    def measure(self, messages: list[dict], system=None, tools=None, scale: float = 1.0) -> int:
        """`scale`: how much the endpoint counts over s08's estimate — applied to what is estimated only
        (what a usage covered is the endpoint's own count already)."""
        self.index.sync(messages)
        if self.covered and self.index.marks.get("meter", 0) >= self.covered and len(messages) >= self.covered:
            return self.tokens + int(self.index.tokens_from(self.covered) * scale)
        return int((self._fixed_tokens(system, tools) + self.index.total) * scale)

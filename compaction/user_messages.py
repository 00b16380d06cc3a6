"""What the person typed — recorded when they typed it, so every layer can keep it.

    UserMessages.add(text)        the person typed this (the loop calls it; the session logs it)
    visible(messages)             which of those messages the history still shows, and at what size
    carry(messages, budget)       text blocks that make the others visible again, for the message
                                  that replaces a cut (the snip marker, the summary message)

A message is the person's because s08 recorded it at the prompt — never because of how its text
looks — so nothing typed can pass for compaction's own text, nor the other way round. The history
shows message n either whole (a user text block with exactly its text) or shortened by s08
(a block that re-renders exactly from the record, naming n):

    <head of the message>
    [… message 3 of yours is shortened here: 41,200 of its 45,000 characters are left out; it is
    whole in .transcripts/snipped_….jsonl …]
    <tail of the message>

Budget: newest first. A message still in its place costs what it costs; a carried one is kept
whole if it fits what is left, else shortened to fit, else (nothing left) counted in one line
that says where they are. So what is carried never exceeds the budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from messages import blocks
from .tokens import estimate_text

MIN_SHORT_TOKENS = 60            # below this a shortened copy says too little: the message is counted instead
NOTE_TOKENS = 60                 # room kept for the line that counts the messages left out
MAX_SPANS = 5                    # "messages 1–3, 7" lists at most this many spans
WHOLE_SOMEWHERE = "the transcripts listed in the work ledger"
CARRY_LABEL = ("The user's own messages, oldest first, exactly as typed "
               "(s08 keeps them through every compaction; the last one is the most recent):")
_SHORT = re.compile(r"\n\[… message (\d+) of yours is shortened here: ([\d,]+) of its ([\d,]+) characters "
                    r"are left out; it is whole in (.*?) …\]\n")


@dataclass
class Typed:
    text: str
    saved_in: str = ""           # the transcript that holds it whole, once a cut moved it out of place
    dropped: bool = False        # /rewind took the conversation back before it: never carried again


def shortened(number: int, text: str, keep: int, where: str) -> str:
    """Message `number` cut to its first and last characters (`keep` in all), naming where it is whole."""
    head, tail = text[:keep // 2], text[len(text) - (keep - keep // 2):]
    return (f"{head}\n[… message {number} of yours is shortened here: {len(text) - keep:,} of its {len(text):,} "
            f"characters are left out; it is whole in {where} …]\n{tail}")


class UserMessages:
    """Every message the person typed in this session, in order; message n is entries[n - 1]."""

    def __init__(self, entries: list[Typed] | None = None, on_record: Callable[[dict], None] | None = None):
        self.entries: list[Typed] = list(entries or [])
        self.on_record = on_record

    def __len__(self) -> int:
        return len(self.entries)

    def _log(self, record: dict) -> None:
        if self.on_record is not None:
            self.on_record(record)

    def add(self, text: str) -> int:
        """Record what the person typed; returns its number (the turn)."""
        self.entries.append(Typed(text))
        self._log({"t": "typed", "text": text})
        return len(self.entries)

    def saved(self, index: int, path: str) -> None:
        """Message index+1 left its place; `path` holds it whole (the first such transcript is kept)."""
        if not self.entries[index].saved_in:
            self.entries[index].saved_in = path
            self._log({"t": "typed_saved", "i": index, "path": path})

    def drop(self, first: int, last: int) -> None:
        """/rewind took the conversation back before message `first`: messages first..last (1-based) are
        no longer part of it, and no cut carries them back."""
        for entry in self.entries[first - 1:last]:
            entry.dropped = True
        self._log({"t": "rewound", "first": first, "last": last})

    def apply(self, record: dict) -> None:
        """Replay one logged record (see session/log.py)."""
        if record["t"] == "rewound":
            for entry in self.entries[max(0, record["first"] - 1):record["last"]]:
                entry.dropped = True
        elif record["t"] == "typed":
            self.entries.append(Typed(record["text"]))
        elif record["t"] == "typed_saved" and 0 <= record["i"] < len(self.entries):
            self.entries[record["i"]].saved_in = record["path"]

    # ---- what the history shows ------------------------------------------------------------
    def _verified_short(self, text: str) -> int | None:
        """The index a shortened copy stands for, if the block is exactly what s08 renders for it."""
        found = _SHORT.search(text)
        if not found:
            return None
        n, omitted, total = (int(g.replace(",", "")) for g in found.groups()[:3])
        if not 1 <= n <= len(self.entries):
            return None
        whole = self.entries[n - 1].text
        if len(whole) != total or not 0 < omitted < total:
            return None
        return n - 1 if shortened(n, whole, total - omitted, found.group(4)) == text else None

    def visible(self, messages: list[dict]) -> dict[int, int]:
        """index → tokens shown, for every recorded message the history shows (whole or shortened)."""
        waiting: dict[str, list[int]] = {}
        for i, entry in enumerate(self.entries):
            if not entry.dropped:
                waiting.setdefault(entry.text, []).append(i)
        shown: dict[int, int] = {}
        for m in messages:
            if m.get("role") != "user":
                continue
            for b in blocks(m):
                text = b.get("text") if b.get("type") == "text" else None
                if not text:
                    continue
                if waiting.get(text):
                    shown[waiting[text].pop()] = estimate_text(text)     # copies of one text: newest first
                elif "of yours is shortened here" in text:
                    index = self._verified_short(text)
                    if index is not None and index not in shown:
                        shown[index] = estimate_text(text)
        return shown

    # ---- what rides along ------------------------------------------------------------------
    def _fit(self, index: int, tokens: int, where: str) -> str:
        text = self.entries[index].text
        keep = min(len(text) - 1, int(tokens * 3))
        while keep > 40:
            out = shortened(index + 1, text, keep, where)
            if estimate_text(out) <= tokens:
                return out
            keep = int(keep * 0.8)
        return ""

    def _choose(self, shown: dict[int, int], budget: int, where: dict[int, str]) -> tuple[dict, list]:
        """Newest first: in place costs what it shows; carried whole if it fits, shortened if some room
        is left, else counted. Returns ({index: text}, [counted indexes])."""
        remaining, picked, counted = budget, {}, []
        for i in range(len(self.entries) - 1, -1, -1):
            if self.entries[i].dropped:
                continue
            if i in shown:
                remaining -= shown[i]
                continue
            cost = estimate_text(self.entries[i].text)
            if cost <= remaining:
                picked[i] = self.entries[i].text
            elif remaining >= MIN_SHORT_TOKENS and (short := self._fit(i, remaining, where[i])):
                picked[i] = short
                cost = estimate_text(short)
            else:
                counted.append(i)
                continue
            remaining -= cost
        return picked, counted

    def carry(self, kept: list[dict], budget: int, saved_in: str = "") -> tuple[list[dict], list[int]]:
        """The text blocks that make every recorded message missing from `kept` visible, within `budget`
        tokens (newest first), and the indexes this cut moves out of place. `saved_in` is the transcript
        of the cut being made: call `saved(i, saved_in)` for those indexes once the cut is kept."""
        if budget <= 0:               # USER_MESSAGES_BUDGET=0: kept nowhere (the tutorial's behaviour)
            return [], []
        shown = self.visible(kept)
        moved = [i for i in range(len(self.entries))
                 if i not in shown and not self.entries[i].saved_in and not self.entries[i].dropped]
        where = {i: self.entries[i].saved_in or saved_in or WHOLE_SOMEWHERE for i in range(len(self.entries))}
        picked, counted = self._choose(shown, budget, where)
        if counted:                   # the line that counts them must fit in the budget too
            picked, counted = self._choose(shown, budget - NOTE_TOKENS, where)
        if not picked and not counted:
            return [], moved
        out = [{"type": "text", "text": CARRY_LABEL}]
        if counted:
            numbers = sorted(i + 1 for i in counted)
            wheres = sorted({where[i] for i in counted})
            places = ", ".join(wheres) if len(wheres) <= 2 else WHOLE_SOMEWHERE
            out.append({"type": "text", "text": f"[… {len(counted)} earlier message{'s' * (len(counted) > 1)} of "
                        f"yours ({_ranges(numbers)}) left out here to stay within USER_MESSAGES_BUDGET; whole "
                        f"in {places} …]"})
        out += [{"type": "text", "text": picked[i]} for i in sorted(picked)]
        return out, moved


def _ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 7] → "messages 1–3, 7"."""
    spans, start = [], numbers[0]
    for a, b in zip(numbers, [*numbers[1:], None]):
        if b != a + 1:
            spans.append(f"{start}–{a}" if a != start else f"{a}")
            start = b if b is not None else start
    if len(spans) > MAX_SPANS:
        return f"some of messages {numbers[0]}–{numbers[-1]}"
    return "message" + ("s " if len(numbers) > 1 else " ") + ", ".join(spans)

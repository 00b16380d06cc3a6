"""Sessions that survive anything: an append-only log per session, and resuming from it.

Every change to the history is appended to `.sessions/<id>.jsonl` the moment
it happens, one JSON record per line, written with a single write() and
fsync'd — so `kill -9` at any moment loses at most the answer still in flight:

    {"t": "session", "id": …, "workspace": …, "model": …, "started": …}   header
    {"t": "append",  "m": {message}}                                       a message entered the history
    {"t": "set",     "i": 5, "m": {message}}                               message 5 was replaced
    {"t": "extend",  "i": 5, "blocks": [...]}                              message 5 grew by these blocks
                                                                           (tool results, one by one)
    {"t": "replace", "keep": 3, "tail": [...]}                             compaction: the first 3 stay, the
                                                                           rest is now `tail` (keep 0: the
                                                                           whole history — a snapshot)
    {"t": "usage",   "n": 12, "u": {usage}, "p": "answer", "model": …}     what a model call cost, and
                                                                           the model that served it
    {"t": "typed",   "text": "…"}                                          the person typed this (it is
                                                                           the person's because it was
                                                                           recorded here, not by its look)
    {"t": "typed_saved", "i": 3, "path": …}                                message 4 left its place; it
                                                                           is whole in that transcript
    {"t": "work",    "w": {"k": "file", "path": …, "do": "edited", …}}     a work-ledger entry
    {"t": "skill",   "name": …, "body": …}                                 the model loaded a skill (kept)
    {"t": "kept",    "typed": [...], "ledger": {...}}                      both of those, whole (written
                                                                           after a catch-up snapshot)
    {"t": "window",  "tokens": 12000}                                      the API stated the window (or an
                                                                           answer it cut showed it)
    {"t": "window",  "tokens": 3300, "silent": 3900}                       learned from an empty answer
    {"t": "compaction", "layer": …, "path": …, "request": 12, …}           a compaction, and where what it
    {"t": "output",  "path": …, "command": …, "exit_code": 0, …}           removed went; a saved output
                                                                           (session_index.py; the
                                                                           inspector reads them)
    {"t": "model",   "id": "claude-opus-4-5"}                              the person chose this model (/model;
                                                                           --model: "model_choice" in the header)
    {"t": "checkpoint", …}, "checkpoint_after", "undone", "checkpoints"    what files were before the file
                                                                           tools changed them, and what /undo or
                                                                           /rewind put back (session/checkpoints.py)
    {"t": "rewound", "first": 3, "last": 5}                                /rewind took the conversation back:
                                                                           messages 3–5 are not carried any more
    {"t": "prepare" | "prepared" | "dropped" | "applied", "n": 34, …}      a summary of the first 34
                                                                           messages prepared in the
                                                                           background, and its fate
                                                                           (compaction/background.py)

Replaying the records gives the history exactly as the model would see it
next, the person's messages and the work ledger that every compaction keeps
(compaction/continuity.py), the session's token totals, and the size of the
prompt last sent. The
history is a `LoggedHistory` — a sequence of plain dicts (wrapping a list, not
inheriting one) that writes these records itself whenever it is changed, so no
code path can forget to log.

Damage is survived, not fatal: a half-written last line is dropped; a bad
record in the middle stops the replay there until the next snapshot; a write
that fails (full disk, read-only workspace) is rolled back, reported once, and
followed by a full snapshot as soon as writing works again. A session file is
locked (flock) while a process uses it: two s08s never write to one.

The log belongs to s08, not to the workspace the model can change: file tools
cannot write in .sessions/; before each record s08 checks that its file is
still the one it wrote (same inode, size and mtime) and, if it was replaced or
cut short, rewrites it from memory (header, usage, full snapshot). Replay
makes what it rebuilt sendable (session/repair.py), and a resume that had to
repair anything writes a snapshot at once, so a later turn is never lost
behind old damage.

Here: the records and LoggedHistory, which writes them; session/file.py the file (and finding
logs), session/replay.py reading them back, session/repair.py making a replayed history sendable.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from pathlib import Path
from typing import Callable

from events import ResponseDone
from messages import PERSON_NOTES, SESSION_STOPPED_MARK, STOP_MARKS, add_user_text, blocks, close_dangling_tool_uses
from session.file import (SessionBusy, SessionLog, find_session, list_sessions,  # noqa: F401  (re-exported)
                          new_session_id, session_header, session_origin, written_elsewhere)
from session.replay import (LoadedSession, decide_nothing, legacy_typed_texts, load_session,  # noqa: F401
                            replay)
from session.repair import STOPPED_RESULT

CHANGES_KEPT = 256            # recent changes a LoggedHistory remembers for lowest_change_since


class LoggedHistory(MutableSequence):
    """The conversation: a sequence of API-shaped dicts that logs every change to its SessionLog.

    It wraps a plain list rather than inheriting one, so no list method can change it unlogged:
    every change goes through append, __setitem__ or a slice assignment (insert, del, pop, clear,
    extend and += are built on them), each writing its record; what has no record of its own
    (sort, reverse, remove, *=) raises TypeError. Reading gives plain lists
    (a slice, `history + [...]`), and a history equals the list it holds.

    A failed write is reported once through `on_error` and the conversation goes on; the next
    write that works is a full snapshot, so the log catches up."""

    def __init__(self, messages=(), log: SessionLog | None = None, on_error: Callable[[str], None] | None = None):
        self._items: list[dict] = list(messages)
        self.log, self.on_error, self.behind = log, on_error, False
        self.kept_state: Callable[[], list[dict]] | None = None   # records of the session's other state, for snapshots
        self.version, self._changes = 0, []                    # (version, lowest index changed) of recent changes
        self.usages: list[dict] = []          # usage records, kept to rewrite a log that was tampered with

    # ---- reading: like a list ----------------------------------------------------------
    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        return self._items[index]                # a slice is a plain list

    def __iter__(self):
        return iter(self._items)

    def __eq__(self, other) -> bool:
        return self._items == (other._items if isinstance(other, LoggedHistory) else other)

    __hash__ = None   # type: ignore[assignment]   (mutable, like a list)

    def __add__(self, other) -> list:
        return self._items + list(other)

    def __radd__(self, other) -> list:
        return list(other) + self._items

    def __repr__(self) -> str:
        return f"LoggedHistory({self._items!r})"

    def _changed(self, index: int) -> None:
        self.version += 1
        self._changes.append((self.version, index))
        del self._changes[:-CHANGES_KEPT]

    def lowest_change_since(self, version: int) -> int:
        """The lowest index changed after `version` (len(self) if none) — so the compaction pipeline
        looks again only at what changed (compaction/index.py)."""
        if self._changes and self._changes[0][0] > version + 1:
            return 0                                           # older than what is remembered
        low = len(self)
        for v, index in reversed(self._changes):
            if v <= version:
                break
            low = min(low, index)
        return low

    # ---- the log ---------------------------------------------------------------------
    def _snapshot(self) -> list[dict]:
        """The whole state as records: the history, then what else the session keeps (the continuity,
        a learned window)."""
        return [{"t": "replace", "keep": 0, "tail": list(self._items)}] + (self.kept_state() if self.kept_state else [])

    def _record(self, record: dict) -> None:
        if self.log is None:
            return
        try:
            if self.log.tampered():
                self.log.rewrite(self.usages + self._snapshot())
                self._tell(f"[session log: {self.log.path.name} was replaced or changed by something other than "
                           "s08; rewrote it from memory]")
            elif self.behind:     # catch up: the whole state, then a usage record
                for state in self._snapshot():
                    self.log.write(state)
                if record["t"] == "usage":
                    self.log.write(record)
            else:
                self.log.write(record)
        except OSError as exc:
            if not self.behind:
                self._tell(f"[session log: cannot write {self.log.path.name} ({exc.strerror or exc}); "
                           "going on without it until writing works again]")
            self.behind = True
            return
        if self.behind:
            self._tell("[session log: writing works again; the log has caught up]")
        self.behind = False

    def _tell(self, text: str) -> None:
        if self.on_error:
            self.on_error(text)

    def snapshot(self) -> None:
        """Log the whole state as it is now (after a repair, so nothing before it matters)."""
        for state in self._snapshot():
            self._record(state)

    def note_usage(self, usage: dict, purpose: str, model: str = "") -> None:
        record = {"t": "usage", "n": len(self), "u": usage, "p": purpose, **({"model": model} if model else {})}
        self.usages.append(record)
        self._record(record)

    def note(self, record: dict) -> None:
        """Log a record that is not a change of the messages (the continuity's, see Continuity.connect)."""
        self._record(record)

    # ---- changing: every way goes through one of these, and each writes its record ---------------
    def append(self, message: dict) -> None:
        self._items.append(message)
        self._changed(len(self) - 1)
        self._record({"t": "append", "m": message})

    def insert(self, index: int, message: dict) -> None:
        if index >= len(self):
            self.append(message)
            return
        rest = list(self._items)
        rest.insert(index, message)
        self[:] = rest

    def __setitem__(self, index, value) -> None:
        if isinstance(index, slice):
            self._replace(index, value)
            return
        i = range(len(self))[index]              # IndexError as a list raises it
        added = _added_blocks(self._items[i], value)
        self._items[i] = value
        self._changed(i)
        # a message that only grew (results arriving one by one) logs what was added, not itself again:
        # a batch of many tool calls must not write its growing message whole each time
        self._record({"t": "extend", "i": i, "blocks": added} if added is not None else {"t": "set", "i": i, "m": value})

    def _replace(self, index: slice, value) -> None:
        """A slice assignment, logged as one "replace": the messages before the first one that is not
        the same object stay, the rest is written."""
        old, new = self._items, list(self._items)
        new[index] = list(value)                  # ValueError for an extended slice of the wrong size
        self._items = new
        keep = 0
        while keep < min(len(old), len(new)) and old[keep] is new[keep]:
            keep += 1
        if keep < len(old) or keep < len(new):
            self._changed(keep)
            self._record({"t": "replace", "keep": keep, "tail": new[keep:]})

    def __delitem__(self, index) -> None:
        rest = list(self._items)
        del rest[index]
        self[:] = rest

    def clear(self) -> None:
        if self:
            self[:] = []

    def _unlogged(self, *_args, **_kwargs):
        """Reordering, removing by value and repeating have no record of their own: build the new
        history and assign it with [:] = (one "replace" record)."""
        raise TypeError("a LoggedHistory changes only through logged operations (append, extend, [i] =, [:] =, "
                        "insert, pop, del)")

    remove = sort = reverse = __imul__ = _unlogged


class UsageRecorder:
    """A Bus subscriber: what each model call cost goes into the session log (`{"t": "usage", …}`), at
    the model serving it, so /cost after a resume knows the session's totals."""

    def __init__(self, history: Callable[[], LoggedHistory], model: Callable[[], str]):
        self.history, self.model = history, model

    def __call__(self, event) -> None:
        if isinstance(event, ResponseDone) and event.usage:
            self.history().note_usage(event.usage, event.purpose, self.model())


def _added_blocks(old: dict, new: dict) -> list | None:
    """The blocks `new` adds at the end of `old`, if that is all that changed (same role, the old
    blocks the same objects); else None."""
    before, after = old.get("content"), new.get("content")
    if (not isinstance(before, list) or not isinstance(after, list) or len(after) <= len(before)
            or new.keys() != old.keys() or new.get("role") != old.get("role")):
        return None
    if any(a is not b for a, b in zip(before, after)):
        return None
    return after[len(before):]


def open_session(workspace: Path, loaded: LoadedSession, on_error=None) -> LoggedHistory:
    """Continue a loaded session: its history, logging to the same (now locked) file. Replay already
    made the history sendable (tool calls left without results are marked interrupted); a request the
    session stopped before answering is marked, so the model knows. When anything had to be repaired,
    a full snapshot is logged at once, so the damage is behind the state later turns build on."""
    header = {k: v for k, v in loaded.header.items() if k not in ("t", "id", "workspace")}
    history = LoggedHistory(loaded.messages, SessionLog(workspace, loaded.id, header=header, existing=True),
                             on_error)
    history.usages = [{"t": "usage", "n": 0, "u": u, "p": p, "model": m} for u, p, m in loaded.usages]
    repaired = close_dangling_tool_uses(history, STOPPED_RESULT)
    if repaired:
        loaded.notices.append(f"{repaired} tool call{'s' if repaired > 1 else ''} cut off when the session "
                              "stopped — marked as interrupted")
    if history and history[-1]["role"] == "user" and not repaired:
        last = blocks(history[-1])
        if last and last[-1].get("type") == "text" and last[-1].get("text") not in STOP_MARKS \
                and not str(last[-1].get("text", "")).startswith(PERSON_NOTES):     # !cmd, /undo: no request
            # the person's own Ctrl-C already left its mark: only a session that died gets this one
            add_user_text(history, SESSION_STOPPED_MARK)
            loaded.unanswered = True
            loaded.notices.append("the last request was not answered before the session stopped; "
                                  "/retry sends it again")
    if loaded.repaired:
        history.snapshot()
    return history

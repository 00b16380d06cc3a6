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
    {"t": "kept",    "typed": [...], "ledger": {...}}                      both of those, whole (written
                                                                           after a catch-up snapshot)
    {"t": "window",  "tokens": 12000}                                      the API stated the window

Replaying the records gives the history exactly as the model would see it
next, the person's messages and the work ledger that every compaction keeps
(compaction/continuity.py), the session's token totals, and the size of the
prompt last sent. The
history is a `SessionHistory` — a plain list of plain dicts that writes these
records itself whenever it is changed, so no code path can forget to log.

Damage is survived, not fatal: a half-written last line is dropped; a bad
record in the middle stops the replay there until the next snapshot; a write
that fails (full disk, read-only workspace) is rolled back, reported once, and
followed by a full snapshot as soon as writing works again. A session file is
locked (flock) while a process uses it: two s08s never write to one.

The log belongs to s08, not to the workspace the model can change: file tools
cannot write in .sessions/; before each record s08 checks that its file is
still the one it wrote (same inode, size and mtime) and, if it was replaced or
cut short, rewrites it from memory (header, usage, full snapshot). Replay
makes what it rebuilt sendable (session_repair.py), and a resume that had to
repair anything writes a snapshot at once, so a later turn is never lost
behind old damage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from compaction.continuity import Continuity
from compaction.ledger import WorkLedger
from compaction.window import MIN_WINDOW
from compaction.tokens import usage_tokens
from events import ResponseDone
from history import SESSION_STOPPED_MARK, STOP_MARKS, add_user_text, blocks, close_dangling_tool_uses
from llm_reply import clean_usage
from session_file import SessionBusy, SessionLog, new_session_id  # noqa: F401  (re-exported)
from session_repair import make_sendable
from storage import SESSIONS_DIR

CONTINUITY_RECORDS = ("typed", "typed_saved", "work", "kept")
MODEL_CHARS = 200             # of a usage record's model name
CHANGES_KEPT = 256            # recent changes a SessionHistory remembers for lowest_change_since
STOPPED_RESULT = "The session stopped before this tool call finished; it may not have completed."


class SessionHistory(list):
    """The conversation: a list of API-shaped dicts that logs every change to its SessionLog.

    A failed write is reported once through `on_error` and the conversation goes on; the next
    write that works is a full snapshot, so the log catches up."""

    def __init__(self, messages=(), log: SessionLog | None = None, on_error: Callable[[str], None] | None = None):
        super().__init__(messages)
        self.log, self.on_error, self.behind = log, on_error, False
        self.kept_state: Callable[[], list[dict]] | None = None   # records of the session's other state, for snapshots
        self.version, self._changes = 0, []                    # (version, lowest index changed) of recent changes
        self.usages: list[dict] = []          # usage records, kept to rewrite a log that was tampered with

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

    def _snapshot(self) -> list[dict]:
        """The whole state as records: the history, then what else the session keeps (the continuity,
        a learned window)."""
        return [{"t": "replace", "keep": 0, "tail": list(self)}] + (self.kept_state() if self.kept_state else [])

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

    def append(self, message: dict) -> None:
        super().append(message)
        self._changed(len(self) - 1)
        self._record({"t": "append", "m": message})

    def extend(self, messages) -> None:
        for m in list(messages):
            self.append(m)

    def __setitem__(self, index, value) -> None:
        if isinstance(index, slice):
            old, new = list(self), list(value)
            super().__setitem__(index, new)
            keep = 0
            while keep < min(len(old), len(self)) and old[keep] is self[keep]:
                keep += 1
            if keep < len(old) or keep < len(self):
                self._changed(keep)
                self._record({"t": "replace", "keep": keep, "tail": list(self)[keep:]})
            return
        i = index % len(self)
        added = _added_blocks(self[i], value)
        super().__setitem__(index, value)
        self._changed(i)
        # a message that only grew (results arriving one by one) logs what was added, not itself again:
        # a batch of many tool calls must not write its growing message whole each time
        self._record({"t": "extend", "i": i, "blocks": added} if added is not None else {"t": "set", "i": i, "m": value})

    def clear(self) -> None:
        if self:
            self[:] = []

    def insert(self, index, message) -> None:
        self[:] = list(self)[:index] + [message] + list(self)[index:]

    def pop(self, index=-1):
        rest = list(self)
        value = rest.pop(index)
        self[:] = rest
        return value

    def __delitem__(self, index) -> None:
        rest = list(self)
        del rest[index]
        self[:] = rest

    def __iadd__(self, messages):
        self.extend(messages)
        return self

    def _unlogged(self, *_args, **_kwargs):
        raise TypeError("a SessionHistory changes only through logged operations (append, extend, [i] =, [:] =, "
                        "insert, pop, del)")

    remove = sort = reverse = __imul__ = _unlogged


class UsageLog:
    """A Bus subscriber: what each model call cost goes into the session log (`{"t": "usage", …}`), at
    the model serving it, so /cost after a resume knows the session's totals."""

    def __init__(self, history: Callable[[], SessionHistory], model: Callable[[], str]):
        self.history, self.model = history, model

    def __call__(self, event) -> None:
        if isinstance(event, ResponseDone) and event.usage:
            self.history().note_usage(event.usage, event.purpose, self.model())


@dataclass
class LoadedSession:
    id: str
    path: Path
    messages: list[dict]
    header: dict = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    usages: list[tuple[dict, str, str]] = field(default_factory=list)   # (usage, purpose, model)
    anchor: tuple[int, int] | None = None      # (messages covered, tokens) of the last usage still valid
    unanswered: bool = False
    continuity: Continuity = field(default_factory=Continuity)
    window: int | None = None                  # the context window the API stated, if it did
    repaired: bool = False                     # replay had to skip or fix something: resume writes a snapshot


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


def _message_ok(m) -> bool:
    return isinstance(m, dict) and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), (str, list))


def _record_ok(r, length: int) -> bool:
    """Is this record well-formed, and does it fit a history of `length` messages?"""
    if not isinstance(r, dict):
        return False
    kind = r.get("t")
    if kind == "append":
        return _message_ok(r.get("m"))
    if kind == "set":
        return isinstance(r.get("i"), int) and 0 <= r["i"] < length and _message_ok(r.get("m"))
    if kind == "extend":
        return (isinstance(r.get("i"), int) and 0 <= r["i"] < length and isinstance(r.get("blocks"), list)
                and all(isinstance(b, dict) for b in r["blocks"]))
    if kind == "replace":
        return (isinstance(r.get("keep"), int) and 0 <= r["keep"] <= length and isinstance(r.get("tail"), list)
                and all(_message_ok(m) for m in r["tail"]))
    if kind == "usage":
        return isinstance(r.get("u"), dict) and isinstance(r.get("n"), int)
    if kind == "typed":
        return isinstance(r.get("text"), str)
    if kind == "window":
        return isinstance(r.get("tokens"), int) and r["tokens"] >= MIN_WINDOW
    if kind == "typed_saved":
        return isinstance(r.get("i"), int) and isinstance(r.get("path"), str)
    if kind == "work":
        return isinstance(r.get("w"), dict) and _work_ok(r["w"])
    if kind == "kept":
        return (isinstance(r.get("typed"), list) and WorkLedger.state_ok(r.get("ledger"))
                and all(isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e) for e in r["typed"]))
    return kind == "session"


def _work_ok(w: dict) -> bool:
    needed = {"file": ("path", "do"), "cmd": ("cmd", "end"), "saved": ("path", "what")}.get(w.get("k"))
    turn = w.get("turn", 0)
    return (needed is not None and all(isinstance(w.get(k), str) for k in needed)
            and isinstance(turn, int) and not isinstance(turn, bool))


def replay(lines: list[str]) -> LoadedSession:
    """Rebuild the history (and the usage) from log lines. A record that is unreadable or does not fit
    stops the replay until the next full snapshot, so what is rebuilt is always a state that was real."""
    loaded = LoadedSession("", Path(), [])
    messages, lost_at, skipped, recorded = [], None, 0, False
    for n, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        snapshot = isinstance(record, dict) and record.get("t") == "replace" and record.get("keep") == 0
        if lost_at is not None and not (snapshot and _record_ok(record, 0)):
            skipped += 1
            continue
        if not _record_ok(record, len(messages)):
            lost_at, skipped = n, 0
            continue
        if lost_at is not None:
            loaded.notices.append(f"the session log is damaged at line {lost_at}; {skipped} record(s) after it "
                                  "were skipped until a full snapshot")
            lost_at = None
        kind = record["t"]
        if kind == "session":
            loaded.header = record
        elif kind == "append":
            messages.append(record["m"])
        elif kind == "set":
            messages[record["i"]] = record["m"]
        elif kind == "extend":
            grown = messages[record["i"]]
            messages[record["i"]] = {**grown, "content": blocks(grown) + record["blocks"]}
        elif kind == "replace":
            messages = messages[:record["keep"]] + record["tail"]
        if kind in ("set", "extend", "replace") and loaded.anchor and (record.get("i", record.get("keep", 0)) < loaded.anchor[0]):
            loaded.anchor = None           # the prompt that usage measured was rewritten since
        if kind == "window":
            loaded.window = record["tokens"]
        if kind in CONTINUITY_RECORDS:
            loaded.continuity.apply(record)
            recorded = True
        if kind == "usage":
            u = clean_usage(record["u"])
            model = record.get("model") if isinstance(record.get("model"), str) else loaded.header.get("model")
            model = model[:MODEL_CHARS] if isinstance(model, str) else ""      # older logs: the header's model
            loaded.usages.append((u, "summary" if record.get("p") == "summary" else "answer", model))
            loaded.anchor = (record["n"], usage_tokens(u)) if 0 < record["n"] <= len(messages) else None
    if lost_at is not None:
        loaded.notices.append(f"the session log is damaged at line {lost_at}; resumed the state before it "
                              f"({skipped} later record(s) could not be used)")
    loaded.repaired = bool(loaded.notices)
    sendable, fixes = make_sendable(messages, STOPPED_RESULT)
    if fixes:
        loaded.notices += fixes
        loaded.repaired = True
    if loaded.anchor and (loaded.anchor[0] > len(sendable) or sendable[:loaded.anchor[0]] != messages[:loaded.anchor[0]]):
        loaded.anchor = None
    loaded.messages = sendable
    if not recorded and sendable:          # a log from before s08 recorded what the person typed
        loaded.continuity = Continuity.from_history(legacy_typed_texts(sendable))
    return loaded


LEGACY_PREFIXES = {"The user's first request, verbatim:\n": True, "The user's last request (already answered):\n": True,
                   "[compacted]": False, "[snipped ": False, "Summary of the conversation so far:\n": False}


def legacy_typed_texts(messages: list[dict]) -> list[dict]:
    """An old log's history with the text older versions of s08 generated taken out (and the requests
    they kept verbatim put back as plain text), so what remains is what the person typed."""
    out = []
    for m in messages:
        if m.get("role") != "user":
            out.append(m)
            continue
        kept = []
        for b in blocks(m):
            text = b.get("text", "") if b.get("type") == "text" else None
            prefix = next((p for p in LEGACY_PREFIXES if text is not None and text.startswith(p)), None)
            if prefix is None:
                kept.append(b)
            elif LEGACY_PREFIXES[prefix] and text[len(prefix):].strip():
                kept.append({"type": "text", "text": text[len(prefix):]})
        out.append({**m, "content": kept})
    return out


def load_session(path: Path) -> LoadedSession:
    """Read a session log; a last line without its newline was cut off mid-write and is dropped."""
    raw = path.read_bytes().decode("utf-8", errors="replace")
    lines = raw.split("\n")
    torn = lines.pop() if lines else ""           # "" when the file ends with a newline
    loaded = replay([line for line in lines if line.strip()])
    if torn.strip():
        loaded.notices.insert(0, "dropped a half-written last line of the session log")
        loaded.repaired = True
    loaded.id, loaded.path = path.stem, path
    return loaded


def list_sessions(workspace: Path) -> list[Path]:
    """Session logs of this workspace, newest first."""
    folder = Path(workspace) / SESSIONS_DIR
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name), reverse=True)


def session_origin(path: Path) -> str:
    """How a session was run, from its header: "interactive", "print" (-p) or "piped" ("" if unknown)."""
    try:
        with open(path, "rb") as f:
            header = json.loads(f.readline(65536).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return ""
    origin = header.get("origin", "") if isinstance(header, dict) else ""
    return origin if isinstance(origin, str) else ""


def find_session(workspace: Path, wanted: str) -> Path | None:
    """A session by id or unique id prefix."""
    matches = [p for p in list_sessions(workspace) if p.stem == wanted] or \
              [p for p in list_sessions(workspace) if p.stem.startswith(wanted)]
    return matches[0] if len(matches) == 1 else None


def open_session(workspace: Path, loaded: LoadedSession, on_error=None) -> SessionHistory:
    """Continue a loaded session: its history, logging to the same (now locked) file. Replay already
    made the history sendable (tool calls left without results are marked interrupted); a request the
    session stopped before answering is marked, so the model knows. When anything had to be repaired,
    a full snapshot is logged at once, so the damage is behind the state later turns build on."""
    header = {k: v for k, v in loaded.header.items() if k not in ("t", "id", "workspace")}
    history = SessionHistory(loaded.messages, SessionLog(workspace, loaded.id, header=header, existing=True),
                             on_error)
    history.usages = [{"t": "usage", "n": 0, "u": u, "p": p, "model": m} for u, p, m in loaded.usages]
    repaired = close_dangling_tool_uses(history, STOPPED_RESULT)
    if repaired:
        loaded.notices.append(f"{repaired} tool call{'s' if repaired > 1 else ''} cut off when the session "
                              "stopped — marked as interrupted")
    if history and history[-1]["role"] == "user" and not repaired:
        last = blocks(history[-1])
        if last and last[-1].get("type") == "text" and last[-1].get("text") not in STOP_MARKS:
            # the person's own Ctrl-C already left its mark: only a session that died gets this one
            add_user_text(history, SESSION_STOPPED_MARK)
            loaded.unanswered = True
            loaded.notices.append("the last request was not answered before the session stopped; "
                                  "/retry sends it again")
    if loaded.repaired:
        history.snapshot()
    return history

"""Sessions that survive anything: an append-only log per session, and resuming from it.

Every change to the history is appended to `.sessions/<id>.jsonl` the moment
it happens, one JSON record per line, written with a single write() and
fsync'd — so `kill -9` at any moment loses at most the answer still in flight:

    {"t": "session", "id": …, "workspace": …, "model": …, "started": …}   header
    {"t": "append",  "m": {message}}                                       a message entered the history
    {"t": "set",     "i": 5, "m": {message}}                               message 5 was replaced
    {"t": "replace", "keep": 3, "tail": [...]}                             compaction: the first 3 stay, the
                                                                           rest is now `tail` (keep 0: the
                                                                           whole history — a snapshot)
    {"t": "usage",   "n": 12, "u": {usage}, "p": "answer"}                 what a model call cost

Replaying the records gives the history exactly as the model would see it
next, the session's token totals, and the size of the prompt last sent. The
history is a `SessionHistory` — a plain list of plain dicts that writes these
records itself whenever it is changed, so no code path can forget to log.

Damage is survived, not fatal: a half-written last line is dropped; a bad
record in the middle stops the replay there until the next snapshot; a write
that fails (full disk, read-only workspace) is rolled back, reported once, and
followed by a full snapshot as soon as writing works again. A session file is
locked (flock) while a process uses it: two s08s never write to one.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from compaction.tokens import usage_tokens
from history import SESSION_STOPPED_MARK, STOP_MARKS, add_user_text, blocks, close_dangling_tool_uses
from storage import ensure_folder

SESSIONS_DIR = ".sessions"
STOPPED_RESULT = "The session stopped before this tool call finished; it may not have completed."


class SessionBusy(Exception):
    """The session is open in another s08 process."""


def new_session_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


class SessionLog:
    """The append-only file of one session. Created on the first write, locked while in use."""

    def __init__(self, workspace: Path, session_id: str | None = None, header: dict | None = None,
                 existing: bool = False):
        self.workspace, self.id = Path(workspace), session_id or new_session_id()
        self.path = self.workspace / SESSIONS_DIR / f"{self.id}.jsonl"
        self.header, self.fd = header or {}, None
        if existing:
            self._open(create=False)

    def _open(self, create: bool) -> None:
        ensure_folder(self.path.parent)
        flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT | os.O_EXCL if create else 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionBusy(f"session {self.id} is open in another s08") from None
        self.fd = fd
        if not create:
            self._drop_torn_tail()
        if os.fstat(fd).st_size == 0:
            self._write({"t": "session", "id": self.id, "workspace": str(self.workspace),
                         "started": time.strftime("%Y-%m-%dT%H:%M:%S"), **self.header})

    def _drop_torn_tail(self) -> None:
        """A kill mid-write can leave a last line without its newline: cut it off before appending
        (load_session drops the same line, so the file and the replay agree)."""
        size = os.fstat(self.fd).st_size
        if not size:
            return
        with open(self.path, "rb") as f:
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            f.seek(0)
            data = f.read()
        os.truncate(self.path, data.rfind(b"\n") + 1)

    def write(self, record: dict) -> None:
        if self.fd is None:
            self._open(create=True)
        self._write(record)

    def _write(self, record: dict) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        size = os.fstat(self.fd).st_size
        try:
            view = memoryview(line)
            while view:                   # one write() in practice; loop only on a short write
                view = view[os.write(self.fd, view):]
            os.fsync(self.fd)
        except OSError:
            try:
                os.ftruncate(self.fd, size)   # never leave half a record for the next one to glue onto
            except OSError:
                pass
            raise

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)             # closing releases the lock
            self.fd = None


class SessionHistory(list):
    """The conversation: a list of API-shaped dicts that logs every change to its SessionLog.

    A failed write is reported once through `on_error` and the conversation goes on; the next
    write that works is a full snapshot, so the log catches up."""

    def __init__(self, messages=(), log: SessionLog | None = None, on_error: Callable[[str], None] | None = None):
        super().__init__(messages)
        self.log, self.on_error, self.behind = log, on_error, False

    def _record(self, record: dict) -> None:
        if self.log is None:
            return
        try:
            self.log.write({"t": "replace", "keep": 0, "tail": list(self)} if self.behind else record)
            if self.behind and record["t"] == "usage":
                self.log.write(record)
        except OSError as exc:
            if not self.behind and self.on_error:
                self.on_error(f"[session log: cannot write {self.log.path.name} ({exc.strerror or exc}); "
                              "going on without it until writing works again]")
            self.behind = True
            return
        if self.behind and self.on_error:
            self.on_error("[session log: writing works again; the log has caught up]")
        self.behind = False

    def note_usage(self, usage: dict, purpose: str) -> None:
        self._record({"t": "usage", "n": len(self), "u": usage, "p": purpose})

    def append(self, message: dict) -> None:
        super().append(message)
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
                self._record({"t": "replace", "keep": keep, "tail": list(self)[keep:]})
            return
        super().__setitem__(index, value)
        self._record({"t": "set", "i": index % len(self), "m": value})

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


@dataclass
class LoadedSession:
    id: str
    path: Path
    messages: list[dict]
    header: dict = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    usages: list[tuple[dict, str]] = field(default_factory=list)
    anchor: tuple[int, int] | None = None      # (messages covered, tokens) of the last usage still valid
    unanswered: bool = False


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
    if kind == "replace":
        return (isinstance(r.get("keep"), int) and 0 <= r["keep"] <= length and isinstance(r.get("tail"), list)
                and all(_message_ok(m) for m in r["tail"]))
    if kind == "usage":
        return isinstance(r.get("u"), dict) and isinstance(r.get("n"), int)
    return kind == "session"


def replay(lines: list[str]) -> LoadedSession:
    """Rebuild the history (and the usage) from log lines. A record that is unreadable or does not fit
    stops the replay until the next full snapshot, so what is rebuilt is always a state that was real."""
    loaded = LoadedSession("", Path(), [])
    messages, lost_at, skipped = [], None, 0
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
        elif kind == "replace":
            messages = messages[:record["keep"]] + record["tail"]
        if kind in ("set", "replace") and loaded.anchor and (record.get("i", record.get("keep", 0)) < loaded.anchor[0]):
            loaded.anchor = None           # the prompt that usage measured was rewritten since
        if kind == "usage":
            u = record["u"]
            loaded.usages.append((u, record.get("p", "answer")))
            loaded.anchor = (record["n"], usage_tokens(u)) if 0 < record["n"] <= len(messages) else None
    if lost_at is not None:
        loaded.notices.append(f"the session log is damaged at line {lost_at}; resumed the state before it "
                              f"({skipped} later record(s) could not be used)")
    if loaded.anchor and loaded.anchor[0] > len(messages):
        loaded.anchor = None
    loaded.messages = messages
    return loaded


def load_session(path: Path) -> LoadedSession:
    """Read a session log; a last line without its newline was cut off mid-write and is dropped."""
    raw = path.read_bytes().decode("utf-8", errors="replace")
    lines = raw.split("\n")
    torn = lines.pop() if lines else ""           # "" when the file ends with a newline
    loaded = replay([line for line in lines if line.strip()])
    if torn.strip():
        loaded.notices.insert(0, "dropped a half-written last line of the session log")
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
    """Continue a loaded session: its history, logging to the same (now locked) file. Repairs are
    logged like any change: tool calls left without results get an "interrupted" result, and a
    request the session stopped before answering is marked, so the model knows."""
    history = SessionHistory(loaded.messages, SessionLog(workspace, loaded.id, existing=True), on_error)
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
    return history

"""Sessions that survive anything: an append-only log per session, and resuming from it.

Every change to the history is appended to `.sessions/<id>.jsonl` the moment
it happens, one JSON record per line, written with a single write() and
fsync'd — so `kill -9` at any moment loses at most the answer still in flight:

    {"t": "session", "id": …, "workspace": …, "model": …, "started": …}   header
    {"t": "append",  "m": {message}}                                       a message entered the history
    {"t": "set",     "i": 5, "m": {message}}                               message 5 was replaced (text merged in)
    {"t": "replace", "keep": 3, "tail": [...], "reason": "compaction"}     compaction: the first 3 stay, the
                                                                           rest is now `tail` (keep 0: the
                                                                           whole new history)

Replaying the records gives the history exactly as the model would see it
next; the log also still holds every message that was ever in it. The history
is a `SessionHistory` — a plain list of plain dicts that writes these records
itself whenever it is changed, so no code path can forget to log. A session
file is locked (flock) while a process uses it: two s08s never write to one.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from history import close_dangling_tool_uses
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
            self._drop_torn_tail()

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

    def _drop_torn_tail(self) -> None:
        """A kill mid-write can leave a last line without its newline: cut it off before appending."""
        size = os.fstat(self.fd).st_size
        if not size:
            return
        with open(self.path, "rb") as f:
            f.seek(max(0, size - 1))
            if f.read(1) == b"\n":
                return
            f.seek(0)
            data = f.read()
        os.truncate(self.path, data.rfind(b"\n") + 1)

    def write(self, record: dict) -> None:
        if self.fd is None:
            self._open(create=True)
            self._write({"t": "session", "id": self.id, "workspace": str(self.workspace),
                         "started": time.strftime("%Y-%m-%dT%H:%M:%S"), **self.header})
        self._write(record)

    def _write(self, record: dict) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        view = memoryview(line)
        while view:                       # one write() in practice; loop only on a short write
            view = view[os.write(self.fd, view):]
        os.fsync(self.fd)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)             # closing releases the lock
            self.fd = None


class SessionHistory(list):
    """The conversation: a list of API-shaped dicts that logs every change to its SessionLog."""

    def __init__(self, messages=(), log: SessionLog | None = None):
        super().__init__(messages)
        self.log = log

    def _record(self, record: dict) -> None:
        if self.log is not None:
            self.log.write(record)

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
                self._record({"t": "replace", "keep": keep, "tail": list(self)[keep:], "reason": "compaction"})
            return
        super().__setitem__(index, value)
        self._record({"t": "set", "i": index % len(self), "m": value})

    def clear(self) -> None:
        if self:
            self[:] = []

    def insert(self, index, message) -> None:
        self[:] = list(self)[:index] + [message] + list(self)[index:]

    def pop(self, index=-1):
        value = list(self)[index]
        rest = list(self)
        del rest[index]
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
    records: int = 0


def replay(lines: list[str]) -> tuple[list[dict], dict, list[str], int]:
    """Rebuild the history from log lines: (messages, header, notices, records used)."""
    messages, header, notices, used = [], {}, [], 0
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            last = n == len(lines) - 1
            notices.append("dropped a half-written last line of the session log" if last
                           else f"skipped an unreadable line {n + 1} of the session log")
            continue
        kind = record.get("t")
        if kind == "session":
            header = record
        elif kind == "append":
            messages.append(record["m"])
        elif kind == "set" and 0 <= record.get("i", -1) < len(messages):
            messages[record["i"]] = record["m"]
        elif kind == "replace":
            messages = messages[:record["keep"]] + record["tail"]
        else:
            notices.append(f"skipped an unknown record on line {n + 1}")
            continue
        used += 1
    return messages, header, notices, used


def load_session(path: Path) -> LoadedSession:
    """Read a session log (dropping a half-written last line, with a notice)."""
    lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    messages, header, notices, used = replay(lines)
    return LoadedSession(path.stem, path, messages, header, notices, used)


def list_sessions(workspace: Path) -> list[Path]:
    """Session logs of this workspace, newest first."""
    folder = Path(workspace) / SESSIONS_DIR
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name), reverse=True)


def find_session(workspace: Path, wanted: str) -> Path | None:
    """A session by id or unique id prefix."""
    matches = [p for p in list_sessions(workspace) if p.stem == wanted] or \
              [p for p in list_sessions(workspace) if p.stem.startswith(wanted)]
    return matches[0] if len(matches) == 1 else None


def open_session(workspace: Path, loaded: LoadedSession) -> SessionHistory:
    """Continue a loaded session: its history, logging to the same (now locked) file. Tool calls
    left without results by the interruption get an "interrupted" result — logged like any change."""
    history = SessionHistory(loaded.messages, SessionLog(workspace, loaded.id, existing=True))
    repaired = close_dangling_tool_uses(history, STOPPED_RESULT)
    if repaired:
        loaded.notices.append(f"{repaired} tool call{'s' if repaired > 1 else ''} cut off when the session "
                              "stopped — marked as interrupted")
    return history

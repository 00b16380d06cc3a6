"""The file of one session log: created owner-only, locked while in use, appended one fsync'd record
at a time — and checked before each record, because the workspace is not s08's alone.

    SessionLog(workspace, id).write(record)   append (creates and locks the file on the first write)
    log.tampered()                            was the file replaced, removed or changed by anything else?
    log.rewrite(records)                      replace it atomically with a header and `records`

    list_sessions(workspace)                  this workspace's logs, newest first
    find_session(workspace, id_or_prefix)     one log by id or unique prefix
    session_origin(path)                      how it was run: "interactive", "print" or "piped"

What the records mean is session/log.py's business, replaying them session/replay.py's.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import time
from pathlib import Path

import json_text
from storage import FILE_MODE, SESSIONS_DIR, ensure_folder


class SessionBusy(Exception):
    """The session is open in another s08 process."""


def new_session_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def _encode(record: dict) -> bytes:
    return (json_text.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:                           # one write() in practice; loop only on a short write
        view = view[os.write(fd, view):]


class SessionLog:
    """The append-only file of one session. Created on the first write, locked while in use."""

    def __init__(self, workspace: Path, session_id: str | None = None, header: dict | None = None,
                 existing: bool = False):
        self.workspace, self.id = Path(workspace), session_id or new_session_id()
        self.path = self.workspace / SESSIONS_DIR / f"{self.id}.jsonl"
        self.header, self.fd, self.stamp = header or {}, None, None
        if existing:
            self._open(create=False)

    def _open(self, create: bool) -> None:
        ensure_folder(self.path.parent)
        flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | (os.O_CREAT | os.O_EXCL if create else 0)
        fd = os.open(self.path, flags, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionBusy(f"session {self.id} is open in another s08") from None
        self.fd = fd
        if not create:
            self._drop_torn_tail()
        if os.fstat(fd).st_size == 0:
            self._write(self.header_record())
        self._remember()

    def header_record(self) -> dict:
        return {"t": "session", "id": self.id, "workspace": str(self.workspace),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S"), **self.header}

    def _remember(self) -> None:
        st = os.fstat(self.fd)
        self.stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def tampered(self) -> bool:
        """Was the file at our path replaced, removed, cut short or written by someone else since our
        last record?"""
        if self.fd is None or self.stamp is None:
            return False
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return True
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != self.stamp

    def rewrite(self, records: list[dict]) -> None:
        """Replace the file at our path, atomically, with a header and `records`, and go on appending
        to the new file (locked before it appears under the name)."""
        ensure_folder(self.path.parent)
        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _write_all(fd, b"".join(_encode(r) for r in [self.header_record(), *records]))
            os.fsync(fd)
            os.replace(tmp, self.path)
        except BaseException:
            os.close(fd)
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        if self.fd is not None:
            os.close(self.fd)             # releases the lock on the file that was replaced
        self.fd = fd
        self._remember()

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
        self._remember()

    def _write(self, record: dict) -> None:
        size = os.fstat(self.fd).st_size
        try:
            _write_all(self.fd, _encode(record))
            os.fsync(self.fd)
        except OSError:
            try:
                os.ftruncate(self.fd, size)   # never leave half a record for the next one to glue onto
                self._remember()
            except OSError:
                pass
            raise

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)             # closing releases the lock
            self.fd = None


def list_sessions(workspace: Path) -> list[Path]:
    """Session logs of this workspace, newest first."""
    folder = Path(workspace) / SESSIONS_DIR
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name), reverse=True)


def session_header(path: Path) -> dict:
    """A log's header record ({} when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            header = json_text.loads(f.readline(65536).decode("utf-8", "replace"))
    except (OSError, ValueError, RecursionError):
        return {}
    return header if isinstance(header, dict) else {}


def session_origin(path: Path) -> str:
    """How a session was run, from its header: "interactive", "print" (-p) or "piped" ("" if unknown)."""
    origin = session_header(path).get("origin", "")
    return origin if isinstance(origin, str) else ""


def written_elsewhere(header: dict, workspace: Path, path: Path | None = None) -> str | None:
    """Why a log was not written by s08 in `workspace` (a log a cloned repository shipped, or one copied from
    another project), as words for a question: its header names another workspace (or none), or its file
    (`path`) is open to others while s08 creates every log owner-only (a header is easy to forge, for a CI
    runner's predictable folder too; a git checkout's modes are not 0600). None when it was written here."""
    named = header.get("workspace")
    if not isinstance(named, str) or not named:
        return "its header names no workspace"
    try:
        here = Path(named).resolve() == Path(workspace).resolve()
    except (OSError, RuntimeError, ValueError):
        here = False
    if not here:
        return f"its header names {named}"
    try:
        if path is not None and os.stat(path).st_mode & 0o077:
            return "its file is open to other users, and s08 keeps every log it writes owner-only"
    except OSError:
        pass
    return None


def find_session(workspace: Path, wanted: str) -> Path | None:
    """A session by id or unique id prefix."""
    matches = [p for p in list_sessions(workspace) if p.stem == wanted] or \
              [p for p in list_sessions(workspace) if p.stem.startswith(wanted)]
    return matches[0] if len(matches) == 1 else None

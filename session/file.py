"""The file of one session log: created owner-only, locked while in use, appended one fsync'd record
at a time — and checked before each record, because the workspace is not s08's alone.

    SessionLog(workspace, id).write(record)   append (creates and locks the file on the first write)
    log.tampered()                            was the file replaced, removed or changed by anything else?
    log.rewrite(records)                      replace it atomically with a header and `records`

    list_sessions(workspace, skipped)         this workspace's logs, newest first (a link, a FIFO, a
                                              device in .sessions/ is left out, with one line in `skipped`)
    find_session(workspace, id_or_prefix)     one log by id or unique prefix
    session_origin(path)                      how it was run: "interactive", "print" or "piped"

What the records mean is session/log.py's business, replaying them session/replay.py's. Every
open goes through storage/safe.py: the log is never followed through a link, and a log s08 appends
to or cuts is a regular file of yours with one name.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import stat
import time
from pathlib import Path

import json_text
from storage import SESSIONS_DIR, ensure_folder, safe


class SessionBusy(Exception):
    """The session is open in another s08 process."""


def new_session_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def _encode(record: dict) -> bytes:
    return (json_text.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")


_write_all = safe.write_all


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
        fd = safe.open_append(self.path, create=create, read=True)
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
            st = safe.lstat(self.path)
        except OSError:
            return True
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != self.stamp

    def rewrite(self, records: list[dict]) -> None:
        """Replace the file at our path, atomically, with a header and `records`, and go on appending
        to the new file (locked before it appears under the name)."""
        ensure_folder(self.path.parent)
        taken: list[int] = []

        def lock(fd: int) -> None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
            taken.append(fd)
        safe.replace(self.path, b"".join(_encode(r) for r in [self.header_record(), *records]), before_rename=lock)
        if self.fd is not None:
            os.close(self.fd)             # releases the lock on the file that was replaced
        self.fd = taken[0]
        self._remember()

    def _drop_torn_tail(self) -> None:
        """A kill mid-write can leave a last line without its newline: cut it off before appending
        (load_session drops the same line, so the file and the replay agree)."""
        size = os.fstat(self.fd).st_size
        if not size or os.pread(self.fd, 1, size - 1) == b"\n":
            return
        start = size
        while start > 0:                  # back from the end to the last newline, a block at a time
            start = max(0, start - 65536)
            at = os.pread(self.fd, size - start, start).rfind(b"\n")
            if at >= 0:
                os.ftruncate(self.fd, start + at + 1)
                return
        os.ftruncate(self.fd, 0)

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


def list_sessions(workspace: Path, skipped: list[str] | None = None) -> list[Path]:
    """Session logs of this workspace, newest first: regular files only (what else is there — a link,
    a FIFO, a device — gets one line in `skipped`; a linked or foreign .sessions folder, one line)."""
    folder = Path(workspace) / SESSIONS_DIR
    try:
        entries = safe.listing(folder)
    except FileNotFoundError:
        return []
    except OSError as exc:
        if skipped is not None:
            skipped.append(str(exc) if isinstance(exc, safe.Refused) else f"{folder}: {exc.strerror or exc}")
        return []
    found = []
    for name, st in entries:
        if not name.endswith(".jsonl") or name.startswith("."):
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((st.st_mtime, name))
        elif skipped is not None:
            skipped.append(f"{SESSIONS_DIR}/{name} is {safe.kind(st.st_mode)}, not a session log s08 wrote; skipped")
    return [folder / name for _, name in sorted(found, reverse=True)]


def session_header(path: Path) -> dict:
    """A log's header record ({} when it cannot be read)."""
    try:
        head = safe.read_head(path, 65536).split(b"\n", 1)[0]
        header = json_text.loads(head.decode("utf-8", "replace"))
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
    try:        # s08 writes the resolved path: the header's own is never resolved (`.`, `/proc/self/cwd` lead here too)
        here = named == str(Path(workspace).resolve())
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

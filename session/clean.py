"""`s08 clean` and `/clean`: what s08's folders take, per session, and removing old sessions.

    survey(workspace, current) -> Survey     each session's log and files (.sessions/<id>.jsonl, its
                                             checkpoints .sessions/<id>.checkpoints/*,
                                             .transcripts/<id>-NNN-*.jsonl, .task_outputs/<id>-NNN-*.txt),
                                             their size and last change; files with older names apart
    plan(survey, keep_days, now) -> Plan     the sessions unused for more than KEEP_DAYS, and the older
                                             files no kept session names
    remove(plan) -> (files, bytes)           delete them

Never removed: the current session, and any session that is running — a running s08 holds an
exclusive lock on its log (session/file.py). `remove` takes that same lock on each log before it
deletes anything of that session and keeps it until it is done, so a session being resumed at that
moment is either left whole or refused to the other s08 (SessionBusy), never half deleted. A file
with an older name (no session in it) goes only when it is old and no kept session's log names it.

The folders are the workspace's, so a repository may ship them as links: every folder is walked and
every file removed through storage/safe.py — a linked folder is refused (one line in `Survey.refused`,
nothing in it is counted or removed), only regular files are listed, and removing unlinks the name
inside the folder that was checked (another name of a hard-linked file keeps its content).
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from storage import LEGACY_OUTPUTS_DIR, LOG_LIMIT, SESSIONS_DIR, TASK_OUTPUTS_DIR, TRANSCRIPTS_DIR, parse_name, safe

CHECKPOINTS_SUFFIX = ".checkpoints"      # .sessions/<id>.checkpoints/ (session/checkpoints.py)

DAY = 86_400
OLDER_SUFFIXES = (".jsonl", ".txt")    # what s08 wrote under its older names; anything else there is not its
FOLDERS = (TRANSCRIPTS_DIR, TASK_OUTPUTS_DIR, LEGACY_OUTPUTS_DIR, f"{TASK_OUTPUTS_DIR}/inputs")


@dataclass
class SessionFiles:
    id: str
    log: Path | None = None
    files: list[Path] = field(default_factory=list)
    bytes: int = 0
    mtime: float = 0.0
    running: bool = False
    current: bool = False

    @property
    def paths(self) -> list[Path]:
        return ([self.log] if self.log else []) + self.files


@dataclass
class Survey:
    workspace: Path
    sessions: dict[str, SessionFiles] = field(default_factory=dict)
    loose: list[Path] = field(default_factory=list)       # older names: no session in them
    refused: list[str] = field(default_factory=list)      # folders not walked (a link, not yours): one line each

    @property
    def loose_bytes(self) -> int:
        return sum(_stat(p)[0] for p in self.loose)


@dataclass
class Plan:
    survey: Survey
    keep_days: int
    sessions: list[SessionFiles] = field(default_factory=list)     # to remove
    loose: list[Path] = field(default_factory=list)                # to remove

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.sessions) + sum(_stat(p)[0] for p in self.loose)

    @property
    def count(self) -> int:
        return sum(len(s.paths) for s in self.sessions) + len(self.loose)


def _stat(path: Path) -> tuple[int, float]:
    try:
        st = safe.lstat(path)
    except OSError:
        return 0, 0.0
    return st.st_size, st.st_mtime


def is_running(log: Path) -> bool:
    """Does another open file hold the session's lock (a running s08, this one's own session too)?"""
    try:
        fd = safe.open_read(log)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _entries(folder: Path, refused: list[str]) -> list[tuple[str, os.stat_result]]:
    try:
        return safe.listing(folder)
    except safe.Refused as exc:
        refused.append(f"{exc}; nothing in it is counted or removed")
    except OSError:
        pass
    return []


def _files(folder: Path, refused: list[str]) -> list[Path]:
    """The regular files in one of s08's folders (a link in it is not s08's: left alone)."""
    return [folder / name for name, st in _entries(folder, refused)
            if stat.S_ISREG(st.st_mode) and name != ".gitignore"]


def survey(workspace: Path, current: str | None = None) -> Survey:
    workspace = Path(workspace)
    out = Survey(workspace)

    def session(sid: str) -> SessionFiles:
        return out.sessions.setdefault(sid, SessionFiles(sid, current=sid == current))

    for log in _files(workspace / SESSIONS_DIR, out.refused):
        if log.suffix == ".jsonl" and not log.name.startswith("."):
            session(log.stem).log = log
    for name, st in _entries(workspace / SESSIONS_DIR, []):     # /undo's blobs go with their session
        if name.endswith(CHECKPOINTS_SUFFIX) and stat.S_ISDIR(st.st_mode):
            session(name[:-len(CHECKPOINTS_SUFFIX)]).files += _files(workspace / SESSIONS_DIR / name, out.refused)
    for folder in FOLDERS:
        for path in _files(workspace / folder, out.refused):
            parsed = parse_name(path.name)
            if parsed:
                session(parsed[0]).files.append(path)
            elif not path.name.startswith(".") and path.suffix in OLDER_SUFFIXES:
                out.loose.append(path)
    for s in out.sessions.values():
        sizes = [_stat(p) for p in s.paths]
        s.bytes = sum(size for size, _ in sizes)
        s.mtime = max((m for _, m in sizes), default=0.0)
        s.running = s.log is not None and is_running(s.log)
    return out


def plan(found: Survey, keep_days: int, now: float | None = None) -> Plan:
    now = time.time() if now is None else now
    cutoff = now - keep_days * DAY
    result = Plan(found, keep_days)
    result.sessions = [s for s in found.sessions.values()
                       if s.mtime < cutoff and not s.running and not s.current]
    going = {s.id for s in result.sessions}
    kept_logs = [s.log for s in found.sessions.values() if s.id not in going and s.log is not None]
    old = [p for p in found.loose if _stat(p)[1] < cutoff]
    named = _names_in(kept_logs, {p.name for p in old}) if old else set()
    result.loose = [p for p in old if p.name not in named]
    return result


def _names_in(logs: list[Path], names: set[str]) -> set[str]:
    """Which of `names` the kept logs mention (a snip marker, a summary names an older file); one log
    in memory at a time."""
    found: set[str] = set()
    for log in logs:
        try:
            text = safe.read_bytes(log, LOG_LIMIT).decode("utf-8", "replace")
        except OSError:
            return names                   # a kept log that cannot be read may name any of them: keep all
        found |= {name for name in names - found if name in text}
    return found


def _lock(log: Path) -> int | None:
    """Take the session's lock for the removal; None if a running s08 holds it (or it is gone)."""
    try:
        fd = safe.open_read(log)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def remove(chosen: Plan) -> tuple[int, int]:
    """Delete what the plan chose; returns (files removed, bytes freed). A session whose lock cannot be
    taken now (it was resumed meanwhile) is left alone."""
    count = freed = 0
    for s in chosen.sessions:
        fd = None
        if s.log is not None:
            fd = _lock(s.log)
            if fd is None:
                continue
        try:
            for path in s.files + ([s.log] if s.log else []):      # the log last: it holds the lock
                size = _stat(path)[0]
                try:
                    if not safe.remove(path):
                        continue
                except OSError:
                    continue
                count, freed = count + 1, freed + size
            for folder in {p.parent for p in s.files if p.parent.name.endswith(CHECKPOINTS_SUFFIX)}:
                safe.remove_folder(folder)                         # emptied above
        finally:
            if fd is not None:
                os.close(fd)
    for path in chosen.loose:
        size = _stat(path)[0]
        try:
            if not safe.remove(path):
                continue
        except OSError:
            continue
        count, freed = count + 1, freed + size
    return count, freed

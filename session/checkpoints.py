"""Checkpoints: what each file was before write_file or edit_file changed it, so /undo and /rewind can
put it back — and the conversation cut that /rewind can make too.

    Checkpoints(workspace, note)
      .use_log(path)                       blobs live next to the session log: .sessions/<id>.checkpoints/
      .before(name, args, turn)            before an approved write_file / edit_file runs: keep the file's
                                           bytes (or that it did not exist); None when nothing is kept
      .commit(pending)                     the change happened: the checkpoint counts (a failed write's
                                           does not)
      .latest_prompt()                     the newest turn with changes not undone yet (/undo)
      .for_prompt(p) / .since_turn(n)      the entries /undo and /rewind put back
      .restore(entries) -> lines           each file as it was before the first of `entries` (one line each)
      .apply(record) / .records()          replay a session log record / the whole state for a snapshot

    cut_before(messages, texts, n)         the history as it was before the person's message n, or None
                                           when that message is no longer in place (compacted)

Session log records (session/log.py lists the others):
    {"t": "checkpoint", "prompt": 3, "turn": 3, "path": "a.py", "existed": true, "blob": "<sha256>",
     "after": "<sha256>"}                 what a.py was before, and what the tool left there
    {"t": "checkpoint_after", "i": 3, "after": "<sha256>"}
                                          checkpoint 3's file changed again in the same turn
    {"t": "undone", "n": [4, 5]}          checkpoints 4 and 5 were restored (by /undo or /rewind)
    {"t": "checkpoints", "all": [[prompt, turn, path, existed, blob, undone, after], …]}
                                          the whole state (written with a snapshot of the history)

Before a file is put back, what it holds now is compared with what the tool left there: if you or a
command changed it since, that content is kept as a blob too, and the line about the file says where.
When that content cannot be kept (larger than MAX_KEPT_BYTES, or the disk refused), the file is left
as it is, with a line saying so: /undo never destroys work it cannot keep. Putting back applies the
file tools' refusals to the resolved target (tools/workspace.py): never outside the workspace, never
s08's settings files or .sessions/, never through a link. Blobs live in s08's own folder and are
written and read through storage/safe.py.

`prompt` is the number of the person's message that started the turn, `turn` the number of their
latest message when the change was made (a "no, because …" at an approval question is one too).
A file larger than MAX_KEPT_BYTES is recorded without its bytes ("blob": ""): it cannot be restored,
and /undo says so. Blobs are named by their SHA-256 and checked against it before they are used.
Only the file tools are covered: what a shell command changes is not.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from compaction.markers import COMPACTED_PREFIX, SNIP_PREFIX, SUMMARY_PREFIX
from messages import blocks, close_dangling_tool_uses
from storage import relative, safe
from tools.safe_fs import open_dir, open_file, replace_file
from tools.workspace import ToolError, refuse_s08_files, resolve_in_workspace

CHANGING_TOOLS = ("write_file", "edit_file")
MAX_KEPT_BYTES = 10 * 1024 * 1024
MAX_HASHED_BYTES = 1024 * 1024 * 1024     # a file larger than this is not compared (and so never overwritten)
COMPACTION_TEXTS = (COMPACTED_PREFIX, SNIP_PREFIX, SUMMARY_PREFIX)
BLOB_NAME = re.compile(r"(?:[0-9a-f]{64})?")          # a SHA-256, or "" (nothing kept)


@dataclass
class Entry:
    prompt: int
    turn: int
    path: str              # relative to the workspace
    existed: bool
    blob: str              # sha256 of the bytes it had; "" when it did not exist or was too large to keep
    undone: bool = False
    after: str = ""        # sha256 of what the tool left there ("" unknown): a later change is noticed

    def record(self) -> dict:
        return {"t": "checkpoint", "prompt": self.prompt, "turn": self.turn, "path": self.path,
                "existed": self.existed, "blob": self.blob, "after": self.after}


def _number(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _entry_ok(row) -> bool:
    return (isinstance(row, list) and len(row) == 7 and _number(row[0]) and _number(row[1])
            and isinstance(row[2], str) and isinstance(row[3], bool) and _blob_ok(row[4])
            and isinstance(row[5], bool) and _blob_ok(row[6]))


def _blob_ok(blob) -> bool:
    return isinstance(blob, str) and BLOB_NAME.fullmatch(blob) is not None


def record_ok(record: dict) -> bool:
    """Is this a well-formed checkpoint, undone or checkpoints record? (A log is read back from disk.)"""
    kind = record.get("t")
    if kind == "checkpoint":
        return (_number(record.get("prompt")) and _number(record.get("turn")) and isinstance(record.get("path"), str)
                and isinstance(record.get("existed"), bool) and _blob_ok(record.get("blob"))
                and _blob_ok(record.get("after", "")))
    if kind == "checkpoints":
        return isinstance(record.get("all"), list) and all(_entry_ok(row) for row in record["all"])
    if kind == "checkpoint_after":
        return _number(record.get("i")) and _blob_ok(record.get("after"))
    return isinstance(record.get("n"), list) and all(_number(i) for i in record["n"])


class Checkpoints:
    def __init__(self, workspace: Path, note: Callable[[dict], None] | None = None):
        self.workspace = workspace.resolve()
        self.note = note
        self.entries: list[Entry] = []
        self.folder: Path | None = None
        self.prompt = 0                   # the person's message that started the current turn

    def use_log(self, log_path: Path) -> None:
        self.folder = log_path.with_name(log_path.stem + ".checkpoints")     # session/clean.py removes it with the log

    def _log(self, record: dict) -> None:
        if self.note is not None:
            self.note(record)

    # ---- keeping ---------------------------------------------------------------------------
    def before(self, name: str, args, turn: int) -> Entry | None:
        """What the file a write_file / edit_file call names is now (None: not such a call, or a path
        the tool would refuse anyway)."""
        if name not in CHANGING_TOOLS or not isinstance(args, dict) or self.folder is None:
            return None
        try:
            target = self._target(args.get("path"))
        except (ToolError, OSError, ValueError):
            return None
        path = relative(self.workspace, target)
        prompt = self.prompt or turn
        for e in self.entries:
            if e.path == path and e.turn == turn and e.prompt == prompt and not e.undone:
                return e                  # this turn already holds what the file was before it: commit updates
                                          # what the tool left there
        if not os.path.lexists(target):
            return Entry(prompt, turn, path, False, "")
        try:
            with os.fdopen(open_file(self.workspace, target), "rb") as f:
                data = f.read(MAX_KEPT_BYTES + 1)
        except (ToolError, OSError):
            return None                   # not a regular file inside: the tool refuses it too
        if len(data) > MAX_KEPT_BYTES:
            return Entry(prompt, turn, path, True, "")
        try:
            return Entry(prompt, turn, path, True, self._store(data))
        except OSError:                   # the disk refused: the change goes on, /undo says it cannot
            return Entry(prompt, turn, path, True, "")

    def _target(self, path) -> Path:
        """The resolved file a path names, refused as the file tools refuse it."""
        target = resolve_in_workspace(self.workspace, path)
        refuse_s08_files(self.workspace, target)
        return target

    def _kept_path(self, path: str) -> Path:
        """The file an entry names, for putting back: refused as the file tools refuse it, and the very
        path the tool changed (it was recorded resolved) — a link that appeared in it since is not
        followed, so what is put back or removed is never another file."""
        target = self._target(path)
        if target != self.workspace / path:
            raise ToolError(f"{path} is now a link (to {relative(self.workspace, target)}); not following it")
        return target

    def _store(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        assert self.folder is not None
        try:
            if stat.S_ISREG(safe.lstat(self.folder / digest).st_mode):
                return digest
        except FileNotFoundError:
            pass
        safe.replace(self.folder / digest, data)       # a link or anything else at that name is replaced
        return digest

    def commit(self, entry: Entry | None) -> None:
        if entry is None:
            return
        entry.after = self._digest(entry.path) or ""
        if any(e is entry for e in self.entries):            # a second change of the file in the same turn
            self._log({"t": "checkpoint_after", "i": self.entries.index(entry), "after": entry.after})
            return
        self.entries.append(entry)
        self._log(entry.record())

    # ---- replay ------------------------------------------------------------------------------
    def apply(self, record: dict) -> None:
        if record["t"] == "checkpoint":
            self.entries.append(Entry(record["prompt"], record["turn"], record["path"], record["existed"],
                                      record["blob"], False, record.get("after", "")))
        elif record["t"] == "undone":
            for i in record["n"]:
                if 0 <= i < len(self.entries):
                    self.entries[i].undone = True
        elif record["t"] == "checkpoints":
            self.entries = [Entry(*row) for row in record["all"]]
        elif record["t"] == "checkpoint_after" and record["i"] < len(self.entries):
            self.entries[record["i"]].after = record["after"]

    def records(self) -> list[dict]:
        """The whole state as one record (for a snapshot of the session log)."""
        return [{"t": "checkpoints", "all": [[e.prompt, e.turn, e.path, e.existed, e.blob, e.undone, e.after]
                                            for e in self.entries]}] if self.entries else []

    # ---- choosing ----------------------------------------------------------------------------
    def latest_prompt(self) -> int | None:
        live = [e.prompt for e in self.entries if not e.undone]
        return max(live) if live else None

    def for_prompt(self, prompt: int) -> list[int]:
        return [i for i, e in enumerate(self.entries) if e.prompt == prompt and not e.undone]

    def since_turn(self, turn: int) -> list[int]:
        return [i for i, e in enumerate(self.entries) if e.turn >= turn and not e.undone]

    def paths(self, indexes: list[int]) -> list[str]:
        return list(dict.fromkeys(self.entries[i].path for i in indexes))

    # ---- putting back ------------------------------------------------------------------------
    def restore(self, indexes: list[int]) -> list[str]:
        """Each file of these entries as it was before the earliest of them; marks them undone (logged).
        Returns one line per file saying what happened."""
        first: dict[str, Entry] = {}
        last: dict[str, Entry] = {}
        for i in sorted(indexes):
            first.setdefault(self.entries[i].path, self.entries[i])
            last[self.entries[i].path] = self.entries[i]
        lines = []
        for path, entry in first.items():
            kept, go_on = self._kept_if_changed(last[path])        # before it is overwritten
            lines.append(f"{path}: {self._put_back(entry)}{kept}" if go_on else f"{path}: {kept}")
        for i in indexes:
            self.entries[i].undone = True
        if indexes:
            self._log({"t": "undone", "n": sorted(indexes)})
        return lines

    def _put_back(self, entry: Entry) -> str:
        try:
            target = self._kept_path(entry.path)
        except (ToolError, OSError, ValueError) as exc:
            return f"not restored ({exc})"
        if not entry.existed:
            return self._remove(target)
        if not entry.blob:
            return (f"not restored: its content was not kept (larger than {MAX_KEPT_BYTES // (1024 * 1024)} MB, "
                    "or the disk refused the checkpoint)")
        try:
            data = self._blob(entry.blob)
        except OSError as exc:
            return f"not restored: its checkpoint cannot be read ({exc.strerror or exc})"
        if data is None or hashlib.sha256(data).hexdigest() != entry.blob:
            return "not restored: its checkpoint was changed or damaged"
        try:
            replace_file(self.workspace, target, data)
        except (ToolError, OSError) as exc:
            return f"not restored ({getattr(exc, 'strerror', None) or exc})"
        return "restored"

    def _digest(self, path: str) -> str | None:
        """sha256 of the file at `path` now (None: absent, not a regular file inside, or too large)."""
        now = self._current(path)
        return now[0] if now is not None else None

    def _current(self, path: str) -> tuple[str, bytes | None] | None:
        """(sha256, its bytes — None when larger than MAX_KEPT_BYTES) of the file at `path` now; None when
        it is absent, not a regular file inside the workspace, or larger than MAX_HASHED_BYTES."""
        try:
            target = self._target(path)
            fd = open_file(self.workspace, target)
        except (ToolError, OSError, ValueError):
            return None
        digest, head, size = hashlib.sha256(), b"", 0
        with os.fdopen(fd, "rb") as f:
            while chunk := f.read(1024 * 1024):
                size += len(chunk)
                if size > MAX_HASHED_BYTES:
                    return None
                digest.update(chunk)
                if size <= MAX_KEPT_BYTES:
                    head += chunk
        return digest.hexdigest(), head if size <= MAX_KEPT_BYTES else None

    def _kept_if_changed(self, latest: Entry) -> tuple[str, bool]:
        """Before a file is put back: if something changed it after the file tool did (you, a command),
        keep what it holds now, and say where — nothing is lost by /undo. (the text for its line, whether
        to put it back): a change that cannot be kept leaves the file as it is."""
        if not os.path.lexists(self.workspace / latest.path):
            return "", True
        try:
            self._kept_path(latest.path)
        except (ToolError, OSError, ValueError):
            return "", True                # _put_back refuses it with its reason
        now = self._current(latest.path)
        if now is None:
            return (f"left as it is: it is larger than {MAX_HASHED_BYTES // (1024 * 1024)} MB or cannot be read, so "
                    "s08 cannot tell whether it changed since s08 wrote it", False)
        digest, data = now
        if digest == latest.after:
            return "", True
        if data is None:
            return (f"left as it is: it changed since s08 wrote it and is larger than {MAX_KEPT_BYTES // (1024 * 1024)} "
                    "MB, so that change cannot be kept — undo it by hand if you mean to", False)
        if not latest.after:
            return "", True                # older logs do not say what the tool left there
        try:
            kept = self._store(data)
        except OSError as exc:
            return (f"left as it is: it changed since s08 wrote it, and that change could not be kept "
                    f"({exc.strerror or exc})", False)
        assert self.folder is not None
        return (f" (it had changed since s08 wrote it; what it held is kept in "
                f"{relative(self.workspace, self.folder / kept)})", True)

    def _blob(self, name: str) -> bytes | None:
        """A kept file's bytes: a regular file, not followed through a link, read up to its size limit
        (a command may have replaced it; the SHA-256 check decides if it is still what was kept)."""
        if self.folder is None:
            return None
        try:
            return safe.read_bytes(self.folder / name, MAX_KEPT_BYTES)
        except safe.TooLarge:
            return None

    def _remove(self, target: Path) -> str:
        if not os.path.lexists(target):
            return "not there (it did not exist before either)"
        if target.is_dir():
            return "not removed: it is a folder now"
        parts = target.relative_to(self.workspace).parts
        try:
            parent = open_dir(self.workspace, parts[:-1])
        except (ToolError, OSError) as exc:
            return f"not removed ({getattr(exc, 'strerror', None) or exc})"
        try:
            os.unlink(parts[-1], dir_fd=parent)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                return f"not removed ({exc.strerror or exc})"
        finally:
            os.close(parent)
        return "removed (it did not exist before)"


# ---- the conversation ------------------------------------------------------------------------------

def _compaction_message(message: dict) -> bool:
    first = next((b for b in blocks(message) if b.get("type") == "text"), None)
    return first is not None and str(first.get("text", "")).startswith(COMPACTION_TEXTS)


def typed_positions(messages: list[dict], texts: list[str | None]) -> dict[int, tuple[int, int]]:
    """Message number (0-based) → (message, block) where the history still shows it in place: matched
    newest first, so a repeated text is the latest one; a message that only a compaction carries (inside
    its summary or snip marker) is not in place. `texts[i]` None: never matches."""
    found: dict[int, tuple[int, int]] = {}
    j = len(texts) - 1
    for mi in range(len(messages) - 1, -1, -1):
        m = messages[mi]
        if m.get("role") != "user" or _compaction_message(m):
            continue
        content = blocks(m)
        for bi in range(len(content) - 1, -1, -1):
            b = content[bi]
            if b.get("type") != "text":
                continue
            k = j
            while k >= 0 and texts[k] != b.get("text"):
                k -= 1
            if k >= 0:
                found[k] = (mi, bi)
                j = k - 1
    return found


def cut_before(messages: list[dict], texts: list[str | None], n: int) -> list[dict] | None:
    """The history before the person's message n (1-based), or None if it is no longer in place. What
    came before it in its own message (tool results it followed) stays, so the cut is valid for the API."""
    where = typed_positions(messages, texts).get(n - 1)
    if where is None:
        return None
    mi, bi = where
    before = blocks(messages[mi])[:bi]
    out = list(messages[:mi]) + ([{"role": "user", "content": before}] if before else [])
    close_dangling_tool_uses(out)
    return out

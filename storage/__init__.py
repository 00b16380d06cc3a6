"""Every file s08 reads or writes for itself goes through this package: `.sessions/`, `.transcripts/`,
`.task_outputs/`, checkpoints, the HTML timeline page, the user-level settings files.
storage/safe.py opens them (never through a link, only regular files, every read bounded); here are
the names and formats.

Each file a session writes is named for it, with an ordinal that sorts by time:

    .transcripts/<session>-003-summary.jsonl     kind: snip, summary, manual, reactive, cold, task
    .task_outputs/<session>-017-bash.txt         the raw output of one tool call

A transcript's first line is its header (`{"t": "header", "session", "kind", "trigger",
"tokens_before", "tokens_after", "messages": [first, end), "of", "time"}`), then one API-shaped
message per line; `read_transcript` gives both back. The App binds the workspace to its session
(`bind_session`); without a binding (a layer called on its own) the process gets an id of its own.
Older s08 versions wrote `transcript_<time>_<hex>.jsonl`, `snipped_….jsonl` and
`.task_outputs/tool-results/<id>.txt`: those are still read (by --resume, the inspector, clean).

Names are made unique by creating the file exclusively (O_EXCL), so two
outputs with the same tool_use id, two transcripts in the same second, or two
sessions in one workspace never overwrite each other. Tests point the root
at a temp dir simply by using a temp workspace. Everything s08 creates for
itself is owner-only (files 0600, folders 0700): outputs and transcripts hold
what the person's commands printed. `write_private` replaces a small private file whole (the
user-level settings file, trusted-endpoints and its digest: access/credentials.py).
A transcript is read up to TRANSCRIPT_LIMIT bytes, a session log up to LOG_LIMIT.
"""

from __future__ import annotations

import errno
import json
import json_text
import os
import re
import secrets
import stat
import time
from pathlib import Path

from storage import safe
from storage.safe import FILE_MODE, FOLDER_MODE, MB, Refused, TooLarge  # noqa: F401  (re-exported)

TASK_OUTPUTS_DIR = ".task_outputs"
LEGACY_OUTPUTS_DIR = ".task_outputs/tool-results"     # where s08 before session-named files put outputs
SESSIONS_DIR = ".sessions"
TRANSCRIPTS_DIR = ".transcripts"
SNIPPED, SUMMARIZED = "snip", "summary"     # transcript kinds (also manual, reactive, cold)
TRANSCRIPT_KINDS = ("snip", "summary", "manual", "reactive", "cold", "task")   # task: a sub-agent's (delegation/)
HEADER = "header"                           # the "t" of a transcript's first line
PERSISTED_OPEN, PERSISTED_CLOSE = "<persisted-output>", "</persisted-output>"   # an output moved to disk
SAVED_TO = "Full output saved to: "        # then its path, in a persisted block (micro_compact and ui/ read it)
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_stem(text: str, max_len: int = 64) -> str:
    """A file-name-safe version of an id; never empty."""
    return _SAFE.sub("_", text).strip("._")[:max_len] or "output"


TRANSCRIPT_LIMIT = LOG_LIMIT = 256 * MB       # what one transcript or session log may hold to be read
SETTINGS_LIMIT = 1 * MB                       # a settings file (.env, the user-level one, trusted endpoints)


def make_private_folders(folder: Path) -> None:
    """mkdir -p, each folder it creates owner-only (pathlib's parents=True ignores the mode); s08's
    own folders in it are walked without following links (storage/safe.py)."""
    base, folders, _ = safe.split(Path(folder) / "_")
    missing = []
    while not base.exists() and base != base.parent:
        missing.append(base)
        base = base.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            pass
    if folders:
        os.close(safe.open_folder(folder, create=True))


def private_file(path: Path) -> Path:
    """Make sure `path` exists, created owner-only (with its folders) if it did not; a link, a FIFO or
    a device there is refused (Refused)."""
    make_private_folders(path.parent)
    try:
        os.close(safe.create_new(path))
    except FileExistsError:
        os.close(safe.open_read(path))            # a regular file, not a link
    return path


def ensure_folder(folder: Path) -> Path:
    """Create one of s08's folders, with a .gitignore so a `git add -A` never commits its contents."""
    fd = safe.open_folder(folder, create=True)     # refuses a link, or anything but a folder of yours
    try:
        ignore = os.open(".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         FILE_MODE, dir_fd=fd)
        with os.fdopen(ignore, "w") as f:
            f.write("# written by s08: outputs, transcripts and sessions stay out of git\n*\n")
    except OSError:
        pass
    finally:
        os.close(fd)
    return folder


def create_unique(folder: Path, stem: str, suffix: str) -> tuple[Path, int]:
    """Create and open a new file `<stem><suffix>` (or `<stem>-2…`) exclusively; return (path, fd)."""
    ensure_folder(folder)
    for n in range(1, 10_000):
        name = f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}"
        if n > 50:
            name = f"{stem}-{secrets.token_hex(4)}{suffix}"
        path = folder / name
        try:
            return path, safe.create_new(path)
        except FileExistsError:
            continue
    raise OSError(f"could not create a unique file for {stem!r} in {folder}")


def write_new_text(folder: Path, stem: str, suffix: str, text: str) -> Path:
    """Write text to a brand-new file; never overwrites. Returns the path."""
    path, fd = create_unique(folder, safe_stem(stem), suffix)
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
        f.write(text)
    return path


# ---- the session a workspace's files belong to ----------------------------------------------------
_BOUND: dict[str, str] = {}
_OWN_ID = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"     # for files written with no session bound
_ORDINAL = re.compile(r"^(?P<session>\d{8}-\d{6}-[0-9a-f]+)-(?P<n>\d{3,})-(?P<kind>[A-Za-z0-9_.-]+?)\.(?:jsonl|txt)$")


def bind_session(workspace: Path | str, session_id: str) -> None:
    """From now on the files written for `workspace` are named for `session_id`."""
    _BOUND[str(Path(workspace).resolve())] = session_id


def session_of(workspace: Path | str) -> str:
    return _BOUND.get(str(Path(workspace).resolve()), _OWN_ID)


def parse_name(name: str) -> tuple[str, int, str] | None:
    """(session, ordinal, kind) of a session-named file, or None (an older name)."""
    m = _ORDINAL.match(name)
    return (m["session"], int(m["n"]), m["kind"]) if m else None


def _next_ordinal(workspace: Path, session: str) -> int:
    highest = 0
    for folder in (workspace / TRANSCRIPTS_DIR, workspace / TASK_OUTPUTS_DIR):
        try:
            names = [name for name, _ in safe.listing(folder)]
        except OSError:
            continue
        for name in names:
            if name.startswith(session + "-"):
                parsed = parse_name(name)
                if parsed and parsed[0] == session:
                    highest = max(highest, parsed[1])
    return highest + 1


def create_session_file(workspace: Path, folder: Path, kind: str, suffix: str) -> tuple[Path, int]:
    """Create `<folder>/<session>-NNN-<kind><suffix>` exclusively with the session's next ordinal
    (counted over both of s08's folders, so the names sort by time); return (path, fd)."""
    workspace = Path(workspace)
    session, kind = session_of(workspace), safe_stem(kind, 40)
    ensure_folder(folder)
    n = _next_ordinal(workspace, session)
    for _ in range(10_000):
        path = folder / f"{session}-{n:03d}-{kind}{suffix}"
        try:
            return path, safe.create_new(path)
        except FileExistsError:
            n += 1
    raise OSError(f"could not create a unique file for {kind!r} in {folder}")


def transcript_header(workspace: Path, kind: str, trigger: str = "", before: int | None = None,
                      after: int | None = None, first: int = 0, end: int = 0, of: int = 0) -> dict:
    """A transcript's first line: which session wrote it, why, and what the context was."""
    return {"t": HEADER, "session": session_of(workspace), "kind": kind, "trigger": trigger,
            "tokens_before": before, "tokens_after": after, "messages": [first, end], "of": of,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S")}


def _write_lines(path: Path, lines: list[dict]) -> None:
    text = "".join(json_text.dumps(m, ensure_ascii=False) + "\n" for m in lines)
    safe.replace(path, text.encode("utf-8", "replace"))      # via a rename: a reader never sees half a file


def write_transcript(workspace: Path, messages: list[dict], header: dict | None = None,
                     path: Path | None = None) -> Path:
    """Save a history as JSONL (its header, then one API-shaped message per line), atomically, in a new
    file named for the session and the header's kind (or in `path`, reserved before); never overwriting."""
    header = header or transcript_header(workspace, SUMMARIZED, end=len(messages), of=len(messages))
    final = safe.own_path(path) if path else reserve_transcript(workspace, header.get("kind", SUMMARIZED))
    _write_lines(final, [header, *messages])
    return final


def finish_transcript(path: Path, **fields) -> None:
    """Complete a transcript's header (e.g. the tokens after the summary), atomically."""
    path = safe.own_path(path)                  # it may come from a session log
    header, messages = read_transcript(path)
    if header is not None:
        _write_lines(path, [{**header, **fields}, *messages])


def read_transcript(path: Path) -> tuple[dict | None, list[dict]]:
    """(its header — None in an older transcript —, its messages); unreadable lines are skipped."""
    header, messages = None, []
    text = safe.read_bytes(path, TRANSCRIPT_LIMIT).decode("utf-8", "replace")
    for n, line in enumerate(text.split("\n")):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if n == 0 and record.get("t") == HEADER and "role" not in record:
            header = record
        elif "role" in record:
            messages.append(record)
    return header, messages


def reserve_transcript(workspace: Path, kind: str) -> Path:
    """Create a new, empty `.transcripts/<session>-NNN-<kind>.jsonl` and return it."""
    path, fd = create_session_file(workspace, Path(workspace) / TRANSCRIPTS_DIR, kind, ".jsonl")
    os.close(fd)
    return path


def write_output(workspace: Path, tool: str, text: str) -> Path:
    """A tool's output in a new `.task_outputs/<session>-NNN-<tool>.txt`, raw; returns its path."""
    path, fd = create_session_file(workspace, Path(workspace) / TASK_OUTPUTS_DIR, tool, ".txt")
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
        f.write(text)
    return path


def output_path_shape(tool: str) -> str:
    """What `write_output`'s path for `tool` looks like, relative, before one is written (to size a pointer to it)."""
    return f"{TASK_OUTPUTS_DIR}/{_OWN_ID}-000-{safe_stem(tool, 40)}.txt"


def append_transcript(workspace: Path, messages: list[dict], path: Path | None = None) -> Path:
    """Append messages (JSONL, one per line) to `path`, or to a new unique transcript."""
    path = safe.own_path(path) if path else reserve_transcript(workspace, SNIPPED)
    fd = safe.open_append(path)
    try:
        safe.write_all(fd, "".join(json_text.dumps(m, ensure_ascii=False) + "\n" for m in messages).encode("utf-8", "replace"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def relative(workspace: Path | str | None, path: Path | str) -> str:
    """A path as the model and the person see it: relative to the workspace (as given, or with its
    links resolved), "." for the workspace itself; a path outside it, or a relative one, as it is."""
    p = Path(path)
    if workspace is not None and p.is_absolute():
        for root in (Path(workspace), Path(workspace).resolve()):
            try:
                return str(p.relative_to(root)) or "."
            except ValueError:
                continue
    return str(p)


def persisted_block(shown_path: str, total_chars: int, total_lines: int, head: str, tail: str,
                    note: str = "") -> str:
    """The `<persisted-output>` text that replaces an output too large for the context."""
    omitted = max(0, total_chars - len(head) - len(tail))
    parts = [
        PERSISTED_OPEN,
        f"Output too large for the context ({total_chars:,} chars, {total_lines:,} lines). "
        f"{SAVED_TO}{shown_path}",
        f"Read more with read_file(path=\"{shown_path}\", offset=<first line>, limit=<lines>) "
        "(for very long lines use bash: head -c / cut -c).",
    ]
    if note:
        parts.append(note)
    parts += ["", f"Preview (first {len(head):,} chars):", head.rstrip("\n")]
    if tail:
        parts += [f"... [{omitted:,} chars omitted] ...", f"Preview (last {len(tail):,} chars):",
                  tail.rstrip("\n")]
    parts.append(PERSISTED_CLOSE)
    return "\n".join(parts)


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text`: folder 0700 and yours, file 0600 from the moment it exists (a unique
    O_EXCL temporary file), one rename inside the folder (a link at `path` is replaced, not followed)."""
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise Refused(f"{folder} is owned by someone else (uid {st.st_uid}); s08 does not keep settings there")
        if stat.S_IMODE(st.st_mode) != FOLDER_MODE:
            os.fchmod(fd, FOLDER_MODE)
    finally:
        os.close(fd)
    safe.replace(path, text.encode("utf-8"))


def read_settings_text(path: Path) -> str:
    """A settings file's text: a regular file (a link to one is followed: the person may keep their
    settings anywhere; a FIFO or a device is refused), at most SETTINGS_LIMIT bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{path} is not a regular file (a FIFO or a device); not read as settings", errno.EINVAL)
        os.set_blocking(fd, True)
        data = f.read(SETTINGS_LIMIT + 1)
    if len(data) > SETTINGS_LIMIT:
        raise TooLarge(f"{path} is larger than {SETTINGS_LIMIT // MB} MB; not read as settings")
    return data.decode("utf-8", "replace")

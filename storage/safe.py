"""How s08 opens its own files: never through a link, only regular files, every read bounded.

s08's own folders live in the workspace — `.sessions/` (logs and `<id>.checkpoints/`), `.transcripts/`,
`.task_outputs/` — and the workspace is a cloned repository: any of them, or any file in them, may be
a link to the person's files elsewhere, a FIFO, or a device. So every path is walked from the first
of s08's folders in it, one component at a time with O_NOFOLLOW (openat-style, on directory fds),
each folder checked to be a real folder owned by the person, and the final name is opened with
O_NOFOLLOW too: a link anywhere is refused with one line (`Refused`), never followed. A path that
is not under one of s08's folders (a page the person asked for with `inspect --html FILE`, the
user-level settings file) has its folder opened as the person named it; its last name is still never
followed.

    own_path(path, workspace)   `path` if it is in the workspace's own folders (a path a log names)
    open_folder(path, create)   fd of a folder, created 0700 if asked
    listing(folder) / lstat(p)  (name, lstat) of each entry / of one; nothing is followed
    read_bytes(path, limit)     a regular file's bytes, at most `limit` (TooLarge beyond, known from
                                its size before a byte is read); read_head(path, n): its first n bytes
    open_read(path)             a read-only fd of a regular file (a FIFO is never waited on)
    create_new(path)            a new file, O_EXCL: never an existing name, never through a link
    open_append(path, create)   a regular file with one name, owned by the person, for appending
    replace(path, data)         a unique O_EXCL temporary file in the same folder, renamed over `path`
    remove(path)                unlink one name (a link is removed itself, its target untouched)

Hard links: a file s08 writes into in place (a session log it appends to or cuts) must have one name
— another name may be the person's file outside the workspace. Removing a name never hurts another
name of the same file, and `replace` renames a new file over the name, so neither needs the check.
Renames and unlinks happen inside the folder fd that was walked, so a folder swapped for a link
between the check and the use is not followed either.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

OWN_FOLDERS = (".sessions", ".transcripts", ".task_outputs")
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
FILE_MODE, FOLDER_MODE = 0o600, 0o700
MB = 1024 * 1024


class Refused(OSError):
    """s08 will not use this path for its own files; the message is one line for the person."""

    def __init__(self, message: str, code: int = errno.EPERM):
        super().__init__(code, message)

    def __str__(self) -> str:
        return str(self.strerror)


class TooLarge(Refused):
    def __init__(self, message: str):
        super().__init__(message, errno.EFBIG)


def split(path: Path | str) -> tuple[Path, tuple[str, ...], str]:
    """(base, folders, name): `base` is opened as given; `folders` (from the first of s08's own folders
    in the path on: nothing after it is followed) are walked without following links; `name` is the
    file. A path outside s08's folders: base = its folder."""
    p = Path(path)
    parts = p.parts
    anchor = min((i for i, part in enumerate(parts[:-1]) if part in OWN_FOLDERS), default=None)
    if anchor is None:
        return p.parent, (), p.name
    return Path(*parts[:anchor]) if anchor else Path("."), tuple(parts[anchor:-1]), p.name


def own_path(path: Path | str, workspace: Path | str | None = None) -> Path:
    """`path` if it names a file in one of s08's folders — with `workspace`, `path` may be relative to
    it and must lie in its own folders (a path read from a log may name anything); Refused otherwise."""
    p = Path(path)
    if workspace is not None:
        if p.is_absolute():
            if not p.is_relative_to(workspace):
                raise Refused(f"{path} is not in this workspace's {', '.join(OWN_FOLDERS)}; not used")
            p = p.relative_to(workspace)
        if not p.parts or p.parts[0] not in OWN_FOLDERS:
            raise Refused(f"{path} is not in this workspace's {', '.join(OWN_FOLDERS)}; not used")
        p = Path(workspace) / p
    base, folders, name = split(p)
    if not folders or ".." in p.parts or name in ("", "."):
        raise Refused(f"{path} is not in one of s08's folders ({', '.join(OWN_FOLDERS)}); not used")
    return p


def kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _refuse_link(shown: Path, dir_fd: int, name: str) -> Refused:
    try:
        target = os.readlink(name, dir_fd=dir_fd)
        where = f" (to {target!r})"
    except OSError:
        where = ""
    return Refused(f"{shown} is a link{where}; s08 does not follow links for its own files — remove it",
                   errno.ELOOP)


def _check_folder(fd: int, shown: Path) -> None:
    st = os.fstat(fd)
    if st.st_uid != os.geteuid():
        raise Refused(f"{shown} is owned by someone else (uid {st.st_uid}); s08 keeps its files only in "
                      "folders that are yours — remove it")


def _open_child(fd: int, name: str, shown: Path, create: bool) -> int:
    try:
        return os.open(name, FOLDER_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise _refuse_link(shown, fd, name) from None
            raise Refused(f"{shown} is {kind(st.st_mode)}, not a folder; s08 keeps its files in a real "
                          "folder — remove it", errno.ENOTDIR) from None
        raise
    try:
        os.mkdir(name, FOLDER_MODE, dir_fd=fd)
    except FileExistsError:
        pass
    return _open_child(fd, name, shown, create=False)


def _walk(base: Path, folders: tuple[str, ...], create: bool) -> int:
    if create and folders:
        os.makedirs(base, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    shown = base
    try:
        for name in folders:
            if name in ("", ".", ".."):
                raise Refused(f"{shown / name}: not a folder name s08 uses")
            shown = shown / name
            child = _open_child(fd, name, shown, create)
            os.close(fd)
            fd = child
            _check_folder(fd, shown)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_folder(path: Path | str, create: bool = False) -> int:
    """An fd of the folder `path` (s08's folders in it walked without links, checked to be yours)."""
    p = Path(path)
    if p.name in OWN_FOLDERS or any(part in OWN_FOLDERS for part in p.parts):
        base, folders, name = split(p / "_")
        return _walk(base, folders, create)
    if create:
        os.makedirs(p, FOLDER_MODE, exist_ok=True)
    return os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def parent_fd(path: Path | str, create: bool = False) -> tuple[int, str, Path]:
    base, folders, name = split(path)
    if name in ("", ".", ".."):
        raise Refused(f"{path}: not a file name")
    return _walk(base, folders, create), name, Path(path)


def listing(folder: Path | str) -> list[tuple[str, os.stat_result]]:
    """The entries of one of s08's folders with their lstat (an absent folder: none)."""
    try:
        fd = open_folder(folder)
    except FileNotFoundError:
        return []
    try:
        out = []
        for name in os.listdir(fd):
            try:
                out.append((name, os.stat(name, dir_fd=fd, follow_symlinks=False)))
            except OSError:
                continue
        return out
    finally:
        os.close(fd)


def lstat(path: Path | str) -> os.stat_result:
    parent, name, _ = parent_fd(path)
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    finally:
        os.close(parent)


def _open_regular(parent: int, name: str, shown: Path, flags: int, mode: int = FILE_MODE) -> int:
    try:
        fd = os.open(name, flags, mode, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse_link(shown, parent, name) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Refused(f"{shown} is {kind(st.st_mode)}; s08 reads and writes only regular files there — "
                      "skipped", errno.EINVAL)
    return fd


def open_read(path: Path | str) -> int:
    """A read-only, blocking fd of the regular file `path`, not followed through a link."""
    parent, name, shown = parent_fd(path)
    try:
        fd = _open_regular(parent, name, shown, READ_FLAGS)
    finally:
        os.close(parent)
    os.set_blocking(fd, True)
    return fd


def read_bytes(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file `path`; TooLarge if it holds more than `limit`."""
    with os.fdopen(open_read(path), "rb") as f:
        big = os.fstat(f.fileno()).st_size > limit          # known before a byte is read
        data = b"" if big else f.read(limit + 1)
    if big or len(data) > limit:
        raise TooLarge(f"{path} is larger than {_size(limit)}; s08 does not read it — skipped")
    return data


def read_head(path: Path | str, limit: int) -> bytes:
    """At most the first `limit` bytes of the regular file `path`."""
    with os.fdopen(open_read(path), "rb") as f:
        return f.read(limit)


def _size(n: int) -> str:
    return f"{n // MB} MB" if n >= MB else f"{n:,} bytes"


def create_new(path: Path | str, mode: int = FILE_MODE) -> int:
    """Create `path` exclusively (FileExistsError if the name is taken, even by a link); a write fd."""
    parent, name, shown = parent_fd(path, create=True)
    try:
        return _open_regular(parent, name, shown, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                             mode)
    finally:
        os.close(parent)


def check_own_file(fd: int, shown: Path | str) -> None:
    """A file s08 changes in place: yours, with one name."""
    st = os.fstat(fd)
    if st.st_uid != os.geteuid():
        raise Refused(f"{shown} is owned by someone else (uid {st.st_uid}); s08 does not write into it")
    if st.st_nlink != 1:
        raise Refused(f"{shown} has {st.st_nlink} names (hard links; one may be a file outside the "
                      "workspace); s08 does not write into it — remove it")


def open_append(path: Path | str, create: bool = False, read: bool = False) -> int:
    """An append fd of the regular file `path` (created exclusively if `create`), checked to be yours
    and to have one name."""
    parent, name, shown = parent_fd(path, create=create)
    flags = (os.O_RDWR if read else os.O_WRONLY) | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = _open_regular(parent, name, shown, flags | (os.O_CREAT | os.O_EXCL if create else 0))
    finally:
        os.close(parent)
    try:
        check_own_file(fd, shown)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:                           # one write() in practice; loop only on a short write
        view = view[os.write(fd, view):]


def temporary(parent: int, name: str, mode: int = FILE_MODE) -> tuple[str, int]:
    """A new, uniquely named, exclusively created file next to `name` in the folder `parent`."""
    while True:
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                                dir_fd=parent)
        except FileExistsError:
            continue


def replace(path: Path | str, data: bytes, mode: int = FILE_MODE, before_rename=None) -> None:
    """Write `data` as `path`, atomically, through a unique temporary file renamed inside its folder fd
    (a link at `path` is replaced itself, never written through). `before_rename(fd)` may take the new
    file's fd (it then owns it: a session log locks it before it appears under the name)."""
    parent, name, shown = parent_fd(path, create=True)
    try:
        try:
            old = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise Refused(f"{shown} is a folder; not replacing it", errno.EISDIR)
        tmp, fd = temporary(parent, name, mode)
        try:
            os.fchmod(fd, mode)
            write_all(fd, data)
            os.fsync(fd)
            if before_rename is not None:
                before_rename(fd)
            os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            os.close(fd)
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
            raise
        if before_rename is None:
            os.close(fd)
    finally:
        os.close(parent)


def remove(path: Path | str) -> bool:
    """Unlink the name `path` (a link goes itself; a folder is refused); False if it was not there."""
    parent, name, shown = parent_fd(path)
    try:
        try:
            os.unlink(name, dir_fd=parent)
        except FileNotFoundError:
            return False
        except IsADirectoryError:
            raise Refused(f"{shown} is a folder; not removing it", errno.EISDIR) from None
        return True
    finally:
        os.close(parent)


def remove_folder(path: Path | str) -> bool:
    """rmdir one of s08's (empty) folders; False if it is not empty or not there."""
    parent, name, _ = parent_fd(path)
    try:
        os.rmdir(name, dir_fd=parent)
        return True
    except OSError:
        return False
    finally:
        os.close(parent)

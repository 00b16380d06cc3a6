"""Race-free file access inside the workspace: no path component is followed if it became a link.

`resolve_in_workspace` decides on the path whether a file may be used (links that stay inside are
followed, links that lead out are refused). Between that check and the use, something else — a
command the agent started in the background, another program — could swap a component for a link
that leads out. So the file is then opened by walking the *resolved* path from the workspace folder,
one component at a time, each with O_NOFOLLOW: a resolved path holds no links, so meeting one means
the path changed under us, and the call is refused instead of following it.

    open_file(root, target)          a read-only fd of a regular file (a FIFO is never waited on)
    replace_file(root, target, data) write a temporary file in the directory held open that way and
                                     rename it there: never half-written, never outside the workspace

What is replaced must be a regular file with one name (another name of a hard-linked file may lie
outside the workspace), writable, and not changed since it was read (for edits); setuid and setgid
bits are dropped from the new file.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from storage import relative
from .workspace import ToolError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
SETID_BITS = stat.S_ISUID | stat.S_ISGID


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


NEW_FILE_MODE = 0o666 & ~_umask()


def _changed(root: Path, target: Path) -> ToolError:
    return ToolError(f"{relative(root, target)}: the path changed while it was being opened (a link "
                     "appeared in it); not following it — check the path and try again")


def _parts(root: Path, target: Path) -> tuple[str, ...]:
    return target.relative_to(root).parts


def open_dir(root: Path, parts, create: bool = False) -> int:
    """An fd of the directory root/parts, walked without following links (created if `create`)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts:
            try:
                child = _open_child_dir(fd, name, create)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, name):
                    raise _changed(root, root.joinpath(*parts)) from None
                raise
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_child_dir(fd: int, name: str, create: bool) -> int:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, 0o777, dir_fd=fd)
    except FileExistsError:
        pass
    return os.open(name, DIR_FLAGS, dir_fd=fd)


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_file(root: Path, target: Path) -> int:
    """A read-only fd of the regular file `target` (root and target as resolved paths)."""
    parts = _parts(root, target)
    parent = open_dir(root, parts[:-1])
    try:
        fd = os.open(parts[-1], READ_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _changed(root, target) from None
        raise
    finally:
        os.close(parent)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolError(f"{relative(root, target)} is not a regular file")
    return fd


def check_replaceable(root: Path, target: Path, st: os.stat_result) -> None:
    shown = relative(root, target)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{shown} is a directory")
    if stat.S_ISLNK(st.st_mode):
        raise _changed(root, target)
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{shown} is not a regular file (a FIFO, a device or a socket); not replacing it")
    if st.st_nlink > 1:
        raise ToolError(f"{shown} has {st.st_nlink} hard links; s08 does not change a file that has other "
                        "names (one may be outside the workspace) — use bash if you mean it")
    if not st.st_mode & stat.S_IWUSR:
        raise ToolError(f"{target.name} is marked read-only; not changing it")


def replace_file(root: Path, target: Path, data: bytes, expect_inode: int | None = None) -> bool:
    """Write `data` as `target`, atomically; returns whether a file was replaced. With `expect_inode`,
    refuses if the file there is no longer the one that was read."""
    parts = _parts(root, target)
    parent = open_dir(root, parts[:-1], create=True)
    name = parts[-1]
    try:
        try:
            old = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None:
            check_replaceable(root, target, old)
        if expect_inode is not None and (old is None or old.st_ino != expect_inode):
            raise ToolError(f"{relative(root, target)} changed while it was being edited; read it again")
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                if old is not None and os.geteuid() == 0:
                    try:
                        os.fchown(f.fileno(), old.st_uid, old.st_gid)     # root keeps the owner
                    except OSError:
                        pass
                os.fchmod(f.fileno(), (old.st_mode & 0o7777 & ~SETID_BITS) if old is not None else NEW_FILE_MODE)
                os.fsync(f.fileno())
            os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
            raise
        return old is not None
    finally:
        os.close(parent)

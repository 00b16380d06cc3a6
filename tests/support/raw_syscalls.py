"""Raw system calls for the sandbox's attacker tests: the ways past a seccomp filter that knows only the
usual numbers. Run as a program inside the sandbox (standard library only):

    python3 raw_syscalls.py WHAT PATH MODE     prints "ok" or the errno's name, exits 0

WHAT: int80-chmod (the i386 chmod through `int 0x80` on x86_64), x32-chmod (the x32 ABI's number),
fchmodat2 (Linux 6.6), openat2-create (create PATH with MODE through openat2), io_uring (set up a
ring; PATH and MODE ignored).
"""

import ctypes
import errno
import os
import platform
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
AT_FDCWD = -100


def _said(result: int) -> str:
    if result >= 0:
        return "ok"
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def int80_chmod(path: bytes, mode: int) -> str:
    if platform.machine() != "x86_64":
        return "not-x86_64"
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    page = libc.mmap(None, 4096, 7, 0x02 | 0x20 | 0x40, -1, 0)       # rwx, private, anonymous, MAP_32BIT
    if page in (None, ctypes.c_void_p(-1).value):
        return "no-mmap"
    name = page + 256
    ctypes.memmove(name, path + b"\0", len(path) + 1)
    code = (b"\x53" + b"\xb8" + (15).to_bytes(4, "little") + b"\xbb" + name.to_bytes(4, "little")
            + b"\xb9" + mode.to_bytes(4, "little") + b"\xcd\x80" + b"\x5b" + b"\xc3")   # push rbx … int 0x80 … ret
    ctypes.memmove(page, code, len(code))
    result = ctypes.CFUNCTYPE(ctypes.c_int)(page)()
    return "ok" if result >= 0 else errno.errorcode.get(-result, str(-result))


def x32_chmod(path: bytes, mode: int) -> str:
    return _said(libc.syscall(ctypes.c_long(0x40000000 | 90), path, ctypes.c_int(mode)))


def fchmodat2(path: bytes, mode: int) -> str:
    return _said(libc.syscall(ctypes.c_long(452), ctypes.c_int(AT_FDCWD), path, ctypes.c_int(mode), ctypes.c_int(0)))


def openat2_create(path: bytes, mode: int) -> str:
    how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, mode, 0)
    return _said(libc.syscall(ctypes.c_long(437), ctypes.c_int(AT_FDCWD), path, ctypes.byref(how), ctypes.c_size_t(24)))


def io_uring(path: bytes, mode: int) -> str:
    params = (ctypes.c_uint8 * 120)()
    return _said(libc.syscall(ctypes.c_long(425), ctypes.c_uint32(8), ctypes.byref(params)))


if __name__ == "__main__":
    what, target, mode = sys.argv[1], os.fsencode(sys.argv[2]), int(sys.argv[3], 8)
    print({"int80-chmod": int80_chmod, "x32-chmod": x32_chmod, "fchmodat2": fchmodat2,
           "openat2-create": openat2_create, "io_uring": io_uring}[what](target, mode))

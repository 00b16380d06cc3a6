"""Restrict this process with Landlock, then exec the command: the launcher s08 puts in front of bash.

    python -S -I sandbox_launch.py --write DIR [--write DIR …] [--net on] [--scope]
                                   [--sockets none|local] [--nproc N] [--no-metadata] [--own-processes]
                                   [--read-only-mounts] -- bash -c COMMAND

Run as its own small program (standard library only, no site, isolated), so s08 never runs Python
between fork and exec of a threaded process and is never restricted itself. The whole file system
stays readable and executable; writes are allowed only beneath the --write folders and to the
character devices in DEVICES; without `--net on`, TCP bind and connect are refused (Landlock ABI 4+);
`--scope` also keeps the command from signalling processes outside its sandbox and from connecting to
abstract unix sockets made outside it (ABI 6+). Every access right the kernel's ABI knows is handled,
so what is not granted is refused. Landlock is inherited by every child and cannot be lifted.
Landlock has no right for metadata, so a seccomp filter (build_filter, x86_64 and aarch64; elsewhere
the setup fails) always refuses system calls of another ABI (x32, i386), io_uring, openat2, and a
set-user/group-ID bit in a chmod or a created file's mode. `--sockets none` (or `local`: unix and
netlink only) refuses socket() for the other families — UDP, raw, and with `none` unix sockets too,
which Landlock does not cover. `--no-metadata` refuses the chmod, chown, utime and xattr families
(EPERM); `--own-processes` refuses prlimit64 (setting), setpriority, sched_set* and ioprio_set on any
process but the caller (pid 0: `nice`, `ulimit`, `taskset -c 0 cmd` say that; `renice -p $$` does not).
`--read-only-mounts` (SANDBOX=workspace) gives the command a user and mount namespace in which every
mount but the --write folders is read-only, so metadata outside them cannot change either (EROFS).
The capability bounding set is emptied, so a root command runs without capabilities.

If any step fails the command is NOT run: the launcher prints one line starting with FAILED and
exits with SETUP_FAILED. `--probe` builds and applies the same sandbox to the launcher itself, runs
nothing, and prints the ABI (tools/sandbox.py runs it once per s08 process).
"""

import ctypes
import os
import sys

SETUP_FAILED = 125
FAILED = "s08 sandbox: could not set up the sandbox, the command was not run:"
SYS_CREATE, SYS_ADD_RULE, SYS_RESTRICT = 444, 445, 446          # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
O_PATH = getattr(os, "O_PATH", 0o10000000)

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15           # ABI 2, 3, 5
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1                           # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1               # ABI 6


def fs_rights(abi: int) -> int:
    """Every file-system access right the ABI knows."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


READ = EXECUTE | READ_FILE | READ_DIR
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV      # the rights a rule on a file may grant
# Devices a command may write: writes there change no file. /dev/stdout & co. are NOT here: they are
# links to the command's descriptors, which may be files (`1<victim >/dev/stdout`).
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx")


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class SetupError(Exception):
    pass


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version(libc=None) -> int:
    """The Landlock ABI the kernel offers; 0 when it has none (or it is disabled)."""
    libc = libc or _libc()
    version = libc.syscall(ctypes.c_long(SYS_CREATE), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(0, int(version))


def _fail(what: str) -> SetupError:
    err = ctypes.get_errno()
    return SetupError(f"{what}: {os.strerror(err) if err else 'failed'}")


def _add(libc, ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        fd = os.open(path, O_PATH | os.O_CLOEXEC)
    except OSError:
        return                          # a folder or device this system lacks: nothing to grant
    try:
        if not os.path.isdir(path):
            rights &= FILE_ONLY
        attr = PathBeneathAttr(rights & handled, fd)
        if libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                        ctypes.byref(attr), ctypes.c_uint32(0)) != 0:
            raise _fail(f"landlock_add_rule {path}")
    finally:
        os.close(fd)


def restrict(writable, network: bool, scope: bool) -> int:
    """Apply the sandbox to this process (and so to everything it execs); returns the ABI used."""
    libc = _libc()
    abi = abi_version(libc)
    if abi < 1:
        raise SetupError("the kernel offers no Landlock (Linux 5.13+ with landlock in the LSM list)")
    handled = fs_rights(abi)
    attr = RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4 and not network:
        attr.handled_access_net, size = BIND_TCP | CONNECT_TCP, 16
    if abi >= 6 and scope:
        attr.scoped, size = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL, 24
    ruleset = libc.syscall(ctypes.c_long(SYS_CREATE), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise _fail("landlock_create_ruleset")
    try:
        _add(libc, ruleset, "/", READ, handled)
        for device in DEVICES:
            _add(libc, ruleset, device, READ | WRITE_FILE | TRUNCATE | IOCTL_DEV, handled)
        for folder in writable:
            if not os.path.isdir(folder):
                raise SetupError(f"{folder} is not a folder")
            _add(libc, ruleset, folder, handled, handled)
        _drop_capabilities()
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _fail("prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(ctypes.c_long(SYS_RESTRICT), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


class Arch:
    """The system call numbers the seccomp filter looks at, for one architecture (None: it has no such call)."""

    def __init__(self, audit, socket, open_, openat, creat, mknod, mknodat, chmod, fchmod, fchmodat, chown, fchown,
                 lchown, fchownat, utime, utimes, futimesat, utimensat, xattr, prlimit64, setpriority, sched, ioprio,
                 ioctl):
        self.audit, self.socket, self.ioctl = audit, socket, ioctl
        # calls that create a file, with the argument index of (flags, mode); flags None: always creates
        self.creating = [(nr, f, m) for nr, f, m in ((open_, 1, 2), (openat, 2, 3), (creat, None, 1), (mknod, None, 1),
                                                     (mknodat, None, 2)) if nr is not None]
        # calls that set a mode, with the index of the mode argument
        self.moding = [(nr, m) for nr, m in ((chmod, 1), (fchmod, 1), (fchmodat, 2), (FCHMODAT2, 2)) if nr is not None]
        self.metadata = [nr for nr in (chmod, fchmod, fchmodat, FCHMODAT2, chown, fchown, lchown, fchownat, utime,
                                       utimes, futimesat, utimensat, *xattr, *XATTRAT) if nr is not None]
        self.prlimit64, self.setpriority, self.sched, self.ioprio = prlimit64, setpriority, sched, ioprio


FCHMODAT2, XATTRAT, OPENAT2, IO_URING_SETUP = 452, (463, 466), 437, 425     # one number on every architecture
ARCHES = {
    "x86_64": Arch(0xC000003E, 41, 2, 257, 85, 133, 259, 90, 91, 268, 92, 93, 94, 260, 132, 235, 261, 280,
                   (188, 189, 190, 197, 198, 199), 302, 141, (142, 144, 203, 314), 251, 16),
    "aarch64": Arch(0xC00000B7, 198, None, 56, None, None, 33, None, 52, 53, None, 55, None, 54, None, None, None, 88,
                    (5, 6, 7, 14, 15, 16), 261, 140, (118, 119, 122, 274), 30, 29),
}
AF_UNIX, AF_NETLINK = 1, 16
PR_SET_SECCOMP, SECCOMP_MODE_FILTER, PR_CAPBSET_DROP = 22, 2, 24
RET_ALLOW, RET_EACCES, RET_EPERM, RET_ENOSYS = 0x7FFF0000, 0x00050000 | 13, 0x00050000 | 1, 0x00050000 | 38
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
SET_ID = 0o6000                     # S_ISUID | S_ISGID
CREATES = 0o100 | 0o20000000        # O_CREAT | __O_TMPFILE (the same on x86_64 and aarch64)
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
# ioctls that change a file's flags (chattr: noatime, nodump…), its fsxattr, its generation or make it
# fs-verity (read-only for good) through a descriptor opened for reading: FS_IOC_SETFLAGS (and its 32-bit
# form), FS_IOC_FSSETXATTR, FS_IOC_SETVERSION (and 32-bit), FS_IOC_ENABLE_VERITY
METADATA_IOCTLS = (0x40086602, 0x40046602, 0x401C5820, 0x40087602, 0x40047602, 0x40806685)


def _low(arg: int) -> tuple:
    return (LD_ABS, 0, 0, 16 + 8 * arg)            # the low 32 bits of argument `arg` (little-endian)


def _high(arg: int) -> tuple:
    return (LD_ABS, 0, 0, 20 + 8 * arg)


def _self(arg: int) -> list:
    """Allow when argument `arg` (a pid_t: the kernel reads its low 32 bits) is 0, the caller itself."""
    return [_low(arg), (JEQ, "allow", "eperm", 0)]


def build_filter(machine: str, allowed_families=None, metadata: bool = False, own: bool = False) -> list:
    """The seccomp program (a list of (code, jt, jf, k)) for this architecture:

    always       no system call of another ABI (x32, i386 via int 0x80), no io_uring (its operations
                 run past this filter), no openat2 (its mode sits in memory a filter cannot read:
                 ENOSYS, so callers fall back to openat), no set-user/group-ID bit in a chmod or in
                 the mode of a file being created
    allowed_families (not None)  socket() only for these address families (EACCES otherwise)
    metadata     the chmod, chown, utime and xattr families refused outright (EPERM), and the ioctls
                 that change a file's flags or attributes (METADATA_IOCTLS)
    own          prlimit64 that sets a limit, setpriority, sched_set* and ioprio_set only with pid 0, the
                 calling process. Not even the command's own pid: a filter cannot tell the command's
                 processes from others, and once the command ends its pid may be another program's
    Raises KeyError for an architecture it has no numbers for."""
    arch = ARCHES[machine]
    dispatch = [(LD_ABS, 0, 0, 4), (JEQ, 0, "eacces", arch.audit), (LD_ABS, 0, 0, 0), (JGE, "eacces", 0, 0x40000000),
                (JEQ, "eacces", 0, IO_URING_SETUP), (JEQ, "enosys", 0, OPENAT2)]
    blocks: list = []

    def rule(nr: int, code: list) -> None:
        label = f"rule{len(blocks)}"
        dispatch.append((JEQ, label, 0, nr))
        blocks.append((label, code))

    if metadata:
        for nr in arch.metadata:
            dispatch.append((JEQ, "eperm", 0, nr))
        rule(arch.ioctl, [_low(1), *[(JEQ, "eperm", 0, cmd) for cmd in METADATA_IOCTLS], (RET, 0, 0, RET_ALLOW)])
    else:
        for nr, mode in arch.moding:
            rule(nr, [_low(mode), (JSET, "eperm", "allow", SET_ID)])
    for nr, flags, mode in arch.creating:
        check = [_low(mode), (JSET, "eperm", "allow", SET_ID)]
        rule(nr, check if flags is None else [_low(flags), (JSET, 0, "allow", CREATES), *check])
    if own:
        rule(arch.prlimit64, [_low(2), (JEQ, 0, 2, 0), _high(2), (JEQ, "allow", 0, 0), *_self(0)])
        rule(arch.setpriority, [_low(0), (JEQ, 0, "eperm", PRIO_PROCESS), *_self(1)])
        rule(arch.ioprio, [_low(0), (JEQ, 0, "eperm", IOPRIO_WHO_PROCESS), *_self(1)])
        for nr in arch.sched:
            rule(nr, _self(0))
    if allowed_families is not None:
        rule(arch.socket, [_low(0), *[(JEQ, "allow", 0, family) for family in allowed_families], (RET, 0, 0, RET_EACCES)])
    labels: dict[str, int] = {}
    body: list = dispatch + [(RET, 0, 0, RET_ALLOW)]
    for label, code in blocks:
        labels[label] = len(body)
        body += code
    ends = {"allow": RET_ALLOW, "eperm": RET_EPERM, "eacces": RET_EACCES, "enosys": RET_ENOSYS}
    for label, value in ends.items():
        labels[label] = len(body)
        body.append((RET, 0, 0, value))
    program = []
    for i, (code, *jumps, k) in enumerate(body):
        jt, jf = (labels[j] - i - 1 if isinstance(j, str) else j for j in jumps)
        if not (0 <= jt < 256 and 0 <= jf < 256):
            raise ValueError("seccomp filter too long for its jumps")
        program.append((code, jt, jf, k))
    return program


def install_filter(program: list) -> None:
    filters = (SockFilter * len(program))(*[SockFilter(*ins) for ins in program])
    prog = SockFprog(len(program), filters)
    if _libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise _fail("seccomp")


def _drop_capabilities() -> None:
    """Empty the bounding set, so a root command loses every capability at exec (CAP_NET_ADMIN,
    CAP_SYS_TIME, CAP_SYS_MODULE…: changes no file rule covers). A user without CAP_SETPCAP has no
    capabilities to lose (no_new_privs keeps file capabilities from adding any)."""
    libc = _libc()
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            if ctypes.get_errno() == 1 and cap == 0:          # EPERM: no CAP_SETPCAP, nothing to drop
                return
            if ctypes.get_errno() == 22:                      # EINVAL: past the last capability
                return
            raise _fail(f"dropping capability {cap}")


def _limit_processes(count: int) -> None:
    import resource
    _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    if hard != resource.RLIM_INFINITY:
        count = min(count, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (count, hard))


CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1


class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]


def _mount_setattr(libc, path: str, attr_set: int, attr_clr: int, recursive: bool = True) -> int:
    attr = MountAttr(attr_set, attr_clr, 0, 0)
    return libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), os.fsencode(path),
                        ctypes.c_uint(AT_RECURSIVE if recursive else 0), ctypes.byref(attr),
                        ctypes.c_size_t(ctypes.sizeof(attr)))


def read_only_mounts(writable) -> None:
    """Give this process a mount namespace (in a user namespace of its own, the same uid and gid mapped) in
    which every mount is read-only but the `writable` folders: a chmod, chown, utime or xattr change
    elsewhere then fails with EROFS, enforced by the kernel whatever path or descriptor names the file."""
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise _fail("a user and mount namespace (unshare)")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise _fail("making the mounts private")
    for folder in writable:           # its own mount first, so the read-only mark below can be lifted there
        path = os.fsencode(folder)
        if libc.mount(path, path, None, MS_BIND | MS_REC, None) != 0:
            raise _fail(f"bind-mounting {folder}")
    if _mount_setattr(libc, "/", MOUNT_ATTR_RDONLY, 0) != 0:
        raise _fail("making the mounts read-only (mount_setattr, Linux 5.12+)")
    for folder in writable:           # a mount beneath it that was read-only already stays so (EPERM: locked)
        if (_mount_setattr(libc, folder, 0, MOUNT_ATTR_RDONLY) != 0
                and _mount_setattr(libc, folder, 0, MOUNT_ATTR_RDONLY, recursive=False) != 0):
            raise _fail(f"making {folder} writable again")
    os.chdir(os.getcwd())             # the working folder still pointed into the mount beneath the bind mounts


def main(argv) -> int:
    writable, network, scope, nproc, probe, sockets = [], False, False, 0, False, "all"
    metadata, own, mounts = False, False, False
    try:
        split = argv.index("--")
    except ValueError:
        split = len(argv)
    options, command = argv[:split], argv[split + 1:]
    i = 0
    while i < len(options):
        option = options[i]
        if option == "--write" and i + 1 < len(options):
            writable.append(options[i + 1])
            i += 1
        elif option == "--net" and i + 1 < len(options):
            network = options[i + 1] == "on"
            i += 1
        elif option == "--nproc" and i + 1 < len(options):
            nproc = int(options[i + 1])
            i += 1
        elif option == "--scope":
            scope = True
        elif option == "--sockets" and i + 1 < len(options):
            sockets = options[i + 1]
            i += 1
        elif option == "--no-metadata":
            metadata = True
        elif option == "--own-processes":
            own = True
        elif option == "--read-only-mounts":
            mounts = True
        elif option == "--probe":
            probe = True
        else:
            sys.stderr.write(f"{FAILED} unknown option {option!r}\n")
            return SETUP_FAILED
        i += 1
    if not command and not probe:
        sys.stderr.write(f"{FAILED} no command\n")
        return SETUP_FAILED
    try:
        machine = os.uname().machine
        if machine not in ARCHES:
            raise SetupError(f"no seccomp system call table for {machine} (x86_64 and aarch64 have one)")
        if nproc:                     # before the user namespace: the limit then binds at the person's level too
            _limit_processes(nproc)
        if mounts:
            read_only_mounts(writable)
        abi = restrict(writable, network, scope)
        families = None if sockets == "all" else () if sockets == "none" else (AF_UNIX, AF_NETLINK)
        install_filter(build_filter(machine, families, metadata, own))
    except (SetupError, OSError, ValueError) as exc:
        sys.stderr.write(f"{FAILED} {exc}\n")
        return SETUP_FAILED
    if probe:
        sys.stdout.write(f"{abi}\n")
        return 0
    import signal
    for name in ("SIGPIPE", "SIGXFSZ"):       # Python ignores these; the command must not inherit that
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"s08 sandbox: cannot run {command[0]}: {exc.strerror}\n")
        return 127
    return 127                        # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

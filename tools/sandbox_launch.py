"""Restrict this process with Landlock, then exec the command: the launcher s08 puts in front of bash.

    python -S -I sandbox_launch.py --write DIR [--write DIR …] [--net on] [--scope]
                                   [--sockets none|local] [--nproc N] -- bash -c COMMAND

Run as its own small program (standard library only, no site, isolated), so s08 never runs Python
between fork and exec of a threaded process and is never restricted itself. The whole file system
stays readable and executable; writes are allowed only beneath the --write folders and to the
character devices in DEVICES; without `--net on`, TCP bind and connect are refused (Landlock ABI 4+);
`--scope` also keeps the command from signalling processes outside its sandbox and from connecting to
abstract unix sockets made outside it (ABI 6+). Every access right the kernel's ABI knows is handled,
so what is not granted is refused. Landlock is inherited by every child and cannot be lifted.
`--sockets none` (or `local`: unix and netlink only) adds a seccomp filter that refuses socket() for
the other families — UDP, raw, and with `none` unix sockets too, which Landlock does not cover — and
io_uring (x86_64 and aarch64). The capability bounding set is emptied, so a root command runs
without capabilities.

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


# (audit arch, socket, io_uring_setup) for the architectures whose numbers are known here
ARCHES = {"x86_64": (0xC000003E, 41, 425), "aarch64": (0xC00000B7, 198, 425)}
AF_UNIX, AF_NETLINK = 1, 16
PR_SET_SECCOMP, SECCOMP_MODE_FILTER, PR_CAPBSET_DROP = 22, 2, 24
RET_ALLOW, RET_EACCES = 0x7FFF0000, 0x00050000 | 13
LD_ABS, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06


def _socket_filter(allowed_families) -> list:
    """A seccomp program: socket() only for `allowed_families`, no io_uring (it could open sockets
    past this filter), no system call of another ABI (x32, i386); everything else allowed."""
    arch, socket_nr, uring_nr = ARCHES[os.uname().machine]
    head = [(LD_ABS, 0, 0, 4), (JEQ, 0, "deny", arch), (LD_ABS, 0, 0, 0), (JGE, "deny", 0, 0x40000000),
            (JEQ, "deny", 0, uring_nr), (JEQ, 0, "allow", socket_nr), (LD_ABS, 0, 0, 16)]
    body = head + [(JEQ, "allow", 0, family) for family in allowed_families] + [(RET, 0, 0, RET_EACCES)]
    labels = {"deny": len(body) - 1, "allow": len(body)}
    body.append((RET, 0, 0, RET_ALLOW))
    return [(code, labels[jt] - i - 1 if isinstance(jt, str) else jt, labels[jf] - i - 1 if isinstance(jf, str) else jf,
             k) for i, (code, jt, jf, k) in enumerate(body)]


def _refuse_sockets(allowed_families) -> None:
    if os.uname().machine not in ARCHES:
        return                        # Landlock's TCP rules still hold; UDP and unix sockets do not (README)
    program = _socket_filter(allowed_families)
    filters = (SockFilter * len(program))(*[SockFilter(*ins) for ins in program])
    prog = SockFprog(len(program), filters)
    libc = _libc()
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
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


def main(argv) -> int:
    writable, network, scope, nproc, probe, sockets = [], False, False, 0, False, "all"
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
        abi = restrict(writable, network, scope)
        if sockets != "all":          # "none", or "local" (unix and netlink only: no UDP, no raw sockets)
            _refuse_sockets(() if sockets == "none" else (AF_UNIX, AF_NETLINK))
        if nproc:
            _limit_processes(nproc)
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

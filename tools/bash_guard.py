"""Refuse a short list of catastrophic shell commands by reading the command's words.

Not a sandbox: it stops the accidents that end a machine (`rm -rf /`, mkfs,
shutdown/reboot, a fork bomb, an endless loop of background jobs, writing to a
raw disk, killing every process, `find / -delete`, a recursive chmod/chown of
the system). The command is read by the one shell parser (approvals/shell.py,
tree-sitter's bash grammar); only the word in command position counts, so
`echo "rm -rf /"`, `grep shutdown notes.txt` or the word "pseudocode" are never
refused. Wrappers (approvals/wrappers.py WRAPPERS: sudo, env, nohup, timeout…, here by
any path, `/usr/bin/sudo` too) are looked through, so are the -c strings of
every shell in approvals.wrappers.SHELLS, `eval`, `su -c`, here-strings and
here-documents fed to a shell; paths are normalized (`/./`, `//`, `/usr/..`)
and a `cd` to a protected folder makes the relative paths after it count
(`cd / && rm -rf *`), until the subshell it ran in ends.

The command is capped at MAX_COMMAND_BYTES (the kernel's own limit for one
argument: longer ones could not be run by `bash -c` anyway); the parse and the
walk are linear in its length.
"""

from __future__ import annotations

import posixpath
import re

from approvals.options import known_option
from approvals.shell import Script, Simple, parse
from approvals.wrappers import ASSIGNMENT, SHELLS, WRAPPERS

MAX_COMMAND_BYTES = 128 * 1024 - 1
MAX_DEPTH = 3                      # nested `bash -c`, eval, `su -c`
POWER = {"shutdown", "reboot", "halt", "poweroff"}
HOME = ("~", "$HOME", "${HOME}")
PROTECTED = {"/", "~", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
             "/sbin", "/sys", "/usr", "/var", "/srv", "/mnt", "/Users", "/System"}
RAW_DISK = re.compile(r"^/dev/(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(p\d+)?"
                      r"|mmcblk\d+(p\d+)?|r?disk\d+(s\d+)?|md\d+|dm-\d+|mapper/\S+)$")
CRASH_FILES = {"/proc/sysrq-trigger"}
FIND_FILTERS = {"name", "iname", "path", "ipath", "wholename", "iwholename", "regex", "iregex", "lname", "ilname",
                "inum", "samefile", "user", "uid", "group", "gid"}      # find … -delete that picks its files
ENDLESS = {"while": (["true"], [":"]), "until": (["false"],)}


def _unwrap(cmd: list[str]) -> list[str]:
    """Drop assignments and wrapper commands (with their options) in front of the real command."""
    i = 0
    for _ in range(len(cmd)):
        if i >= len(cmd):
            break
        word = cmd[i]
        name = word.rsplit("/", 1)[-1]
        if ASSIGNMENT.match(word):
            i += 1
        elif word == "command" and i + 1 < len(cmd) and cmd[i + 1] in ("-v", "-V"):
            return []               # `command -v x` only looks x up
        elif name in WRAPPERS:
            spec = WRAPPERS[name]
            i += 1
            while i < len(cmd) and cmd[i].startswith("-") and cmd[i] != "-":
                option = cmd[i]
                if option == "--":
                    i += 1
                    break
                if name == "env" and option in ("-S", "--split-string") and i + 1 < len(cmd):
                    return _unwrap(_words_of(cmd[i + 1]) + cmd[i + 2:])      # env -S 'cmd args'
                takes_next = known_option(option, spec.opts) == "next" or \
                    (option.startswith("--") and "=" not in option and option[2:] + "=" in spec.opts.long)
                i += 2 if takes_next else 1
            i += spec.operands
        else:
            break
    return cmd[i:]


def _words_of(text: str) -> list[str]:
    script = parse(text)
    return script.commands[0].words if script.commands else []


def normalize(path: str, cwd: str | None = None) -> str | None:
    """`path` as an absolute, normalized path ("~" for the home folder); None when it is relative and
    the folder it is relative to is not known."""
    for home in HOME:
        if path == home or path.startswith(home + "/"):
            path = "/\0home" + path[len(home):]
            break
    if not path.startswith("/"):
        if cwd is None:
            return None
        path = (cwd.replace("~", "/\0home", 1) if cwd.startswith("~") else cwd) + "/" + path
    norm = posixpath.normpath("/" + path.lstrip("/"))
    return "~" + norm[6:] if norm == "/\0home" or norm.startswith("/\0home/") else norm


def _protected(path: str, cwd: str | None) -> bool:
    norm = normalize(path, cwd)
    if norm is None:
        return False
    base = norm[:-2] if norm.endswith("/*") else norm
    return norm in PROTECTED or (base or "/") in PROTECTED


def _targets(args: list[str]) -> tuple[set, list[str]]:
    """(the option letters/words, the operands) of a command's arguments."""
    flags, operands, done = set(), [], False
    for a in args:
        if a == "--" and not done:
            done = True
        elif not done and a.startswith("--"):
            flags.add(a)
        elif not done and a.startswith("-") and len(a) > 1:
            flags.update(a[1:])
        else:
            operands.append(a)
    return flags, operands


def _rm_reason(args: list[str], cwd) -> str | None:
    flags, targets = _targets(args)
    if "--no-preserve-root" in flags:
        return "rm --no-preserve-root"
    if flags & {"r", "R", "--recursive"}:
        for t in targets:
            if _protected(t, cwd):
                return f"recursive rm of {t}" + (f" (in {cwd})" if cwd and not t.startswith(("/",) + HOME) else "")
    return None


def _kill_reason(args: list[str]) -> str | None:
    i = 0
    if args[:1] and args[0].startswith("-") and args[0] != "--":
        i = 2 if args[0] in ("-s", "-n", "--signal") else 1           # the signal
    pids = [a for a in args[i:] if a != "--"]
    return "kill -1 ends every process you may signal" if "-1" in pids else None


def _find_reason(args: list[str], cwd) -> str | None:
    starts = []
    for a in args:
        if a.startswith(("-", "(", "!")) and a != "-":
            break
        starts.append(a)
    destructive = "-delete" in args or any(a in ("-exec", "-execdir") and args[i + 1:i + 2] and
                                           args[i + 1].rsplit("/", 1)[-1] in ("rm", "shred")
                                           for i, a in enumerate(args))
    chosen = any(a.lstrip("-") in FIND_FILTERS or a.startswith("-newer") for a in args)
    if destructive and not chosen and any(_protected(s, cwd) for s in starts or ["."]):
        return f"find {' '.join(starts) or '.'} deleting what it finds"
    return None


def _check_simple(simple: Simple, depth: int, cwd) -> str | None:
    for r in simple.redirects:
        target = r.target.text if r.target else ""
        if r.op not in ("<", "<&", "<<", "<<-", "<<<") and (RAW_DISK.match(target) or target in CRASH_FILES):
            return f"writing to {target}"
    cmd = _unwrap(simple.words)
    if not cmd:
        return None
    name, args = cmd[0].rsplit("/", 1)[-1], cmd[1:]
    if name in POWER or (name in {"init", "telinit"} and args[:1] in (["0"], ["6"])) or \
            (name == "systemctl" and set(args) & {"poweroff", "reboot", "halt", "kexec"}):
        return f"{name} would shut down or reboot the machine"
    if name.startswith("mkfs") or name in {"mke2fs", "wipefs", "mkswap", "blkdiscard"}:
        return f"{name} formats or wipes a disk"
    if name == "rm":
        return _rm_reason(args, cwd)
    if name == "kill":
        return _kill_reason(args)
    if name == "killall5" or (name == "pkill" and set(_targets(args)[1]) & {"", ".", ".*", "^"}):
        return f"{name} ends every process"
    if name == "find":
        return _find_reason(args, cwd)
    if name in {"chmod", "chown", "chgrp"}:
        flags, targets = _targets(args)
        if flags & {"R", "--recursive"} and any(_protected(t, cwd) for t in targets[1:]):
            return f"recursive {name} of a system folder"
    if name == "mv" and any(_protected(t, cwd) for t in _targets(args)[1][:-1]):
        return "moving a system folder away"
    if name == "dd" and any(a.startswith("of=") and RAW_DISK.match(a[3:]) for a in args):
        return "dd onto a raw disk"
    if name in {"tee", "cp", "shred", "truncate"} and any(RAW_DISK.match(a) for a in args):
        return f"{name} onto a raw disk"
    if depth < MAX_DEPTH:
        return _nested_reason(name, args, simple, depth)
    return None


def _shell_code(args: list[str]) -> str | None:
    """The command line a shell is given with -c (bash -c, -lc, -ec, fish --command=…), or None."""
    for i, a in enumerate(args):
        if a.startswith("--command="):
            return a[len("--command="):]
        if i + 1 < len(args) and (a == "--command" or (a.startswith("-") and not a.startswith("--") and
                                                        "c" in a[1:])):
            rest = [w for w in args[i + 1:] if not (w.startswith("-") and len(w) > 1)]
            return rest[0] if rest else None
    return None


def _nested_reason(name: str, args: list[str], simple: Simple, depth: int) -> str | None:
    """Commands that hold another command line: bash -c '…', a here-string or here-document fed to a
    shell, eval …, su -c '…'."""
    if name in SHELLS:
        code = _shell_code(args)
        if code is not None:
            return dangerous_reason(code, depth + 1)
        for r in simple.redirects:
            fed = r.target.text if r.op == "<<<" and r.target else r.body if r.op in ("<<", "<<-") else None
            if fed is not None:
                reason = dangerous_reason(fed, depth + 1)
                if reason:
                    return reason
    elif name == "eval":
        return dangerous_reason(" ".join(args), depth + 1)
    elif name in ("su", "runuser"):
        for i, a in enumerate(args[:-1]):
            if a in ("-c", "--command"):
                return dangerous_reason(args[i + 1], depth + 1)
    return None


def _next_cwd(cmd: list[str], cwd):
    """The folder after a `cd`/`pushd` (None: unknown, i.e. relative to the workspace or elsewhere)."""
    words = _unwrap(cmd)
    if not words or words[0] not in ("cd", "pushd", "popd"):
        return cwd
    target = [a for a in words[1:] if not a.startswith("-")][:1]
    if words[0] == "popd":
        return None
    return normalize(target[0], cwd) if target else "~"


def _fork_bomb(script: Script) -> bool:
    """A function that calls itself twice or more, in a pipeline or in the background."""
    calls: dict[str, list[Simple]] = {}
    for c in script.commands:
        words = _unwrap(c.words)
        if c.function and words[:1] == [c.function]:
            calls.setdefault(c.function, []).append(c)
    return any(len(found) >= 2 and any(c.in_pipeline or c.background for c in found) for found in calls.values())


def _piped_code(simple: Simple, earlier: dict[int, Simple]) -> str | None:
    """What a shell reads from a pipe, when the command before it prints a known text: `echo '…' | sh`,
    `cat <<EOF | sh`."""
    before = earlier.get(simple.pipe_from) if simple.pipe_from is not None else None
    words = _unwrap(simple.words)
    if before is None or not words or words[0].rsplit("/", 1)[-1] not in SHELLS or _shell_code(words[1:]):
        return None
    printer = _unwrap(before.words)
    if printer[:1] in (["echo"], ["printf"]):
        return " ".join(a for a in printer[1:] if not a.startswith("-"))
    if printer[:1] == ["cat"]:
        return "\n".join(r.body for r in before.redirects if r.op in ("<<", "<<-")) or None
    return None


def dangerous_reason(command: str, depth: int = 0) -> str | None:
    """Why `command` is refused, or None if it may run."""
    script = parse(command[:MAX_COMMAND_BYTES])
    if _fork_bomb(script):
        return "a fork bomb"
    if any(loop.background and not loop.leaves and loop.condition in ENDLESS.get(loop.keyword, ())
           for loop in script.loops):
        return "an endless loop that starts background jobs (it fills the process table)"
    cwds: dict[tuple, str | None] = {(): None}
    earlier: dict[int, Simple] = {}
    for simple in script.commands:
        scope = simple.scope
        while scope not in cwds:            # a subshell starts in the folder of the shell around it
            scope = scope[:-1]
        cwd = cwds[scope]
        reason = _check_simple(simple, depth, cwd)
        code = _piped_code(simple, earlier) if depth < MAX_DEPTH else None
        if not reason and code:
            reason = dangerous_reason(code, depth + 1)
        if reason:
            return reason
        cwds[simple.scope] = _next_cwd(simple.words, cwd)
        earlier[simple.id] = simple
    return None

"""Refuse a short list of catastrophic shell commands by parsing command words.

Not a sandbox: it stops the accidents that end a machine (`rm -rf /`, mkfs,
shutdown/reboot, a fork bomb, writing to a raw disk, killing every process,
`find / -delete`, a recursive chmod/chown of the system). The command is split
into simple commands with shlex; only the word in command position counts,
so `echo "rm -rf /"`, `grep shutdown notes.txt` or the word "pseudocode" are
never refused. Wrappers (sudo, env, nohup, `bash -c "..."`) are looked
through, here-document bodies are skipped, paths are normalized (`/./`, `//`,
`/usr/..`) and a `cd` to a protected folder makes the relative paths after it
count (`cd / && rm -rf *`).

The work is linear in the command's length and the command is capped at
MAX_COMMAND_BYTES (the kernel's own limit for one argument: longer ones
could not be run by `bash -c` anyway).
"""

from __future__ import annotations

import posixpath
import re
import shlex

MAX_COMMAND_BYTES = 128 * 1024 - 1
MAX_DEPTH = 3                      # nested `bash -c`, eval, `su -c`
SEPARATORS = {";", ";;", "&", "&&", "|", "||", "|&", "(", ")", "{", "}", "!", "`", "$("}
REDIRECTS = {">", ">>", ">|", "&>", "&>>", "1>", "2>", "<"}
# wrapper → its options that take a separate value (the command follows them)
WRAPPERS = {
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir"},
    "doas": {"-u", "-C"}, "pkexec": {"--user"}, "nohup": set(), "time": {"-f", "-o"}, "nice": {"-n"},
    "ionice": {"-c", "-n", "-p", "-P", "-u"}, "command": set(), "exec": {"-a"}, "builtin": set(),
    "env": {"-u", "-C", "--unset", "--chdir"}, "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args"},
    "stdbuf": {"-i", "-o", "-e"}, "unbuffer": set(), "setsid": set(), "chronic": set(), "busybox": set(),
    "flock": {"-w", "-E", "--timeout"}, "taskset": set(), "chroot": {"--userspec", "--groups"},
    "strace": {"-o", "-e", "-p", "-s", "-u"}, "then": set(), "do": set(), "else": set(), "if": set(),
    "while": set(), "until": set(),
}
POSITIONAL = {"timeout": 1, "flock": 1, "taskset": 1, "chroot": 1}     # arguments before the command
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish"}
POWER = {"shutdown", "reboot", "halt", "poweroff"}
HOME = ("~", "$HOME", "${HOME}")
PROTECTED = {"/", "~", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
             "/sbin", "/sys", "/usr", "/var", "/srv", "/mnt", "/Users", "/System"}
RAW_DISK = re.compile(r"^/dev/(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(p\d+)?"
                      r"|mmcblk\d+(p\d+)?|r?disk\d+(s\d+)?|md\d+|dm-\d+|mapper/\S+)$")
CRASH_FILES = {"/proc/sysrq-trigger"}
FIND_FILTERS = {"name", "iname", "path", "ipath", "wholename", "iwholename", "regex", "iregex", "lname", "ilname",
                "inum", "samefile", "user", "uid", "group", "gid"}      # find … -delete that picks its files
# a function definition: starts only at a word boundary, with a bounded name and body — linear time
FUNC_DEF = re.compile(r"(?<![\w:.-])(?:function\s+)?([A-Za-z_:.][\w:.-]{0,63})\s*(?:\(\s*\))?\s*\{([^{}]{0,400})\}")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([\w.-]+)\1")
QUOTING = re.compile(r"['\"\\#]")
PLAIN_WORDS = re.compile(r"[();<>|&]+|[^ \t\r\n();<>|&]+")  # what _lex makes of text without QUOTING, in C


def _strip_heredocs(command: str) -> str:
    out, lines, i = [], command.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        delimiters = [m.group(2) for m in HEREDOC.finditer(line)]
        i += 1
        for delim in delimiters:
            while i < len(lines) and lines[i].strip() != delim:
                i += 1
            i += 1
    return "\n".join(out)


def _words(command: str) -> list[str]:
    text = _strip_heredocs(command).replace("\n", " ; ").replace("$(", " $( ").replace("`", " ` ")
    return _lex(text) if QUOTING.search(text) else PLAIN_WORDS.findall(text)


def _lex(text: str) -> list[str]:
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # unbalanced quotes: bash will refuse it too, but still look at the words
        return re.findall(r"[^\s;&|()<>'\"]+|[;&|()<>]+", text)


def _simple_commands(words: list[str]):
    """(command words, the separator right in front of it, every separator since the last command)
    for each simple command."""
    current: list[str] = []
    before = seps = ""
    for w in words:
        if w in SEPARATORS or (set(w) <= set(";&|()") and w):
            if current:
                yield current, before, seps
                seps = ""
            current, before, seps = [], w, seps + w
        else:
            current.append(w)
    if current:
        yield current, before, seps


def _unwrap(cmd: list[str]) -> list[str]:
    """Drop assignments and wrapper commands (with their options) in front of the real command."""
    i = 0
    while i < len(cmd):
        word = cmd[i]
        name = word.rsplit("/", 1)[-1]
        if re.match(r"^[A-Za-z_]\w*=", word):
            i += 1
        elif word == "command" and i + 1 < len(cmd) and cmd[i + 1] in ("-v", "-V"):
            return []               # `command -v x` only looks x up
        elif name in WRAPPERS:
            i += 1
            while i < len(cmd) and cmd[i].startswith("-") and cmd[i] != "-":
                if name == "env" and cmd[i] in ("-S", "--split-string") and i + 1 < len(cmd):
                    return _unwrap(_words(cmd[i + 1]) + cmd[i + 2:])      # env -S 'cmd args'
                i += 2 if cmd[i] in WRAPPERS[name] else 1
            i += POSITIONAL.get(name, 0)
        else:
            break
    return cmd[i:]


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


def _check_simple(cmd: list[str], depth: int, cwd) -> str | None:
    for i, w in enumerate(cmd[:-1]):
        if w in REDIRECTS and w != "<" and (RAW_DISK.match(cmd[i + 1]) or cmd[i + 1] in CRASH_FILES):
            return f"writing to {cmd[i + 1]}"
    cmd = _unwrap([w for i, w in enumerate(cmd) if not (i and cmd[i - 1] in REDIRECTS) and w not in REDIRECTS])
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
        return _nested_reason(name, args, depth)
    return None


def _nested_reason(name: str, args: list[str], depth: int) -> str | None:
    """Commands that hold another command line: bash -c '…', eval …, su -c '…'."""
    if name in SHELLS:
        for i, a in enumerate(args[:-1]):
            if a == "<<<" or (a.startswith("-") and not a.startswith("--") and "c" in a[1:]):
                return dangerous_reason(args[i + 1], depth + 1)     # bash -c / -lc / -ec '…', bash <<< '…'
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


def dangerous_reason(command: str, depth: int = 0) -> str | None:
    """Why `command` is refused, or None if it may run."""
    command = command[:MAX_COMMAND_BYTES]
    for m in FUNC_DEF.finditer(command):
        name, body = re.escape(m.group(1)), m.group(2)
        if re.search(rf"(^|[\s;&|]){name}\s*\|\s*{name}($|[\s;&|])", body):
            return "a fork bomb"
    previous: list[str] = []
    cwd: str | None = None
    saved: list = []
    for cmd, before, seps in _simple_commands(_words(command)):
        for sep in seps:                  # a subshell's `cd` ends with it
            if sep == "(":
                saved.append(cwd)
            elif sep == ")":
                cwd = saved.pop() if saved else None
        reason = _check_simple(cmd, depth, cwd)
        shell_reads_pipe = before in ("|", "|&") and _unwrap(cmd)[:1] and \
            _unwrap(cmd)[0].rsplit("/", 1)[-1] in SHELLS and previous[:1] and previous[0] in ("echo", "printf")
        if not reason and shell_reads_pipe and depth < MAX_DEPTH:
            reason = dangerous_reason(" ".join(a for a in previous[1:] if not a.startswith("-")), depth + 1)
        if reason:
            return reason
        cwd = _next_cwd(cmd, cwd)
        previous = _unwrap(cmd)
    return None

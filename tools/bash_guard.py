"""Refuse a short list of catastrophic shell commands by parsing command words.

Not a sandbox: it stops the accidents that end a machine (`rm -rf /`, mkfs,
shutdown/reboot, a fork bomb, writing to a raw disk). The command is split
into simple commands with shlex; only the word in command position counts,
so `echo "rm -rf /"`, `grep shutdown notes.txt` or the word "pseudocode" are
never refused. Wrappers (sudo, env, nohup, `bash -c "..."`) are looked
through, and here-document bodies are skipped.
"""

from __future__ import annotations

import re
import shlex

SEPARATORS = {";", ";;", "&", "&&", "|", "||", "|&", "(", ")", "{", "}", "!", "`", "$("}
REDIRECTS = {">", ">>", ">|", "&>", "&>>", "1>", "2>", "<"}
WRAPPERS = {"sudo", "doas", "nohup", "time", "nice", "ionice", "command", "exec", "builtin",
            "env", "xargs", "timeout", "stdbuf", "unbuffer", "then", "do", "else", "if", "while", "until"}
WRAPPER_ARG_OPTIONS = {"-u", "-g", "-n", "-c", "-p", "-s", "-k", "-o", "-e", "-i"}  # sudo/nice/... options taking a value
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish"}
POWER = {"shutdown", "reboot", "halt", "poweroff"}
PROTECTED = {"/", "~", "$HOME", "${HOME}", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64",
             "/opt", "/proc", "/root", "/sbin", "/sys", "/usr", "/var", "/srv", "/mnt", "/Users", "/System"}
RAW_DISK = re.compile(r"^/dev/(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(p\d+)?"
                      r"|mmcblk\d+(p\d+)?|r?disk\d+(s\d+)?|md\d+|dm-\d+|mapper/\S+)$")
FUNC_DEF = re.compile(r"(?:function\s+)?([A-Za-z_:.][\w:.-]*)\s*(?:\(\s*\))?\s*\{(.*?)\}", re.S)
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([\w.-]+)\1")


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
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # unbalanced quotes: bash will refuse it too, but still look at the words
        return re.findall(r"[^\s;&|()<>'\"]+|[;&|()<>]+", text)


def _simple_commands(words: list[str]):
    """(command words, the separator in front of it) for each simple command."""
    current: list[str] = []
    before = ""
    for w in words:
        if w in SEPARATORS or (set(w) <= set(";&|()") and w):
            if current:
                yield current, before
            current, before = [], w
        else:
            current.append(w)
    if current:
        yield current, before


def _unwrap(cmd: list[str]) -> list[str]:
    """Drop assignments and wrapper commands (with their options) in front of the real command."""
    i = 0
    while i < len(cmd):
        word = cmd[i]
        if re.match(r"^[A-Za-z_]\w*=", word):
            i += 1
        elif word == "command" and i + 1 < len(cmd) and cmd[i + 1] in ("-v", "-V"):
            return []               # `command -v x` only looks x up
        elif word.rsplit("/", 1)[-1] in WRAPPERS:
            i += 1
            while i < len(cmd) and cmd[i].startswith("-"):
                i += 2 if cmd[i] in WRAPPER_ARG_OPTIONS else 1
            if word == "timeout" and i < len(cmd):
                i += 1  # the duration
        else:
            break
    return cmd[i:]


def _rm_reason(args: list[str]) -> str | None:
    recursive, targets, options_done = False, [], False
    for a in args:
        if a == "--":
            options_done = True
        elif not options_done and a.startswith("--"):
            recursive |= a == "--recursive"
            if a == "--no-preserve-root":
                return "rm --no-preserve-root"
        elif not options_done and a.startswith("-") and len(a) > 1:
            recursive |= bool(set(a[1:]) & {"r", "R"})
        else:
            targets.append(a)
    for t in targets:
        norm = t.rstrip("/") or "/"
        base = norm[:-2] if norm.endswith("/*") else norm
        if recursive and (norm in PROTECTED or (base or "/") in PROTECTED or norm == "/*"):
            return f"recursive rm of {t}"
    return None


def _check_simple(cmd: list[str], depth: int) -> str | None:
    for i, w in enumerate(cmd[:-1]):
        if w in REDIRECTS and w != "<" and RAW_DISK.match(cmd[i + 1]):
            return f"writing to the raw disk {cmd[i + 1]}"
    cmd = _unwrap([w for i, w in enumerate(cmd) if not (i and cmd[i - 1] in REDIRECTS) and w not in REDIRECTS])
    if not cmd:
        return None
    name, args = cmd[0].rsplit("/", 1)[-1], cmd[1:]
    if name in POWER or (name in {"init", "telinit"} and args[:1] in (["0"], ["6"])) or \
            (name == "systemctl" and set(args) & {"poweroff", "reboot", "halt", "kexec"}):
        return f"{name} would shut down or reboot the machine"
    if name.startswith("mkfs") or name in {"mke2fs", "wipefs"}:
        return f"{name} formats a file system"
    if name == "rm":
        return _rm_reason(args)
    if name == "dd" and any(a.startswith("of=") and RAW_DISK.match(a[3:]) for a in args):
        return "dd onto a raw disk"
    if name in {"tee", "cp", "shred"} and any(RAW_DISK.match(a) for a in args):
        return f"{name} onto a raw disk"
    if name in SHELLS and depth < 3:
        for i, a in enumerate(args[:-1]):
            if a == "<<<" or (a.startswith("-") and not a.startswith("--") and "c" in a[1:]):
                return dangerous_reason(args[i + 1], depth + 1)     # bash -c / -lc / -ec '…', bash <<< '…'
        return None
    if name == "eval" and depth < 3:
        return dangerous_reason(" ".join(args), depth + 1)
    return None


def dangerous_reason(command: str, depth: int = 0) -> str | None:
    """Why `command` is refused, or None if it may run."""
    for m in FUNC_DEF.finditer(command):
        name, body = re.escape(m.group(1)), m.group(2)
        if re.search(rf"(^|[\s;&|]){name}\s*\|\s*{name}($|[\s;&|])", body):
            return "a fork bomb"
    previous: list[str] = []
    for cmd, before in _simple_commands(_words(command)):
        reason = _check_simple(cmd, depth)
        shell_reads_pipe = before in ("|", "|&") and _unwrap(cmd)[:1] and \
            _unwrap(cmd)[0].rsplit("/", 1)[-1] in SHELLS and previous[:1] and previous[0] in ("echo", "printf")
        if not reason and shell_reads_pipe and depth < 3:
            reason = dangerous_reason(" ".join(a for a in previous[1:] if not a.startswith("-")), depth + 1)
        if reason:
            return reason
        previous = _unwrap(cmd)
    return None

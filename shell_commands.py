"""What a shell command line does, as far as approvals need to know: its simple commands, whether
each one only reads, and the prefix an "always allow" would remember. Linear, and conservative:
whatever it cannot analyse (command substitution, subshells, here-documents, very long lines) counts
as something that may change things.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_COMMAND_CHARS = 4000          # longer commands are not analysed: they ask
READ_ONLY_COMMANDS = {
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "printf", "which", "type",
    "file", "stat", "du", "df", "tree", "sort", "cut", "tr", "diff", "cmp", "seq", "whoami", "id", "uname",
    "basename", "dirname", "realpath", "readlink", "true", "false", "nl", "md5sum", "sha1sum", "sha256sum",
    "cksum", "column", "cd", "date", "find", "rg", "git", "uniq", "jq", "test", "[", "hostname", "sleep",
    "printenv", "ps",
}
FORBIDDEN_OPTIONS = {                 # options that make a read-only command write or run something
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "rg": ("--pre",), "sort": ("-o", "--output"), "tree": ("-o",), "date": ("-s", "--set"),
    "git": ("--output", "--ext-diff", "-c", "--exec-path", "--upload-pack", "-O", "--open-files-in-pager"),
    "hostname": ("-F", "--file", "-b", "--boot"),
}
GIT_READ_ONLY = {"status", "diff", "log", "show", "blame", "ls-files", "rev-parse", "describe", "shortlog",
                 "grep", "branch", "tag", "remote"}
GIT_LISTING_ONLY = {"branch", "tag", "remote"}          # read-only only without arguments
SUBCOMMAND_TOOLS = {"git", "npm", "pnpm", "yarn", "cargo", "go", "pip", "pip3", "uv", "poetry", "docker",
                    "kubectl", "make", "dotnet", "mvn", "gradle", "bundle", "rake", "just", "bun", "deno"}
PLAIN_WORD = re.compile(r"^[A-Za-z][\w:.-]*$")
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
OPERATORS = ("&&", "||", ";;", "|&", "&>>", ">>", "&>", ">|", "<>", "<<", "|", "&", ";", "(", ")", "<", ">", "\n")
SEPARATORS = {"&&", "||", ";;", "|&", "|", "&", ";", "\n"}
REDIRECTIONS = {"&>>", ">>", "&>", ">|", "<>", "<", ">"}


@dataclass
class Simple:
    """One simple command: its words, and whether it writes a file by redirection."""
    words: list[str] = field(default_factory=list)
    writes: bool = False


def split_command(command: str) -> list[Simple] | None:
    """The simple commands of a command line, or None when it holds something not worth analysing
    (command or process substitution, subshells, here-documents, unbalanced quotes, great length).
    Linear in the length of the command."""
    if len(command) > MAX_COMMAND_CHARS:
        return None
    out, current, word, in_word, i, n = [], Simple(), [], False, 0, len(command)
    pending_redirect = None

    def end_word():
        nonlocal word, in_word, pending_redirect
        if in_word:
            text = "".join(word)
            if pending_redirect is not None:
                if pending_redirect != "<" and text != "/dev/null" and not text.startswith("&"):
                    current.writes = True
                pending_redirect = None
            else:
                current.words.append(text)
        word, in_word = [], False

    while i < n:
        ch = command[i]
        if ch in " \t":
            end_word()
            i += 1
        elif ch == "\\":
            if i + 1 < n and command[i + 1] != "\n":
                word.append(command[i + 1])
                in_word = True
            i += 2
        elif ch == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            word.append(command[i + 1:end])
            in_word, i = True, end + 1
        elif ch == '"':
            i += 1
            while i < n and command[i] != '"':
                if command[i] == "`" or command.startswith("$(", i):
                    return None
                if command[i] == "\\" and i + 1 < n and command[i + 1] in '"\\$`':
                    i += 1
                word.append(command[i])
                i += 1
            if i >= n:
                return None
            in_word, i = True, i + 1
        elif ch == "`" or command.startswith("$(", i) or command.startswith("<(", i) or command.startswith(">(", i):
            return None
        elif ch == "#" and not in_word:
            end = command.find("\n", i)
            i = n if end < 0 else end
        elif ch in "|&;<>()\n":
            if ch in "<>" and in_word and "".join(word).isdigit():
                word, in_word = [], False          # "2>": the digits are a file descriptor
            end_word()
            op = next(o for o in OPERATORS if command.startswith(o, i))
            i += len(op)
            if op in ("(", ")", "<<"):
                return None
            if op in SEPARATORS:
                if pending_redirect is not None:
                    return None
                if current.words or current.writes:
                    out.append(current)
                current = Simple()
            elif op in REDIRECTIONS:
                if op in (">", "<") and command.startswith("&", i):      # 2>&1, <&0: duplicating a descriptor
                    i += 1
                    while i < n and (command[i].isdigit() or command[i] == "-"):
                        i += 1
                    continue
                pending_redirect = op
        else:
            word.append(ch)
            in_word = True
            i += 1
    end_word()
    if pending_redirect is not None:
        return None
    if current.words or current.writes:
        out.append(current)
    return out


def _forbidden(arg: str, options: tuple) -> bool:
    """Is `arg` one of `options` — also as `--opt=value`, or as a short option inside a cluster (`-ro`)?"""
    for option in options:
        if arg == option or arg.startswith(option + "="):
            return True
        if len(option) == 2 and re.match(rf"^-[A-Za-z]*{re.escape(option[1])}", arg) and not arg.startswith("--"):
            return True
    return False


def read_only(simple: Simple) -> bool:
    words = simple.words
    if simple.writes or not words or ASSIGNMENT.match(words[0]):
        return False
    name, args = words[0], words[1:]
    if name not in READ_ONLY_COMMANDS:
        return False
    if any(_forbidden(a, FORBIDDEN_OPTIONS.get(name, ())) for a in args):
        return False
    if name == "git":
        if not args or args[0] not in GIT_READ_ONLY:
            return False
        return args[0] not in GIT_LISTING_ONLY or len(args) == 1
    if name == "uniq":
        return len([a for a in args if not a.startswith("-")]) <= 1     # a second name is an output file
    return True


def command_prefix(words: list[str]) -> str:
    """What "always allow" remembers for a simple command: its program, plus the subcommand for tools
    that have them (`npm test`, `git commit`, `python -m pytest`, `npm run build`)."""
    if not words:
        return ""
    take = 1
    if words[0] in SUBCOMMAND_TOOLS and len(words) > 1 and PLAIN_WORD.match(words[1]):
        take = 3 if words[1] == "run" and len(words) > 2 and PLAIN_WORD.match(words[2]) else 2
    elif re.fullmatch(r"python[\d.]*", words[0]) and len(words) > 2 and words[1] == "-m":
        take = 3
    return " ".join(words[:take])


def matches(words: list[str], prefix: str) -> bool:
    """Does a command (its words) start with the words of `prefix`? (`npm test` matches `npm test -x`,
    not `npm testing`.)"""
    want = prefix.split()
    return bool(want) and words[:len(want)] == want


def parse_allow_list(text: str) -> tuple[str, ...]:
    return tuple(p for p in (" ".join(part.split()) for part in text.split(",")) if p)

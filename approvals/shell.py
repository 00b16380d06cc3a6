"""A shell command line split into what approvals judge: its simple commands, each one's words, which
words hold an expansion the classifier cannot see through, and whether a redirection could write a
file or reach the network.

    echo "$X" >&2; if grep -q x f; then sort *.txt > /dev/null; fi
    → Simple(["echo", "$X"], opaque=[False, True])     a `$` in a word: its value is not known here
      Simple(["grep", "-q", "x", "f"])                 `if` and `then` are not commands: dropped
      Simple(["sort", "*.txt"], lead_glob=[.., True])  a glob may expand to a name that starts with "-"

Linear, and conservative by construction: what it does not analyse makes it return None and the
caller asks — command and process substitution, subshells and `(( ))`, here-documents, `case`,
function definitions, unbalanced quotes, very long lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_COMMAND_CHARS = 4000          # longer commands are not analysed: they ask
OPERATORS = ("&&", "||", ";;", "|&", "&>>", ">>", "&>", ">|", "<>", "<<", "|", "&", ";", "(", ")", "<", ">", "\n")
SEPARATORS = {"&&", "||", ";;", "|&", "|", "&", ";", "\n"}
OPENERS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"}   # a command follows them
CLOSERS = {"fi", "done", "esac", "}"}                                              # redirections may follow
HEADERS = {"for", "select"}                          # `for NAME in WORDS`: sets a variable, runs nothing
NOT_ANALYSED = {"case", "function", "coproc"}
RESERVED = OPENERS | CLOSERS | HEADERS | NOT_ANALYSED | {"in", "[[", "]]"}
HARMLESS_SINKS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
DUPLICATION = re.compile(r"\d+-?|-")               # >&2, <&0, >&-: an open descriptor, not a file
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
GLOB_START = tuple("*?[")


class _NotAnalysed(Exception):
    pass


@dataclass
class Simple:
    """One simple command. `opaque[i]`: word i holds an expansion ($…, a brace list); `lead_glob[i]`:
    it starts with a glob and may expand to an option; `writes`: a redirection that may create or
    write a file, or reach the network; `header`: the `for NAME in …` of a loop."""
    words: list[str] = field(default_factory=list)
    opaque: list[bool] = field(default_factory=list)
    lead_glob: list[bool] = field(default_factory=list)
    writes: bool = False
    header: bool = False


def _redirect_is_harmless(op: str, target: str, opaque: bool) -> bool:
    if opaque:
        return False
    if op in (">&", "<&") and DUPLICATION.fullmatch(target):
        return True
    if op == "<":
        return "/dev/tcp" not in target and "/dev/udp" not in target and not re.match(r"/+dev/+(tcp|udp)", target)
    return op in (">", ">>", ">|", "&>", "&>>", ">&") and target in HARMLESS_SINKS


class _Splitter:
    def __init__(self):
        self.out: list[Simple] = []
        self.current = Simple()
        self.chars: list[str] = []
        self.bare: list[str] = []          # the word's unquoted characters ("\0" for a quoted one)
        self.in_word = self.quoted = self.opaque = False
        self.pending: str | None = None    # a redirection waiting for its target
        self.after_time = False

    def add(self, text: str, quoted: bool) -> None:
        self.chars.append(text)
        self.bare.append("\0" * len(text) if quoted else text)
        self.in_word = True
        self.quoted |= quoted

    def end_word(self) -> None:
        if not self.in_word:
            return
        text, bare = "".join(self.chars), "".join(self.bare)
        opaque = self.opaque or ("{" in bare and "}" in bare and ("," in bare or ".." in bare))
        quoted = self.quoted
        self.chars, self.bare, self.in_word, self.quoted, self.opaque = [], [], False, False, False
        if self.pending is not None:
            if not _redirect_is_harmless(self.pending, text, opaque):
                self.current.writes = True
            self.pending = None
            return
        at_start = not self.current.words and not quoted and not opaque
        if at_start and self.after_time and text == "-p":
            self.after_time = False
            return
        self.after_time = False
        if at_start and text in NOT_ANALYSED:
            raise _NotAnalysed
        if at_start and text in OPENERS | CLOSERS:
            self.after_time = text == "time"
            return
        if at_start and text in HEADERS:
            self.current.header = True
        self.current.words.append(text)
        self.current.opaque.append(opaque)
        self.current.lead_glob.append(bare.startswith(GLOB_START))

    def end_command(self) -> None:
        if self.current.words or self.current.writes:
            self.out.append(self.current)
        self.current, self.after_time = Simple(), False


def split_command(command: str) -> list[Simple] | None:
    """The simple commands of a command line, or None when it holds something not analysed (see the
    module's docstring). Linear in the length of the command."""
    if len(command) > MAX_COMMAND_CHARS:
        return None
    try:
        return _split(command)
    except _NotAnalysed:
        return None


def _double_quoted(command: str, i: int, s: _Splitter) -> int | None:
    """Add the "…" word part that starts at `i`; the index after its closing quote, or None when it
    cannot be analysed (command substitution, no closing quote)."""
    i, n = i + 1, len(command)
    while i < n and command[i] != '"':
        if command[i] == "`" or command.startswith("$(", i):
            return None
        if command[i] == "$":
            s.opaque = True
        if command[i] == "\\" and i + 1 < n and command[i + 1] in '"\\$`\n':
            i += 1
            if command[i] == "\n":
                i += 1
                continue
        s.add(command[i], True)
        i += 1
    if i >= n:
        return None
    s.add("", True)
    return i + 1


def _operator(command: str, i: int, s: _Splitter) -> int | None:
    """Take the operator at `i` (a separator ends the command, a redirection waits for its target);
    the index after it, or None for what is not analysed (subshells, here-documents, a redirection
    without a target)."""
    ch = command[i]
    if ch in "<>" and s.in_word and not s.quoted and not s.opaque and "".join(s.chars).isdigit():
        s.chars, s.bare, s.in_word = [], [], False      # "2>": the digits are a file descriptor
    s.end_word()
    op = next(o for o in OPERATORS if command.startswith(o, i))
    i += len(op)
    if op in ("(", ")", "<<"):
        return None
    if s.pending is not None:
        return None                                     # a redirection without a target
    if op in SEPARATORS:
        s.end_command()
    else:
        if op in (">", "<") and command.startswith("&", i):   # >&word, <&word
            op += "&"
            i += 1
        s.pending = op
    return i


def _split(command: str) -> list[Simple] | None:
    s, i, n = _Splitter(), 0, len(command)
    while i < n:
        ch = command[i]
        if ch in " \t":
            s.end_word()
            i += 1
        elif ch == "\\":
            if i + 1 < n and command[i + 1] != "\n":
                s.add(command[i + 1], True)
            elif i + 1 >= n:
                s.add("\\", True)
            i += 2
        elif ch == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            s.add(command[i + 1:end], True)
            i = end + 1
        elif ch == '"':
            i = _double_quoted(command, i, s)
            if i is None:
                return None
        elif ch == "`" or command.startswith(("$(", "<(", ">("), i):
            return None
        elif ch == "$":
            s.opaque = True
            s.add("$", False)
            i += 1
        elif ch == "#" and not s.in_word:
            end = command.find("\n", i)
            i = n if end < 0 else end
        elif ch in "|&;<>()\n":
            i = _operator(command, i, s)
            if i is None:
                return None
        else:
            s.add(ch, False)
            i += 1
    s.end_word()
    if s.pending is not None:
        return None
    s.end_command()
    return s.out


def parse_allow_list(text: str) -> tuple[str, ...]:
    return tuple(p for p in (" ".join(part.split()) for part in text.split(",")) if p)

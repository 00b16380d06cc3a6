"""Options as programs read them: which words of a command are options, and whether each is known.

    Opts(flags="rn", valued="kt", long={"reverse", "key", "format="}, attached="I")

`flags` are short options without a value; `valued` ones take the rest of the word, or the next word,
as their value (getopt's rule: `-k2` and `-k 2`); `attached` ones take only the rest of the word
(an optional value: `-Iseconds`, `-uno`); `long` are long options, matched exactly — a name
ending in "=" must carry its value (`--format=%h`), so the value can be checked. Anything else that
looks like an option is unknown, and an unknown option is never taken for a harmless one.

`forbidden_option(word, long, short)` is the other direction, for commands that are allowed but have a
few dangerous options: GNU getopt and git accept any unambiguous prefix of a long option (`--outp` is
`--output`), so every prefix of a forbidden long option is forbidden too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Opts:
    flags: str = ""
    valued: str = ""
    long: frozenset | set = frozenset()                    # made a frozenset
    numbers: bool = False                                   # -5 (a count) is an option too
    value_ok: Callable[[str, str], bool] | None = None      # (option, attached value) → harmless?
    attached: str = ""

    def __post_init__(self):
        object.__setattr__(self, "long", frozenset(self.long))


def option_words(words: list[str], lead_glob: list[bool] | None = None, stop_at_operand: bool = False):
    """(index, word) of each word that may be an option: up to `--`, and (for programs that stop
    there) up to the first operand. A word that starts with a glob may become an option: it is
    yielded as "*"."""
    globs = lead_glob or [False] * len(words)
    for i, (word, glob) in enumerate(zip(words, globs)):
        if word == "--":
            return
        if glob:
            yield i, "*"
        elif word.startswith("-") and word != "-":
            yield i, word
        elif stop_at_operand:
            return


def known_option(word: str, spec: Opts) -> str | None:
    """How `word` is read under `spec`: "flag" (nothing follows), "next" (the next word is its value),
    or None: not an option known to be harmless."""
    if word == "*":
        return None
    if word.startswith("--"):
        name, eq, value = word[2:].partition("=")
        if name in spec.long:
            return "flag" if not spec.value_ok or spec.value_ok(name, value) else None
        if eq and name + "=" in spec.long:
            return "flag" if not spec.value_ok or spec.value_ok(name, value) else None
        return None
    if spec.numbers and word[1:].isdigit():
        return "flag"
    for j, letter in enumerate(word[1:], 1):
        if letter in spec.valued or letter in spec.attached:
            value = word[j + 1:]
            if spec.value_ok and value and not spec.value_ok(letter, value):
                return None
            return "flag" if value or letter in spec.attached else "next"
        if letter not in spec.flags:
            return None
    return "flag"


def options_known(words: list[str], lead_glob: list[bool], spec: Opts, stop_at_operand: bool = False) -> bool:
    """Is every option among `words` known to `spec`?"""
    return all(known_option(word, spec) for _, word in option_words(words, lead_glob, stop_at_operand))


def forbidden_option(word: str, long: frozenset, short: str, exact_ok: frozenset = frozenset()) -> bool:
    """Is `word` one of these options, or could a program read it as one (an abbreviation, a short
    option inside a cluster)?"""
    if word == "*":
        return True
    if word.startswith("--"):
        name = word[2:].partition("=")[0]
        return bool(name) and name not in exact_ok and any(option.startswith(name) for option in long)
    return word.startswith("-") and any(letter in short for letter in word[1:])

"""Who a simple command really runs, and what "always allow" may remember for it.

    unwrap(words)            `timeout 60 nice -n 5 pytest -q` → `pytest -q`: wrappers are seen through
                             (their own options must be known); None for one that cannot be
                             (`sudo`, `sh -c`, `env NAME=value`, `watch`, an unknown option), and for
                             a wrapper with no command after one that takes open arguments (`xargs env`,
                             `xargs timeout 5`, `xargs xargs`: the program itself arrives at run time). A
                             wrapper is known by its bare name: `tools/timeout` or `./env` is a
                             program of the repository, judged (and asked about) as itself
    command_prefix(words)    `npm test`, `git commit`, `python -m pytest`, `bash build.sh`; "" when
                             nothing should be remembered (`python -c …`)
    dangerous(words, n)      an allowed command (its prefix is `n` words) with an option known to make
                             it write elsewhere or run other code (`git diff --output`, `pytest -p`)

Reserved words and wrappers are never remembered: "always allow `for`" or "`xargs`" would allow
every loop or every command.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from approvals.options import Opts, forbidden_option, known_option
from approvals.shell import RESERVED

ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")

MAX_WRAPPERS = 8


@dataclass(frozen=True)
class Wrapper:
    """A program that runs the command written after its options (and `operands` more words)."""
    opts: Opts
    operands: int = 0             # words between its options and the command (timeout's duration)
    seen_through: bool = True     # the policy judges the command it runs; False: what it runs always asks


# The one table of wrappers, for the policy and the guard. A long option with a value must carry it
# (`--signal=KILL`) for the policy: `--signal KILL` would hide the command, so it is unknown and asks.
WRAPPERS = {
    "timeout": Wrapper(Opts("v", "sk", {"signal=", "kill-after=", "preserve-status", "foreground", "verbose"}), 1),
    "nice": Wrapper(Opts("", "n", {"adjustment="}, numbers=True)),
    "nohup": Wrapper(Opts()),
    "stdbuf": Wrapper(Opts("", "ioe", {"input=", "output=", "error="})),
    "env": Wrapper(Opts("i0v", "uC", {"ignore-environment", "null", "unset=", "chdir=", "debug"})),
    "command": Wrapper(Opts("p")),
    "builtin": Wrapper(Opts()),
    "exec": Wrapper(Opts("cl", "a")),
    "time": Wrapper(Opts("pvaq", "f", {"portability", "verbose", "append", "quiet", "format="})),  # GNU time, no -o
    "xargs": Wrapper(Opts("0rtx", "adEILnPs", {"null", "no-run-if-empty", "verbose", "exit", "arg-file=",
                                               "delimiter=", "max-lines=", "max-args=", "max-procs=", "max-chars=",
                                               "replace="})),
    "ionice": Wrapper(Opts("t", "cn", {"class=", "classdata=", "ignore"})),
    "setsid": Wrapper(Opts("cfw", "", {"ctty", "fork", "wait"})),
    "sudo": Wrapper(Opts("AbEeHiKklnPSsV", "ughpCDrtUT", {"user=", "group=", "host=", "prompt=", "chdir=",
                                                          "close-from=", "role=", "type=", "other-user=",
                                                          "login", "shell", "preserve-env"}), 0, False),
    "doas": Wrapper(Opts("ns", "uC"), 0, False),
    "pkexec": Wrapper(Opts("", "", {"user=", "disable-internal-agent", "keep-cwd"}), 0, False),
    "unbuffer": Wrapper(Opts("p"), 0, False),
    "chronic": Wrapper(Opts("ev"), 0, False),
    "busybox": Wrapper(Opts(), 0, False),               # `busybox rm …`, `busybox sh -c …`
    "flock": Wrapper(Opts("sxunoFe", "wEc", {"timeout=", "conflict-exit-code="}), 1, False),
    "taskset": Wrapper(Opts("apc", "", {"all-tasks", "pid", "cpu-list"}), 1, False),
    "chroot": Wrapper(Opts("", "", {"userspec=", "groups=", "skip-chdir"}), 1, False),
    "strace": Wrapper(Opts("fFcCwrtTvVxyqzZkiDn", "oepsuaEIbXSP"), 0, False),
}
OPEN_ARGUMENTS = {"xargs"}          # the command gets more arguments from its input
NOT_SEEN_THROUGH = {name for name, w in WRAPPERS.items() if not w.seen_through} | {
    "su", "run0", "eval", "source", ".", "watch", "nsenter", "unshare", "chrt", "parallel", "script", "ltrace", "gdb",
    "valgrind", "ssh", "fakeroot", "firejail", "caffeinate"}
# The one table of shells: the guard looks into their -c strings, the policy asks about them.
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "ash", "yash"}
NEVER_REMEMBERED = RESERVED | set(WRAPPERS) | NOT_SEEN_THROUGH | SHELLS | {
    "[", "test", ":", "let", "declare", "typeset", "local", "export", "readonly", "alias", "set", "shopt", "trap",
    "unset", "hash", "enable", "mapfile", "readarray", "read", "printf", "echo", "true", "false", "cd"}
SUBCOMMAND_TOOLS = {"git", "npm", "pnpm", "yarn", "cargo", "go", "pip", "pip3", "uv", "poetry", "docker", "kubectl",
                    "make", "dotnet", "mvn", "gradle", "bundle", "rake", "just", "bun", "deno", "npx", "bunx",
                    "pnpx", "uvx", "pipx", "hatch", "pdm", "pipenv", "conda", "brew", "apt", "apt-get", "systemctl"}
INTERPRETERS = re.compile(r"(python[\d.]*|py|node|perl|ruby|php|lua|Rscript|" + "|".join(SHELLS) + ")")
PLAIN_WORD = re.compile(r"^[A-Za-z][\w:.-]*$")
SCRIPT_WORD = re.compile(r"^[\w./-]+$")
PROGRAM_WORD = re.compile(r"^[A-Za-z_./][\w.+/-]*$")

# options of allowed programs that write elsewhere, run other code or reach elsewhere: (long, short)
DANGEROUS = {
    "git": ({"output", "output-directory", "ext-diff", "textconv", "exec-path", "open-files-in-pager", "upload-pack",
             "receive-pack", "exec", "config-env", "template", "extcmd", "git-dir", "work-tree"}, "cO"),
    "pytest": ({"basetemp", "rootdir", "config-file", "confcutdir", "override-ini", "junitxml", "junit-xml",
                "pastebin", "pdbcls", "debug", "log-file", "report-log", "result-log", "resultlog", "cov-report",
                "html", "tx", "rsyncdir", "plugins"}, "pco"),
    "npm": ({"script-shell", "node-options", "userconfig", "globalconfig", "prefix", "onload-script", "cache"}, ""),
    "cargo": ({"config", "manifest-path"}, "Z"),
    "make": ({"file", "makefile", "eval", "include-dir"}, "fEI"),
}
DANGEROUS["pnpm"] = DANGEROUS["yarn"] = DANGEROUS["npm"]
DANGEROUS_EXACT_OK = {"pytest": {"co"}}
DANGEROUS_GIT = {"rebase": "x", "difftool": "xt", "clone": "u", "fetch": "", "pull": "", "ls-remote": "u",
                 "archive": "o", "format-patch": "o", "bisect": ""}


def unwrap(words: list[str], lead_glob: list[bool]) -> tuple[list[str], list[bool], bool] | None:
    """(words, lead_glob, open_arguments) of the command a chain of wrappers runs; None when a wrapper
    cannot be seen through."""
    open_arguments = False
    for _ in range(MAX_WRAPPERS):
        name = words[0] if words else ""        # by bare name only: `tools/timeout` is the repository's own
        if name in NOT_SEEN_THROUGH:
            return None
        if name not in WRAPPERS:
            return words, lead_glob, open_arguments
        spec, operands = WRAPPERS[name].opts, WRAPPERS[name].operands
        i = 1
        while i < len(words) and words[i].startswith("-") and words[i] != "-":
            if words[i] == "--":
                i += 1
                break
            if lead_glob[i] or (name == "command" and words[i] in ("-v", "-V")):
                return None
            how = known_option(words[i], spec)
            if how is None:
                return None
            i += 2 if how == "next" else 1
        if name == "env" and i < len(words) and ASSIGNMENT.match(words[i]):
            return None
        if any(lead_glob[1:i + operands]) or i + operands > len(words):
            return None
        if open_arguments and i + operands == len(words):
            return None         # `xargs env`, `xargs nice`: its program is among the arguments that arrive at run time
        open_arguments |= name in OPEN_ARGUMENTS
        words, lead_glob = words[i + operands:], lead_glob[i + operands:]
    return None


def tool_name(words: list[str]) -> str:
    """The program an allowed command line runs: `python -m pytest` → pytest, `uv run pytest` → pytest."""
    for _ in range(3):
        if len(words) > 2 and INTERPRETERS.fullmatch(os.path.basename(words[0])) and words[1] == "-m":
            return words[2]
        if len(words) > 2 and words[0] in ("uv", "poetry", "pdm", "hatch", "pipenv") and words[1] == "run":
            words = words[2:]
            continue
        if len(words) > 1 and words[0] in ("npx", "bunx", "pnpx", "uvx"):
            words = words[1:]
            continue
        break
    return os.path.basename(words[0]) if words else ""


def dangerous(words: list[str], lead_glob: list[bool], taken: int, open_arguments: bool) -> bool:
    """Does this allowed command (its first `taken` words matched the prefix) carry an option that makes
    it write elsewhere or run other code? Arguments that arrive later (xargs) could be anything."""
    tool = tool_name(words)
    if tool not in DANGEROUS:
        return False
    if open_arguments:
        return True
    long, short = DANGEROUS[tool]
    if tool == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        short += DANGEROUS_GIT.get(sub, "")
    exact_ok = DANGEROUS_EXACT_OK.get(tool, set())
    for word, glob in zip(words[taken:], lead_glob[taken:]):
        if word == "--":
            break
        if forbidden_option("*" if glob else word, frozenset(long), short, frozenset(exact_ok)):
            return True
    return False


def command_prefix(words: list[str]) -> str:
    """What "always allow" remembers for a command (already unwrapped): its program, plus the subcommand
    for tools that have them, or the script an interpreter runs; "" when nothing should be."""
    if not words or not PROGRAM_WORD.match(words[0]):
        return ""
    name = os.path.basename(words[0])
    if INTERPRETERS.fullmatch(name):
        if len(words) > 2 and words[1] == "-m" and PLAIN_WORD.match(words[2]):
            return " ".join(words[:3])
        if len(words) > 1 and SCRIPT_WORD.match(words[1]) and not words[1].startswith("-"):
            return " ".join(words[:2])
        return ""                        # code on the command line (-c), or read from the input
    if words[0] in NEVER_REMEMBERED or name in NEVER_REMEMBERED:
        return ""
    take = 1
    if words[0] in SUBCOMMAND_TOOLS and len(words) > 1 and PLAIN_WORD.match(words[1]):
        take = 3 if words[1] in ("run", "exec") and len(words) > 2 and PLAIN_WORD.match(words[2]) else 2
    return " ".join(words[:take])


def matches(words: list[str], prefix: str) -> bool:
    """Does a command (its words) start with the words of `prefix`? (`npm test` matches `npm test -x`,
    not `npm testing`.)"""
    want = prefix.split()
    return bool(want) and words[:len(want)] == want

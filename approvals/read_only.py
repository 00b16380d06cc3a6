"""Which simple commands only read: they run without a question in the default mode.

A command is read-only only if all of this holds (anything else asks):
  - no word holds an expansion the classifier cannot see through (`$…`, a brace list), and no
    redirection could write a file or reach the network (`writes`): an output goes only to
    /dev/null (`/dev/stdout`, `/dev/stderr`, `/proc/*/fd/*`, `/dev/fd/*` are files: bash reopens
    what the descriptor names, for writing) or to another descriptor (`2>&1`), an input comes only
    into descriptor 0 (`1<f`, `2<f`, `3<>f`, `exec 1<f` open a file where output goes);
  - a program whose operands can be outputs (OUTPUT_OPERANDS: uniq writes its second one) gets no
    glob among its words: `uniq u/?.txt` may become `uniq u/a.txt u/b.txt`;
  - the program is in READ_ONLY (after wrappers such as `timeout` are seen through), and every
    option it is given is known to be harmless for that program — an allowlist, so an option added
    to GNU or git tomorrow, or an abbreviation (`sort --outp`), is unknown and asks;
  - for git, the subcommand reads, and its options cannot make git run a program given on the command
    line (`--ext-diff`, `--textconv`, `-O`, `%G` formats that run gpg): the programs a repository's
    own `.git/config` names are trusted as git trusts them, and file tools ask before changing it.

ANY marks programs none of whose options write, execute or connect: their options are not checked.
"""

from __future__ import annotations

import re

import posixpath

from approvals.options import Opts, option_words, options_known
from approvals.wrappers import unwrap
from approvals.shell import OUTPUT_OPS, Redirect, Simple

ANY = "any"
LOOP_VARIABLE = re.compile(r"[a-z_][a-z0-9_]*")      # lowercase: never one of bash's special variables
HARMLESS = {"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "which", "type", "stat",
            "du", "df", "cut", "tr", "diff", "cmp", "comm", "seq", "whoami", "id", "uname", "basename", "dirname",
            "realpath", "readlink", "true", "false", "nl", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum",
            "column", "cd", "sleep", "printenv", "ps", "rev", "tac", "paste", "fold", "expand", "od", "strings"}


def _git_format_ok(option: str, value: str) -> bool:
    return "%G" not in value                          # %G? and friends verify signatures: they run gpg


def _long(*names: str) -> set:
    return {n for group in names for n in group.split()}


DIFF_LONG = _long(
    "patch no-patch raw patch-with-raw stat stat= numstat shortstat dirstat dirstat= summary name-only name-status",
    "compact-summary patch-with-stat abbrev abbrev= full-index binary find-renames find-renames= find-copies",
    "find-copies= find-copies-harder irreversible-delete diff-filter= pickaxe-all pickaxe-regex relative relative=",
    "text ignore-space-change ignore-all-space ignore-blank-lines ignore-space-at-eol ignore-cr-at-eol",
    "function-context word-diff word-diff= word-diff-regex= color color= no-color color-words color-words=",
    "color-moved color-moved= no-renames minimal patience histogram diff-algorithm= anchored= inter-hunk-context=",
    "src-prefix= dst-prefix= no-prefix default-prefix exit-code quiet check ws-error-highlight= no-ext-diff",
    "no-textconv submodule submodule= ignore-submodules ignore-submodules= stat-width= stat-count= unified=",
    "indent-heuristic no-indent-heuristic ignore-matching-lines= rename-empty no-rename-empty")
LOG_LONG = _long(
    "max-count= skip= since= after= until= before= author= committer= grep= all-match invert-grep",
    "regexp-ignore-case extended-regexp fixed-strings basic-regexp merges no-merges first-parent all branches",
    "branches= tags tags= remotes remotes= not oneline format= pretty pretty= abbrev-commit no-abbrev-commit",
    "decorate decorate= no-decorate source graph reverse date= relative-date follow left-right cherry-pick",
    "cherry-mark boundary topo-order date-order author-date-order full-history simplify-by-decoration",
    "ancestry-path no-walk walk-reflogs mailmap use-mailmap no-mailmap notes no-notes parents children",
    "count full-diff diff-merges= no-diff-merges expand-tabs no-expand-tabs encoding= log-size no-color")
DIFF_SHORT, DIFF_VALUED, DIFF_ATTACHED = "psuzabwWRD123", "UlSG", "MCB"
GIT = {
    "status": Opts("sbvz", "", _long("short branch show-stash porcelain porcelain= long verbose untracked-files",
                                      "untracked-files= ignore-submodules ignore-submodules= ignored ignored= column",
                                      "column= no-column ahead-behind no-ahead-behind renames no-renames",
                                      "find-renames find-renames= null"), attached="u"),
    "diff": Opts(DIFF_SHORT, DIFF_VALUED, DIFF_LONG | _long("cached staged merge-base no-index ours theirs base"),
                 attached=DIFF_ATTACHED),
    "log": Opts(DIFF_SHORT + "mgiEFP", DIFF_VALUED + "n", DIFF_LONG | LOG_LONG, True, _git_format_ok, DIFF_ATTACHED),
    "show": Opts(DIFF_SHORT + "m", DIFF_VALUED + "n", DIFF_LONG | LOG_LONG, True, _git_format_ok, DIFF_ATTACHED),
    "shortlog": Opts("nsec", "", LOG_LONG | _long("numbered summary email committer group="), True, _git_format_ok),
    "blame": Opts("ltsewfnpc", "L", _long("root show-stats porcelain line-porcelain incremental show-name",
                                           "show-number show-email date= since= ignore-rev= ignore-revs-file=",
                                           "color-lines color-by-age abbrev= no-textconv reverse= first-parent"),
                  attached="MC"),
    "ls-files": Opts("cdmoiskuvftz", "xX", _long("cached deleted modified others ignored stage unmerged killed",
                                                "exclude= exclude-from= exclude-per-directory= exclude-standard",
                                                "error-unmatch full-name recurse-submodules abbrev abbrev= eol",
                                                "deduplicate directory no-empty-directory format= sparse")),
    "rev-parse": Opts("q", "", _long("abbrev-ref abbrev-ref= short short= verify quiet symbolic symbolic-full-name",
                                     "show-toplevel show-prefix show-cdup git-dir git-common-dir absolute-git-dir",
                                     "is-inside-work-tree is-inside-git-dir is-bare-repository is-shallow-repository",
                                     "show-superproject-working-tree all branches tags remotes revs-only no-revs",
                                     "flags no-flags sq show-object-format path-format= default")),
    "describe": Opts("", "", _long("tags all long abbrev= always exact-match contains candidates= match= exclude=",
                                   "first-parent")),           # not --dirty: it rewrites the index
    "grep": Opts("iIwvnlLchHEFGPqoaWpz", "efmABC", _long(
        "cached untracked no-index recurse-submodules max-depth= full-name name-only files-with-matches",
        "files-without-match count break heading show-function function-context context= after-context=",
        "before-context= and or not all-match color color= no-color line-number column only-matching null",
        "threads= exclude-standard no-exclude-standard ignore-case word-regexp invert-match text no-textconv",
        "max-count= extended-regexp fixed-strings basic-regexp perl-regexp quiet")),
    "branch": Opts("arvl", "", _long("all remotes verbose list show-current no-color color color= column column=",
                                     "no-column sort= contains= no-contains= merged= no-merged= points-at= format=",
                                     "abbrev= ignore-case")),
    "tag": Opts("li", "", _long("list sort= contains= no-contains= merged= no-merged= points-at= column column=",
                                 "no-column format= color color= ignore-case"), attached="n"),
    "remote": Opts("v", "", {"verbose"}),
}
GIT_LISTING = {"branch", "tag", "remote"}                 # an operand would create or change something
GIT_GLOBAL = {"--no-pager": 1, "-P": 1, "--no-optional-locks": 1, "--literal-pathspecs": 1, "-C": 2}


def _git(args: list[str], globs: list[bool]) -> bool:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        step = GIT_GLOBAL.get(args[i])
        if step is None or i + step > len(args) or any(globs[i:i + step]):
            return False
        i += step
    if i >= len(args) or args[i] not in GIT:
        return False
    sub, rest, rest_globs = args[i], args[i + 1:], globs[i + 1:]
    if not options_known(rest, rest_globs, GIT[sub]):
        return False
    if sub in GIT_LISTING:
        operands = [w for w in rest if not w.startswith("-")]
        return not operands or (sub == "tag" and ("-l" in rest or "--list" in rest)) or \
            (sub == "branch" and ("-l" in rest or "--list" in rest))
    return True


FIND_FLAGS = set(("-print -print0 -ls -prune -quit -empty -nouser -nogroup -depth -d -follow -xdev -mount -readable "
                  "-writable -executable -true -false -not -and -or -a -o -daystart -noleaf -ignore_readdir_race "
                  "-noignore_readdir_race -warn -nowarn -H -L -P").split())
FIND_VALUED = set(("-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype -size "
                   "-newer -anewer -cnewer -mtime -mmin -atime -amin -ctime -cmin -user -group -uid -gid -perm "
                   "-links -inum -samefile -maxdepth -mindepth -lname -ilname -fstype -used -printf -D").split())
NEWER_XY = re.compile(r"-newer[aBcmt][aBcmt]")       # -newermt DATE and its kin
OPTIMISE = re.compile(r"-O\d")


def _find(args: list[str], globs: list[bool]) -> bool:
    """find's expression: every primary known (none that deletes, writes a file or runs a command)."""
    i = 0
    while i < len(args):
        word = args[i]
        if globs[i]:
            return False
        if word.startswith("-") and word != "-":
            if word in FIND_VALUED or NEWER_XY.fullmatch(word):
                i += 2
                continue
            if word not in FIND_FLAGS and not OPTIMISE.fullmatch(word):
                return False
        i += 1
    return True


TEST_OPERATORS = set(("-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S -z -n -o -eq -ne -lt -le -gt "
                      "-ge -nt -ot -ef").split())        # not -v or -R: they evaluate array subscripts


def _test(args: list[str], globs: list[bool]) -> bool:
    return not any(globs) and all(not w.startswith("-") or w in TEST_OPERATORS or w[1:].isdigit() for w in args)


def _printf(args: list[str], globs: list[bool]) -> bool:
    return bool(args) and not args[0].startswith("-") and not globs[0]      # printf -v NAME assigns (and evaluates)


def _with(spec: Opts, check=None):
    def rule(args: list[str], globs: list[bool]) -> bool:
        return options_known(args, globs, spec) and (check is None or check(args))
    return rule


def _operands(args: list[str], spec: Opts) -> list[str]:
    """The words that are not options or their values."""
    skip: set[int] = set()
    for i, word in option_words(args):
        skip.add(i)
        if word.startswith("-") and not word.startswith("--") and word[-1] in spec.valued:
            skip.add(i + 1)
    end = args.index("--") if "--" in args else len(args)
    return [w for i, w in enumerate(args) if i not in skip and i != end]


UNIQ = Opts("cdDiuz", "fsw", _long("count repeated all-repeated all-repeated= skip-fields= ignore-case skip-chars=",
                                   "unique zero-terminated check-chars= group group="))
DATE = Opts("uR", "dfr", _long("utc universal rfc-email rfc-2822 iso-8601 iso-8601= rfc-3339= date= file=",
                                "reference= debug resolution"), attached="I")
HOSTNAME = Opts("aAdfiIsy", "", _long("fqdn long short alias ip-address all-ip-addresses all-fqdns domain nis yp"))
READ_ONLY = {
    **{name: ANY for name in HARMLESS},
    "git": _git, "find": _find, "test": _test, "[": _test, "printf": _printf,
    "sort": _with(Opts("bdfgiMhnRrsuVcCmz", "ktS", _long(
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort",
        "human-numeric-sort numeric-sort random-sort reverse version-sort key= field-separator= stable unique",
        "zero-terminated check check= merge buffer-size= parallel= debug sort= files0-from= random-source="))),
    "uniq": _with(UNIQ, lambda args: len(_operands(args, UNIQ)) <= 1),          # a second operand is written
    "date": _with(DATE, lambda args: all(w.startswith("+") for w in _operands(args, DATE))),   # else it sets
    "hostname": _with(HOSTNAME, lambda args: not _operands(args, HOSTNAME)),                     # else it sets
    "tree": _with(Opts("adlfxiqNQpugshDFvtcUrnCASJX", "LPI", _long(
        "gitignore ignore-case matchdirs prune filelimit filelimit= dirsfirst filesfirst noreport charset charset=",
        "du si timefmt timefmt= sort= info metafirst inodes device noreport")), None),
    "file": _with(Opts("bcdEhiklLNnrsSvzZ0", "eFfmP", _long(
        "brief mime mime-type mime-encoding dereference no-dereference extension apple keep-going list raw",
        "special-files uncompress uncompress-noreport no-buffer no-pad print0 separator= files-from=",
        "magic-file= exclude= exclude-quiet= parameter= debug"))),
    "rg": _with(Opts("iSswxvnNlcFuHILaqoUP0.hbp", "ABCemgtTrjEdfM", _long(
        "ignore-case smart-case case-sensitive word-regexp line-regexp invert-match line-number no-line-number",
        "files-with-matches files-without-match count count-matches fixed-strings unrestricted with-filename",
        "no-filename follow text quiet only-matching multiline multiline-dotall pcre2 null hidden no-ignore",
        "no-ignore-vcs no-ignore-dot no-ignore-parent no-ignore-global no-ignore-files glob= iglob= type= type-not=",
        "type-list files json vimgrep column no-heading heading color= colors= max-count= max-depth= context=",
        "before-context= after-context= regexp= file= replace= sort= sortr= stats trim max-filesize= binary",
        "no-messages encoding= engine= passthru max-columns= max-columns-preview one-file-system threads=",
        "glob-case-insensitive byte-offset pretty no-config crlf null-data line-buffered block-buffered"))),
    "jq": _with(Opts("rjcnesaSCMR", "fL", _long(
        "raw-output join-output compact-output null-input exit-status slurp ascii-output sort-keys color-output",
        "monochrome-output raw-input tab indent arg argjson slurpfile rawfile args jsonargs from-file seq stream",
        "stream-errors raw-output0 unbuffered"))),
}


DEV_NULL = "/dev/null"
NETWORK = re.compile(r"/dev/(tcp|udp)(/|$)")
DESCRIPTOR = re.compile(r"\d+|-")
OUTPUT_OPERANDS = {       # programs an operand of which may be a file they write (or a setting they change)
    "uniq", "sort", "tee", "cp", "mv", "ln", "install", "dd", "split", "csplit", "rsync", "scp", "tar", "zip",
    "unzip", "gzip", "gunzip", "bzip2", "xz", "zstd", "patch", "touch", "truncate", "shred", "mkdir", "rmdir", "rm",
    "chmod", "chown", "chgrp", "date", "hostname", "sed", "perl", "awk", "curl", "wget", "ed", "ex", "join", "pr"}


def _harmless(r: Redirect) -> bool:
    target = r.target.text if r.target is not None and r.target.literal else None
    if r.op in ("<&-", ">&-"):
        return True
    if r.op in OUTPUT_OPS:
        return target == DEV_NULL
    if r.op == ">&":
        return target is not None and (DESCRIPTOR.fullmatch(target) is not None or target == DEV_NULL)
    if r.op in ("<", "<&") and r.fd in (None, 0) and target is not None:
        if r.op == "<&":
            return DESCRIPTOR.fullmatch(target) is not None
        return "/dev/tcp" not in target and "/dev/udp" not in target and \
            not NETWORK.match(posixpath.normpath("/" + target.lstrip("/")))
    return False                      # <>, input onto a descriptor >= 1, here-documents and strings


def writes(simple: Simple) -> bool:
    """Does a redirection of this command (or of the block around it) do more than read a file into
    descriptor 0, send output to /dev/null or join descriptors?"""
    return not all(_harmless(r) for r in simple.redirects)


def glob_among_outputs(program: str, simple: Simple) -> bool:
    """A glob among the words of a program that may write an operand: its expansion chooses the files."""
    return program in OUTPUT_OPERANDS and any(simple.glob)


def read_only(simple: Simple) -> bool:
    if writes(simple) or any(simple.opaque) or not simple.words or simple.assignments:
        return False
    words, globs = simple.words, simple.lead_glob
    if simple.header:
        return len(words) > 1 and bool(LOOP_VARIABLE.fullmatch(words[1]))
    if words[0] == "command" and len(words) > 1 and words[1] in ("-v", "-V"):
        return True                                       # a lookup: it names the program, runs nothing
    seen = unwrap(words, globs)
    if seen is None:
        return False
    words, globs, open_arguments = seen
    if not words:
        return True
    if glob_among_outputs(words[0], simple):
        return False
    rule = READ_ONLY.get(words[0])
    if rule is None or (open_arguments and rule is not ANY):
        return False                                      # more arguments arrive from the input: any option
    return rule is ANY or rule(words[1:], globs[1:])

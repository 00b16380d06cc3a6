"""Attacks on the approval policy: commands that pass for read-only (or for an allowed prefix) but
write files, run code or reach the network; "always" answers that remember too much; file writes
that make a later read-only command run code.

Every hostile command here is first run for real in a scratch folder, to show the attack works
(the test would mean nothing otherwise); then the policy must ask about it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from approvals.policy import Answer, Approvals, parse_allow_list, split_command

ATTACKS = [          # (command, what it leaves behind when run: a file name, or "net" for a connection)
    ("test -v 'a[$(touch pwn)]'", "pwn"),
    ("[ -v 'a[$(touch pwn)]' ]", "pwn"),
    ("printf -v 'b[$(touch pwn)]' x", "pwn"),
    ("printf -v x %s '$(touch pwn)'; echo ${x@P}", "pwn"),
    ("echo planted >&pwn", "pwn"),
    ("echo planted >& pwn", "pwn"),
    ("echo planted 1>&pwn", "pwn"),
    ("find . -maxdepth 0 {-exec,} touch pwn ';'", "pwn"),
    ("find . -maxdepth 0 -exe${U}c touch pwn \\;", "pwn"),
    ("find keep -de${U}lete", "-keep"),
    ("echo planted | sort --outp=pwn", "pwn"),
    ("echo planted | sort --out=pwn", "pwn"),
    ("echo planted | sort -S 1K --compress-program=./evil.sh -", None),
    ("git grep --open-files-in-pag='touch pwn;' planted", "pwn"),
    ("git diff --output=pwn", "pwn"),
    ("git log -1 --output=pwn", "pwn"),
    ("cat README >&/dev/tcp/127.0.0.1/PORT", "net"),
    ("cat README > /dev/tcp/127.0.0.1/PORT", "net"),
    ("cat < /dev/tcp/127.0.0.1/PORT", "net"),
    ("echo x >> pwn", "pwn"),
    ("echo x &>pwn", "pwn"),
    ("echo x 2>pwn", "pwn"),
    ("cat README <>pwn", "pwn"),
    ("echo planted | uniq - pwn", "pwn"),
    ("tree -o pwn", None),
    ("function cat { touch pwn; }; cat README", "pwn"),
    ("ls | xargs touch pwn", "pwn"),
    ("echo pwn | xargs sort --output=pwn2", None),
    ("timeout 5 touch pwn", "pwn"),
    ("command touch pwn", "pwn"),
    ("if true; then touch pwn; fi", "pwn"),
    ("{ echo x; } > pwn", "pwn"),
    ("for f in README; do echo $f; done > pwn", "pwn"),
    ("echo {a,b} > /dev/null; touch pwn", "pwn"),
    ("git -c core.pager='touch pwn' -p log -1", None),
    ("git branch pwn && ls .git/refs/heads/pwn", None),
    ("git tag pwn && ls .git/refs/tags/pwn", None),
    ("echo $'\\x41' > pwn", "pwn"),
    ("[[ 'a[$(touch pwn)]' -eq 1 ]]", "pwn"),
    ("env touch pwn", "pwn"),
    ("exec touch pwn", "pwn"),
    # the program itself arrives at run time: a wrapper with no command after xargs
    ("echo touch pwn | xargs env", "pwn"),
    ("echo touch pwn | xargs nice", "pwn"),
    ("echo touch pwn | xargs timeout 5", "pwn"),
    ("echo touch pwn | xargs nohup", "pwn"),
    ("echo touch pwn | xargs setsid -w", "pwn"),
    ("echo touch pwn | xargs stdbuf -oL", "pwn"),
    ("echo touch pwn | xargs -n 2 env -u X", "pwn"),
    ("echo touch pwn | xargs xargs", "pwn"),
    ("printf 'touch\\0pwn' | xargs -0 -r env --", "pwn"),
    # attack review (issue 28): wrapper chains around xargs, and the ones never seen through
    ("echo touch pwn | nice -n 5 xargs env", "pwn"),
    ("echo touch pwn | timeout -s KILL 5 xargs env", "pwn"),
    ("echo touch pwn | ionice -c3 xargs nice", "pwn"),
    ("echo touch pwn | xargs -L1 -P2 env", "pwn"),
    ("echo pwn | xargs -I{} env touch {}", "pwn"),
    ("echo touch pwn | xargs -I{} sh -c {}", "pwn"),
    ("env -S 'touch pwn'", "pwn"),
    ("echo touch pwn | flock lock xargs env", "pwn"),
    ("echo touch pwn | taskset 1 xargs env", "pwn"),
    ("script -qc 'touch pwn' /dev/null", "pwn"),
]

MORE_HOSTILE = [   # no need to run these: each is one of the classes above, or plainly writes
    "test -v x", "[ -R x ]", "printf -v x y", "printf -vx y", "printf -- -v", "echo ${x@P}", "echo $HOME",
    "ls $DIR", 'cat "$F"', "cat ${F}", "echo ~$(id)", "find . -maxdepth 0 {-delete,}", "find . -{exec,ok} x",
    "find . -fprint out", "find . -fprintf out %p", "find . -fls out", "find . -ok rm {} ;",
    "find . -execdir rm {} +", "find . -exec rm {} +", "sort -o out in", "sort -ro out in", "sort -T /tmp in",
    "sort --o=out in", "sort --ou=out in", "sort --output out in", "sort --compress=sh in",
    "sort --compress-prog=sh in", "sort --temporary-directory=/tmp in", "git grep -O x", "git grep -Ocat x",
    "git grep --open x", "git grep --open-files-in-pager x", "git grep --textconv x", "git diff --ext-diff",
    "git diff --ext", "git diff --textconv", "git log --show-signature", "git log --format=%G?",
    "git log --pretty=format:%GS", "git log --format '%G?'", "git show --ext-diff", "git -c a=b status",
    "git --exec-path=. status", "git --git-dir=x status", "git --work-tree=/ status", "git -p log",
    "git branch new", "git branch -D old", "git branch -m a b", "git tag v1", "git tag -v v1", "git tag -d v1",
    "git remote add x y", "git remote show origin", "git remote update", "git status --porcelain > f",
    "date 010100002030", "date -s now", "date --set=now", "date --se now", "hostname evil", "hostname -F f",
    "hostname -b x", "uniq a b", "uniq -c a b", "tree -o out", "tree -R -H . -o x", "file -C -m magic",
    "file --compile", "file -p f", "rg --pre sh x", "rg --pre=sh x", "rg -z x", "rg --search-zip x",
    "rg --hostname-bin=sh x", "rg --pre-glob '*' x", "jq . > out.json", "ls > out", "ls >| out", "ls &>> out",
    "cat 0<>f", "cat </dev/udp/1.2.3.4/53", "ls 2>&1 >out", "ls >&3 >&-; touch x", "echo x >/dev/tcp/h/1",
    "ls {a,b}", "ls {a..c}", "ls x{,.bak}", "cat file{1,2}", "echo {-n,}", "find {.,/} -name x",
    "busybox xargs", "echo x | busybox xargs env", "xargs rm", "ls | xargs rm -rf", "ls | xargs -0 sort", "xargs -I{} sh -c 'echo {}'", "timeout 5 rm x",
    "nice rm x", "nohup rm x", "env -i rm x", "env FOO=1 ls", "env -S 'ls -l' x", "stdbuf -o0 rm x",
    "command rm x", "builtin eval 'rm x'", "exec rm x", "sudo ls", "doas ls", "time rm x", "time -p rm x",
    "! rm x", "if rm x; then ls; fi", "while rm x; do ls; done", "until ls; do rm x; done", "{ rm x; }",
    "case x in x) rm x;; esac", "select x in a; do rm x; done", "coproc rm x", "function f { ls; }",
    "f() { ls; }; f", "for f in *; do rm -rf \"$f\"; done", "for f in *; do cat \"$f\"; done", "eval ls",
    "source x.sh", ". x.sh", "watch ls", "sh -c ls", "bash -c 'ls'", "[[ -v x ]]", "[[ x -eq 1 ]]",
    "(( x = 1 ))", "let x=1", "declare -a x", "read x", "alias ls=rm", "set -x", "export X=1", "X=1",
    "PATH=. ls", "ls; X=1 cat f", "echo $'rm x'", 'echo $"x"', "cat <(ls)", "ls >(cat)", "echo `ls`",
    "cat <<<x", "sort --files0-from=- --out=x", "find * -name x", "sort *", "sort * > /dev/null",
    "git diff *", "git log -- * > x", "tree *", "file *", "find . -newer x -delete",
    "sort -k2 -o out", "printf '%s' x > f", "echo x > .git/config", "cd .git && echo x > config",
    "git -C . -c core.fsmonitor=x status", "git status -c x",
    # a wrapper with no command after xargs: the program arrives at run time
    "xargs -a list env", "xargs -I{} env {}", "xargs env --", "xargs nice -n 5", "xargs time", "xargs command",
    "xargs builtin", "xargs exec", "xargs -- env", "xargs sudo", "xargs doas", "xargs parallel", "xargs eval",
    "xargs setsid", "xargs stdbuf -oL", "xargs ionice", "xargs -n1 xargs -n1", "find . -print0 | xargs -0 env",
    "xargs -r env -u X --", "xargs timeout 5 env", "xargs nohup nice", "ls | xargs -P 4 nohup",
    # programs read from the input, or given by it
    'sh -c "$(cat)"', "find . -exec env {} +", "echo x | parallel", "echo ls | sh", "echo ls | env -i sh",
    "echo ls | command sh", "echo ls | exec sh", "echo touch x | source /dev/stdin", "echo x | . /dev/stdin",
    "echo touch x | xargs -I % env %", "echo ls | sudo -s", "echo ls | doas sh", "echo ls | xargs busybox",
    "echo ls | python3", "echo ls | awk '{system($0)}'", "git ls-files | xargs -n1 git", "echo ls | timeout 5 sh",
]

READ_ONLY = [        # common read-only commands that must keep running without a question
    "ls -la", "ls *.py", "cat README.md", "grep -rn 'def main' --include='*.py' .", "head -n 20 x.log",
    "tail -50 x.log", "wc -l *.py", "find . -name '*.py' -not -path './.venv/*' | head", "find . -type f -mtime -7",
    "find src -maxdepth 2 -type d", "find . -size -10k -print0", "sort -n -k2 data.txt", "sort -t, -k2,2n x",
    "sort -u names | uniq -c", "git status", "git status -s", "git status -uno", "git status --porcelain",
    "git diff", "git diff --stat", "git diff HEAD~1 -- src/", "git diff --cached --name-only", "git log --oneline -5",
    "git log -n 3 --format='%h %s'", "git log --pretty=oneline --graph --all", "git show HEAD --stat",
    "git show HEAD:README.md", "git blame -L 10,20 x.py", "git ls-files", "git rev-parse --show-toplevel",
    "git branch", "git branch -a", "git branch -vv", "git branch --show-current", "git tag", "git tag -l 'v1*'",
    "git remote -v", "git grep -n TODO", "git --no-pager log -3", "git -C sub status", "echo hi", "echo 'a b'",
    'echo "hello world"', "echo done", "pwd", "cd src && ls", "printf '%s\\n' a b", "test -f x && cat x",
    "[ -d src ] || echo no", "test -n 'x' -a -z ''", "date", "date +%Y-%m-%d", "date -u", "uname -a",
    "which python3", "type ls", "stat x", "du -sh .", "df -h", "tree -L 2", "tree -a -I node_modules",
    "file x.bin", "file -b --mime-type x", "rg -n TODO", "rg -i --hidden -g '*.py' foo", "rg --files",
    "jq .name package.json", "jq -r '.a | keys' x.json", "diff a b", "diff -u a b", "cmp a b", "seq 1 5",
    "cut -d: -f1 /etc/passwd", "tr a-z A-Z < x", "sleep 1", "ls > /dev/null 2>&1", "ls 2>/dev/null",
    "grep x f >&2", "cat < input.txt", "ls *.py | xargs wc -l", "find . -name '*.py' | xargs grep -n foo",
    "timeout 10 cat x", "if grep -q x f; then echo yes; else echo no; fi", "for f in a b; do echo x; done",
    "uniq a.txt", "uniq -c a.txt", "md5sum x", "realpath .", "basename /a/b", "hostname", "ps aux",
    "printenv HOME", "id", "whoami", "true", "! grep -q x f", "echo a{b}c", "ls ~/x", "ls ./*",
]


@pytest.fixture
def scratch(tmp_path):
    """A folder with a git repository in it, where an attack can be tried for real."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    for step in ("git init -q .", "git config user.email a@b", "git config user.name a", "echo planted > README",
                 "git add README", "git commit -qm one", "echo changed >> README",
                 "printf '#!/bin/sh\\ntouch pwn\\ncat\\n' > evil.sh", "chmod +x evil.sh", "touch keep"):
        subprocess.run(step, shell=True, cwd=folder, env=env, check=True)
    return folder, env


def _run(command: str, folder, env) -> None:
    subprocess.run(["bash", "-c", command], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)


@pytest.mark.parametrize("command, leaves", ATTACKS, ids=[c for c, _ in ATTACKS])
def test_each_attack_works_when_run_and_the_policy_asks(command, leaves, scratch):
    folder, env = scratch
    connected = threading.Event()
    if leaves == "net":
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        command = command.replace("PORT", str(server.getsockname()[1]))

        def accept():
            try:
                server.settimeout(20)
                server.accept()
                connected.set()
            except OSError:
                pass
        threading.Thread(target=accept, daemon=True).start()
    before = {p.name for p in folder.iterdir()}
    _run(command, folder, env)
    after = {p.name for p in folder.iterdir()}
    if leaves == "net":
        assert connected.wait(10), command
        server.close()
    elif leaves and leaves.startswith("-"):
        assert leaves[1:] not in after, command
    elif leaves:
        assert leaves in after - before, command
    assert Approvals().needs_approval("bash", {"command": command}) is not None, command
    assert Approvals("auto_edit").needs_approval("bash", {"command": command}) is not None, command


@pytest.mark.parametrize("command", MORE_HOSTILE)
def test_more_hostile_commands_ask(command):
    assert Approvals().needs_approval("bash", {"command": command}) is not None, command


@pytest.mark.parametrize("command", READ_ONLY)
def test_common_read_only_commands_still_run_without_a_question(command):
    assert split_command(command) is not None, command
    assert Approvals().needs_approval("bash", {"command": command}) is None, command


def test_read_only_commands_change_nothing_when_run(scratch):
    """What the policy lets run without asking really leaves the folder as it was."""
    folder, env = scratch
    (folder / "x.py").write_text("print(1)\n")

    def state():
        return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()
                and ".git" not in p.parts}
    before = state()
    for command in READ_ONLY:
        if not command.startswith(("sleep", "ps")):
            _run(command, folder, env)
    assert state() == before


# ---- long options as GNU and git read them -------------------------------------------------------

FORBIDDEN_LONG = [("sort", "output"), ("sort", "compress-program"), ("sort", "temporary-directory"),
                  ("git diff", "output"), ("git diff", "ext-diff"), ("git diff", "textconv"),
                  ("git log", "show-signature"), ("git grep", "open-files-in-pager"), ("git log", "output"),
                  ("date", "set"), ("rg", "pre"), ("rg", "search-zip"), ("rg", "hostname-bin"), ("file", "compile")]


@pytest.mark.parametrize("command, option", FORBIDDEN_LONG)
def test_every_abbreviation_of_a_forbidden_long_option_asks(command, option):
    for end in range(1, len(option) + 1):
        if option[:end] in ("text",):            # git's own --text: an exact name wins over an abbreviation
            continue
        for form in (f"--{option[:end]}=x", f"--{option[:end]}"):
            line = f"{command} {form} file"
            assert Approvals().needs_approval("bash", {"command": line}) is not None, line


STRUCTURAL = st.sampled_from([   # hostile for every command
    "$X", "${X}", "${X@P}", "$'\\x41'", '"$X"', "a$X", "{a,b}", "{-exec,}", "x{1..3}", "-exe${U}c", "--out${U}put=f",
    ">f", ">>f", ">&f", "1>&f", "&>f", ">/dev/tcp/127.0.0.1/1", "</dev/tcp/127.0.0.1/1", "<>f", "2>f", ">| f",
    "> /dev/tcp/h/1", "<&f",
])
GLOB = st.sampled_from(["*", "?x", "[ab]x", "*.py"])       # may expand to a file named like an option
READ_ONLY_BASE = st.sampled_from(["ls", "cat a", "sort a", "find .", "git diff", "git log", "git grep x", "rg x",
                                  "echo x", "printf x", "test -f a", "uniq a", "tree", "date", "file a", "jq . a",
                                  "head a", "wc -l", "grep x a", "git status", "du", "cut -f1 a", "timeout 5 sort",
                                  "xargs wc", "git -C d log"])
EVERY_OPTION_HARMLESS = ("ls", "cat", "head", "wc", "grep", "du", "cut", "echo", "xargs")


@settings(max_examples=400)
@given(READ_ONLY_BASE, STRUCTURAL, st.integers(min_value=0, max_value=4))
def test_an_expansion_or_redirection_anywhere_in_a_read_only_command_asks(base, word, at):
    words = base.split()
    words.insert(min(at, len(words)), word)
    command = " ".join(words)
    assert Approvals().needs_approval("bash", {"command": command}) is not None, command


@given(READ_ONLY_BASE, GLOB, st.integers(min_value=1, max_value=4))
def test_a_glob_that_could_become_an_option_asks_unless_every_option_is_harmless(base, glob, at):
    words = base.split()
    words.insert(min(at, len(words)), glob)
    command = " ".join(words)
    request = Approvals().needs_approval("bash", {"command": command})
    harmless = (words[0] in EVERY_OPTION_HARMLESS and (words[0] != "xargs" or at > 1)   # `xargs *` runs the glob
                or (words[0] == "printf" and at > 1))                                  # printf's options come first
    assert (request is None) == harmless, command


# ---- ALLOW_COMMANDS --------------------------------------------------------------------------------

def test_an_allowed_prefix_does_not_allow_dangerous_options_or_structure():
    policy = Approvals(allow_commands=parse_allow_list("git diff,pytest,python -m pytest,npm test"))
    for command in ("git diff --output=/root/.bashrc", "git diff --outp=x", "git diff --ext-diff", "git diff --ext",
                    "git diff --textconv", "git diff -c core.pager=x", "pytest -p evil_plugin", "pytest -pevil",
                    "pytest -xp evil", "pytest --basetemp=/", "pytest --basetemp /", "pytest --base=/",
                    "pytest --rootdir=/", "pytest -c evil.ini", "pytest --config-file=x", "pytest --confcutdir=/",
                    "pytest -o addopts=-pevil", "pytest --override-ini=x", "pytest --junitxml=/x",
                    "pytest --pastebin=all", "pytest --pdbcls=evil:X", "pytest $X", "pytest tests/$X",
                    "pytest > out", "pytest; rm x", "pytest && rm x", "rm x | pytest", "X=1 pytest",
                    "python -m pytest -p evil", "timeout 60 pytest -p evil", "pytest *", "git diff *",
                    "npm test > x", "npm test $(x)", "git diff {--output=x,}", "pytest --debug=/x"):
        assert policy.needs_approval("bash", {"command": command}) is not None, command
    for command in ("pytest -x -q tests", "git diff HEAD~1 -- src", "pytest -k 'parse and not slow'",
                    "timeout 60 pytest -q", "pytest -vv --tb=short tests/test_x.py", "npm test -- --watch",
                    "python -m pytest -q", "pytest --co", "pytest -- -p", "git diff --no-ext-diff --stat"):
        assert policy.needs_approval("bash", {"command": command}) is None, command
    named = Approvals(allow_commands=("sudo apt",))           # a wrapper named in ALLOW_COMMANDS: as written
    assert named.needs_approval("bash", {"command": "sudo apt install jq"}) is None
    for command in ("sudo rm x", "apt install jq", "sudo apt install $X", "sudo apt install jq > /etc/x"):
        assert named.needs_approval("bash", {"command": command}) is not None, command


# ---- what "always" remembers -------------------------------------------------------------------

RESERVED_OR_WRAPPER = {"for", "do", "done", "if", "then", "else", "elif", "fi", "while", "until", "case", "esac",
                       "in", "select", "function", "time", "!", "{", "}", "[[", "xargs", "timeout", "nice", "nohup",
                       "env", "sudo", "doas", "stdbuf", "command", "exec", "builtin", "eval", "source", ".", "sh",
                       "bash", "watch"}


def test_always_never_offers_reserved_words_or_wrappers():
    cases = {"for i in 1 2 3; do echo $i; sleep 1; done": (), "ls *.py | xargs rm": ("rm",),
             "timeout 60 pytest -q": ("pytest",), "ls | xargs -0 -n 1 rm -rf": ("rm",),
             "nice -n 5 make all": ("make all",), "if make; then make install; fi": ("make", "make install"),
             "while true; do make; done": ("make",), "time -p npm test": ("npm test",),
             "sudo make install": (), "sh -c 'make'": (), "eval make": (), "env FOO=1 make": (),
             "command -p make": ("make",), "exec make": ("make",),
             "for f in *; do rm -rf \"$f\"; done": (), "{ make; }": ("make",), "! make": ("make",)}
    for command, offered in cases.items():
        request = Approvals().needs_approval("bash", {"command": command})
        assert request is not None and request.prefixes == offered, (command, request)
    for command in ("xargs", "timeout 5", "exec", "command -v make"):          # they run nothing new
        assert Approvals().needs_approval("bash", {"command": command}) is None, command


def test_remembered_prefixes_never_let_a_loop_or_wrapper_through():
    policy = Approvals()
    for command in ("for i in 1 2 3; do echo $i; sleep 1; done", "ls *.py | xargs wc -l", "timeout 60 pytest -q",
                    "ls | xargs touch x", "if make; then echo ok; fi"):
        request = policy.needs_approval("bash", {"command": command})
        if request is not None:
            policy.remember(request, Answer(True, "prefix"))
    assert not policy.prefixes & RESERVED_OR_WRAPPER
    for command in ("for f in *; do rm -rf \"$f\"; done", "ls | xargs rm -rf", "timeout 60 rm -rf /x",
                    "if rm -rf x; then :; fi", "nice rm x", "sudo make"):
        assert policy.needs_approval("bash", {"command": command}) is not None, command
    policy.remember(type("R", (), {"prefixes": ("for", "xargs", "do", "rm")})(), Answer(True, "prefix"))
    assert policy.prefixes & RESERVED_OR_WRAPPER == set()


WRAP = st.sampled_from(["{}", "timeout 5 {}", "nice {}", "xargs {}", "nohup {}", "env {}", "command {}",
                        "for i in 1; do {}; done", "if true; then {}; fi", "while false; do {}; done", "! {}",
                        "{{ {}; }}", "time {}", "stdbuf -oL {}", "exec {}", "sudo {}", "xargs -0 -n1 {}"])
INNER = st.sampled_from(["make", "npm test", "pytest -q", "cargo build", "touch x", "mkdir d", "./build.sh"])


@given(WRAP, INNER, WRAP, st.sampled_from(["rm -rf /tmp/x", "curl http://x", "sh -c 'id'", "python evil.py"]))
def test_always_on_any_wrapped_command_never_allows_another_command(wrap, inner, later_wrap, other):
    """Whatever was said "always" to, a different program behind any wrapper still asks."""
    policy = Approvals()
    request = policy.needs_approval("bash", {"command": wrap.format(inner)})
    if request is not None:
        assert not set(request.prefixes) & RESERVED_OR_WRAPPER
        policy.remember(request, Answer(True, "prefix"))
    assert policy.needs_approval("bash", {"command": later_wrap.format(other)}) is not None


# ---- files that make later commands run code -------------------------------------------------

CONFIG_PATHS = [".git/config", ".git/hooks/pre-commit", ".git/hooks/post-index-change", ".git/info/attributes",
                "sub/.git/config", ".GIT/config", "./.git/../.git/config", ".git", "sub/.git", ".gitattributes",
                "src/.gitattributes", ".gitconfig", ".config/git/config", ".envrc", ".hgrc", ".hg/hgrc",
                ".vscode/tasks.json", ".vscode/settings.json", ".bashrc", ".profile", ".zshrc"]


@pytest.mark.parametrize("path", CONFIG_PATHS)
def test_files_that_configure_commands_always_ask_except_in_yolo(path):
    for mode in ("default", "auto_edit"):
        for tool in ("write_file", "edit_file"):
            policy = Approvals(mode)
            policy.all_edits = True                         # even after "every file change this session"
            request = policy.needs_approval(tool, {"path": path, "content": "x", "old_text": "a", "new_text": "b"})
            assert request is not None and request.kind == "edit" and request.sensitive, (mode, tool, path)
    assert Approvals("yolo").needs_approval("write_file", {"path": path, "content": "x"}) is None
    assert Approvals("auto_edit").needs_approval("write_file", {"path": "src/git_config.py", "content": "x"}) is None


# ---- what runs without asking, run for real -----------------------------------------------------

PROGRAMS = st.sampled_from(["ls", "cat", "sort", "find .", "git diff", "git log", "git grep x", "git status",
                            "git branch", "git tag", "uniq", "tree", "date", "file", "rg x", "printf", "test",
                            "echo", "timeout 5 sort", "xargs sort", "xargs cat", "head", "git show", "jq ."])
DANGEROUS_ARGUMENTS = st.sampled_from([
    "-o", "--output=out", "--outp=out", "--out", "-exec", "touch", "pwn", "\\;", "-delete", "-fprint", "-fprintf",
    "--compress-program=./evil.sh", "-S 1K", "-T .", "--ext-diff", "--textconv", "-O./evil.sh", "-ro",
    "--open-files-in-pager=./evil.sh", "--open-files-in-pag=./evil.sh", "-v", "-C", "--compile", "--pre=./evil.sh",
    "--output-directory=d", "--format=%G?", "-o=out", "010100002030", "-c core.pager=./evil.sh", "newbranch",
    "--set=2020-01-01", "'-o'", "\"--output=out\"", "--comp=./evil.sh", "-fls", "-ok", "-execdir", "-D", "-p",
    ">&out", "{-exec,}", "-exe${U}c", "pwn2", "--files0-from=README", "2>out", "-z",
])
PLAIN_ARGUMENTS = st.sampled_from(["README", "out", "-", "*", ".", "-r", "-n", "-u", "-k2", "--", "-H", "-s", "-b",
                                   "-m", "-d", "-l", "-a", "-i", "-t", "x", "-I", "-w", "-f", "-M", "%p", ";"])
ARGUMENTS = st.one_of(DANGEROUS_ARGUMENTS, PLAIN_ARGUMENTS)
JOINER = st.sampled_from([" | ", "; ", " && ", " || ", " > /dev/null; ", " 2>&1 | "])


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(PROGRAMS, st.lists(ARGUMENTS, max_size=5)), min_size=1, max_size=3), JOINER)
def test_whatever_runs_without_asking_changes_nothing_when_run(scratch, parts, joiner):
    folder, env = scratch
    command = joiner.join(" ".join([program] + args) for program, args in parts)
    if Approvals().needs_approval("bash", {"command": command}) is not None:
        return

    def state():          # every file outside .git (and its time), and git's refs and config
        return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*")
                      if ".git" not in p.parts or "refs" in p.parts or p.name == "config")
    before = state()
    _run(command, folder, env)
    assert state() == before, command


def test_git_run_by_the_bash_tool_runs_no_fsmonitor_and_no_look_alike_bare_repository(scratch, tmp_path):
    from tools.bash import run_command
    folder, env = scratch
    subprocess.run(["git", "config", "core.fsmonitor", "touch fsmonitor-ran; false"], cwd=folder, check=True, env=env)
    _run("git status --short", folder, env)
    assert (folder / "fsmonitor-ran").exists()                        # plain git runs it…
    (folder / "fsmonitor-ran").unlink()
    captured = run_command("git status --short && git diff --stat", folder, 20, tmp_path / "spill")
    assert captured.exit_code == 0 and "README" in captured.text
    assert not (folder / "fsmonitor-ran").exists()                    # …git under the bash tool does not
    fake = folder / "look-alike"                                      # files write_file could make
    for name, text in (("HEAD", "ref: refs/heads/main\n"), ("config", "[core]\n\tbare = true\n"),
                       ("objects/x", ""), ("refs/x", "")):
        (fake / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / name).write_text(text)
    plain = subprocess.run("git rev-parse --git-dir", shell=True, cwd=fake, env=env, capture_output=True, text=True)
    assert plain.stdout.strip() == "."                                # git would take it for a repository
    captured = run_command("git rev-parse --git-dir", fake, 20, tmp_path / "spill")
    assert captured.exit_code != 0 and "bare repository" in captured.text
    kept = run_command("git config --get user.name", folder, 20, tmp_path / "spill")
    assert kept.exit_code == 0                                        # the repository's own settings still apply


@pytest.mark.parametrize("command", ["ls ; 2>out", ">out", "ls; >out", ">>out && ls"])
def test_a_redirection_with_no_command_asks(command, scratch):
    folder, env = scratch
    _run(command, folder, env)
    assert (folder / "out").exists(), command                     # it does create the file
    assert Approvals().needs_approval("bash", {"command": command}) is not None, command
    assert Approvals("plan").plan_refuses("bash", {"command": command}), command

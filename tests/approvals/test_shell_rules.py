"""Issue 19's rules for what runs without asking, read through the one shell parser (approvals/shell.py):
every example from the issue, run for real first to show it writes, must ask; and commands generated
by hypothesis that the policy lets run change no file when bash runs them (the oracle is bash itself,
in a scratch folder, without the sandbox: this tests the classifier alone).
"""

from __future__ import annotations

import hashlib
import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from approvals.policy import Approvals, split_command
from approvals.shell import parse

# (command, the file it changes when run: the attack is real)
ISSUE_EXAMPLES = [
    ("echo X 1<victim.txt >/dev/stdout", "victim.txt"),
    ("echo X 1<victim.txt >>/dev/stdout", "victim.txt"),
    ("echo X 2<victim.txt >/dev/stderr", "victim.txt"),
    ("echo X 2<victim.txt >>/dev/stderr", "victim.txt"),
    ("exec 1<victim.txt; echo X >/dev/stdout", "victim.txt"),
    ("echo X 1<../outside.txt >/dev/stdout", "../outside.txt"),
    ("echo X 1<victim.txt >/proc/self/fd/1", "victim.txt"),
    ("echo X 1<victim.txt >/dev/fd/1", "victim.txt"),
    ("echo X 3<>victim.txt >&3", "victim.txt"),
    ("printf 'APPROVAL_MODE=yolo\\n' 1<victim.txt >>/dev/stdout", "victim.txt"),
    ("uniq u/?.txt", "u/b.txt"),
    ("uniq .gi[at]/config", ".git/config"),
    ("tools/timeout 5 cat README", "pwn"),
    ("./env cat README", "pwn"),
    ("bin/command cat README", "pwn"),
    ("ls | tools/xargs cat", "pwn"),
]
MORE = [   # the same classes, not run
    "cat 1<f", "cat 2<f", "cat 3<f", "exec 3<f", "exec 2<f", "cat 3<>f", "exec 3<>f", "cat 0<>f", "echo x 1<&0",
    "echo x 2<&0", "echo x >/dev/stdout", "echo x >/dev/stderr", "echo x 2>/dev/stderr", "echo x &>/dev/stdout",
    "echo x >>/proc/self/fd/1", "echo x >/proc/1/fd/1", "echo x >/dev/fd/2", "echo x >|/dev/stdout",
    "echo x >& /dev/stdout", "{ echo x; } >/dev/stdout", "uniq u/*.txt", "uniq 'a' [ab]", "sort u/*.txt",
    "timeout 5 uniq u/?", "./timeout 5 cat x", "/usr/bin/timeout 5 cat x", "bin/nice cat x", "a/exec cat x",
    "x/time cat x", "sub/stdbuf -oL cat x", "while true; do sleep 100 & done", "while :; do :& done",
    "for f in a b; do cat $f & done", "until false; do ls & done", "for i in 1 2; do (sleep 1 &); done",
    "while true; do sleep 1 & break; done", "sh -c ls", "bash -c ls", "dash -c ls", "zsh -c ls", "ksh -c ls",
    "mksh -c ls", "csh -c ls", "tcsh -c ls", "fish -c ls", "busybox sh -c ls", "busybox ls", "cat <<<x",
    "cat <<'E'\nx\nE", "echo 'unterminated", "ls |", "echo $\"x\"", "sort -\\\no out in", "echo a >/dev/null y >o",
]
READ_ONLY = ["echo x >/dev/null", "ls 2>/dev/null", "ls >/dev/null 2>&1", "ls 2>&1 | head", "cat <README",
             "cat 0<README", "cat <&0", "ls >&2", "ls 1>&2", "ls 2>&-", "uniq README", "uniq -c README",
             "timeout 5 cat README", "env cat README", "command cat README", "ls | xargs cat", "cat 'a b'",
             "echo \"*\"", "for f in a b; do echo x; done", "ls -la \\\n  src", "wc -l *.py"]


@pytest.fixture
def scratch(tmp_path):
    """A folder where every attack above works: a git repository with a look-alike `.gia/config`,
    two files `uniq u/?.txt` expands to, and repository programs named like wrappers that leave `pwn`."""
    folder = tmp_path / "w"
    folder.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q", "."], cwd=folder, env=env, check=True)
    (folder / "README").write_text("readme\n")
    (folder / "victim.txt").write_text("the person's file\n")
    (tmp_path / "outside.txt").write_text("outside the workspace\n")
    (folder / "u").mkdir()
    (folder / "u/a.txt").write_text("a\na\nb\n")
    (folder / "u/b.txt").write_text("precious\n")
    (folder / ".gia").mkdir()
    (folder / ".gia/config").write_text("[diff]\n\texternal = ./evil\n")
    for program in ("tools/timeout", "env", "bin/command", "tools/xargs"):
        path = folder / program
        path.parent.mkdir(exist_ok=True)
        path.write_text("#!/bin/sh\ntouch pwn\n")
        path.chmod(0o755)
    return folder, env


def digest(root) -> dict:
    """Every file under `root` (the scratch folder and what is beside it) with a hash of its bytes."""
    found = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return found


def run(command: str, folder, env) -> None:
    subprocess.run(["bash", "-c", command], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)


@pytest.mark.parametrize("command, changed", ISSUE_EXAMPLES, ids=[c for c, _ in ISSUE_EXAMPLES])
def test_each_example_of_the_issue_writes_when_run_and_asks(command, changed, scratch):
    folder, env = scratch
    before = digest(folder.parent)
    run(command, folder, env)
    after = digest(folder.parent)
    key = os.path.normpath(os.path.join("w", changed))
    assert before.get(key) != after.get(key), f"the attack did nothing: {command}"
    for mode in ("default", "auto_edit"):
        assert Approvals(mode).needs_approval("bash", {"command": command}) is not None, command


@pytest.mark.parametrize("command", MORE)
def test_more_of_the_same_classes_ask(command):
    assert Approvals().needs_approval("bash", {"command": command}) is not None, command


@pytest.mark.parametrize("command", READ_ONLY)
def test_reading_and_sinking_to_dev_null_still_run_without_a_question(command):
    assert Approvals().needs_approval("bash", {"command": command}) is None, command


def test_the_parser_reads_words_as_bash_does():
    [simple] = parse("""sort -\\\no 'a b'"c"\\ d "$HOME"/x u/?.txt a{b}c {x,y} >/dev/null 2>&1""").commands
    assert simple.words == ["sort", "-o", "a bc d", "$HOME/x", "u/?.txt", "a{b}c", "{x,y}"]
    assert simple.opaque == [False, False, False, True, False, False, True]
    assert simple.glob == [False, False, False, False, True, False, False]
    assert [(r.fd, r.op, r.target.text) for r in simple.redirects] == [(None, ">", "/dev/null"), (2, ">&", "1")]
    script = parse("cat < in a b; f() { x; }; echo $(id) & while :; do y & done; echo 'open")
    assert script.commands[0].words == ["cat", "a", "b"]          # the grammar hangs a, b on `< in`
    assert {"function", "substitution"} <= script.constructs and script.background_in_loop and script.errors
    assert split_command("cat 'open") is None and split_command("ls && cat x") is not None


# ---- generated commands, run for real when the policy lets them run --------------------------------

PROGRAM = st.sampled_from([
    "cat", "echo X", "uniq", "sort", "head -1", "ls", "wc -l", "grep -h a", "timeout 5 cat", "tools/timeout 5 cat",
    "env cat", "./env cat", "command cat", "bin/command cat", "xargs cat", "tools/xargs cat", "printf %s", "tac",
    "nice cat", "git diff --stat", "uniq -c", "date", "tree", "cut -c1", "sort -r"])
OPERAND = st.sampled_from([
    "README", "u/a.txt", "u/?.txt", "u/*.txt", "u/[ab].txt", ".gi[at]/config", "'u/a.txt'", '"u/b.txt"', "u/a.txt u/b.txt",
    "-", "-n", "*", "?", "victim.txt", "\\*", "'*'", "u/{a,b}.txt", "$X", "../outside.txt", "u/a.txt\\\n u/b.txt"])
REDIRECT = st.sampled_from([
    "", "", ">/dev/null", "2>/dev/null", "2>&1", ">&2", "<README", "0<README", "<&0", "1<victim.txt",
    "2<victim.txt", "3<>victim.txt", ">/dev/stdout", ">>/dev/stdout", "2>/dev/stderr", ">/proc/self/fd/1",
    ">/dev/fd/1", "1<&0", "<<<'a b'", "<<< x", "&>/dev/null", ">&-", "1<../outside.txt", ">&/dev/stdout",
    "3<victim.txt >&3", "2>>/dev/stderr", "1<u/b.txt"])
SHAPE = st.sampled_from([
    "{}", "{}", "{}", "( {} )", "{{ {}; }}", "exec 1<victim.txt; {}", "exec 2<victim.txt; {} >/dev/stderr",
    "for i in 1; do {}; done", "if true; then {}; fi", "! {}", "bash -c '{}'", "sh -c \"{}\"", "mksh -c '{}'",
    "{} | cat", "cat README | {}", "{} && ls", "{} ; echo done"])


@settings(max_examples=250, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(PROGRAM, st.lists(OPERAND, max_size=3), st.lists(REDIRECT, max_size=3), SHAPE)
def test_a_command_the_policy_lets_run_changes_no_file(scratch, program, operands, redirects, shape):
    folder, env = scratch
    command = shape.format(" ".join([program] + operands + redirects))
    if Approvals().needs_approval("bash", {"command": command}) is not None:
        return
    before = digest(folder.parent)
    run(command, folder, env)
    assert digest(folder.parent) == before, command


@pytest.mark.parametrize("command", ["{\U000E0000x", "echo {\U000E0000x", "{\U0010220c\u00f2yZ8",
                                     "\b{\U00059f94\u00b2", "\\\r\u0800", "cat caf\\\u00e9"])
def test_non_ascii_text_the_grammar_once_crashed_on_is_read_from_the_real_bytes(command):
    """tree-sitter-bash 0.25 segfaulted on `{` before some supplementary-plane characters; the grammar
    now sees ASCII stand-ins at the same offsets, and the words keep the real characters."""
    script = parse(command)
    for simple in script.commands:
        for word in simple.words:
            assert set(word) <= set(command) | {"\ufffd"}, (command, simple.words)
    assert parse("cat caf\\\u00e9 \U000E0000x").commands[0].words == ["cat", "caf\u00e9", "\U000E0000x"]


@pytest.mark.parametrize("command", ["ls && ls | ls | ls\nrm f && ls", "ls | cat | wc\ntouch x"])
def test_a_command_after_a_newline_the_grammar_read_past_is_a_command_of_its_own(command):
    """tree-sitter-bash 0.25 reads `ls && ls | ls | ls⏎rm f` as one command `ls rm f`; bash runs `rm f`.
    The parser starts a new command at the newline, and the policy asks."""
    words = [simple.words for simple in parse(command).commands]
    assert ["rm", "f"] in words or ["touch", "x"] in words, words
    assert Approvals().needs_approval("bash", {"command": command}) is not None


def test_the_guard_sees_a_catastrophic_command_after_such_a_newline():
    from tools.bash_guard import dangerous_reason
    assert dangerous_reason("ls && ls | ls | ls\nrm -rf / && ls")

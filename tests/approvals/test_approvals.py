"""The approval policy (approvals/policy.py): what runs at once, what asks, and what "always" remembers.

Pure policy, no terminal: the REPL's question is tested in test_terminal_pty.py, -p's refusal in
test_cli.py. The property that matters most: a command line that contains anything not known to be
read-only (or allowed) asks, however it is combined with read-only commands.
"""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from approvals.policy import Answer, Approvals, command_prefix, matches, parse_allow_list, split_command

READ_ONLY = ["ls -la", "cat README.md", "git status", "git diff HEAD~1", "grep -rn foo src | head -20",
             "find . -name '*.py' | wc -l", "seq 1 50000", "pwd", "echo hi 2>&1", "ls > /dev/null",
             "cd sub && ls", "sort -r file.txt", "git log --oneline -5", "head -c 100 x.bin", "uniq a.txt"]
CHANGING = ["rm x", "touch made.txt && echo done", "echo hi > out.txt", "ls; rm -rf build", "ls | xargs rm",
            "find . -delete", "find . -exec rm {} ;", "sort -o out.txt in.txt", "sort -ro out.txt in.txt",
            "git push", "git branch -D old", "echo $(rm x)", "echo `rm x`", "cat <(rm x)", "(rm x)",
            "PATH=. ls", "pip install requests", "python -c 'print(1)'", "npm test", "ls\nrm x",
            "git -c core.pager=sh log", "rg --pre ./evil foo", "uniq in.txt out.txt", "cat <<EOF\nx\nEOF",
            "echo \"$(rm x)\"", "tee out.txt", "date -s 2020-01-01", "git diff --output=x"]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_run_without_asking(command):
    assert Approvals().needs_approval("bash", {"command": command}) is None


@pytest.mark.parametrize("command", CHANGING)
def test_anything_else_asks(command):
    assert Approvals().needs_approval("bash", {"command": command}) is not None


def test_modes():
    edit, write = ("edit_file", {"path": "a", "old_text": "x", "new_text": "y"}), ("write_file", {"path": "a"})
    default, auto, yolo = Approvals("default"), Approvals("auto_edit"), Approvals("yolo")
    for call in (edit, write):
        assert default.needs_approval(*call).kind == "edit"
        assert auto.needs_approval(*call) is None and yolo.needs_approval(*call) is None
    assert auto.needs_approval("bash", {"command": "rm x"}) is not None
    assert yolo.needs_approval("bash", {"command": "rm x"}) is None
    for mode in (default, auto, yolo):
        assert mode.needs_approval("read_file", {"path": "a"}) is None
        assert mode.needs_approval("compact", {}) is None
    # Shift-Tab: plan replaces yolo in the cycle; yolo comes round only in a session that started in it
    assert [default.cycle(), default.cycle(), default.cycle()] == ["auto_edit", "plan", "default"]
    assert [yolo.cycle(), yolo.cycle(), yolo.cycle(), yolo.cycle()] == ["default", "auto_edit", "plan", "yolo"]
    with pytest.raises(ValueError):
        Approvals("sometimes")


def test_allow_commands_match_word_by_word():
    policy = Approvals(allow_commands=parse_allow_list(" pytest, npm test ,git diff,, "))
    assert policy.allow_commands == ("pytest", "npm test", "git diff")
    for command in ("pytest -x tests", "npm test -- --watch", "pytest && npm test", "ls && pytest"):
        assert policy.needs_approval("bash", {"command": command}) is None, command
    for command in ("npm testing", "pytest > out.txt", "npm install", "pytest; rm x", "FOO=1 pytest"):
        assert policy.needs_approval("bash", {"command": command}) is not None, command


def test_prefixes_and_always():
    assert command_prefix(["npm", "test", "--", "-x"]) == "npm test"
    assert command_prefix(["npm", "run", "build"]) == "npm run build"
    assert command_prefix(["python", "-m", "pytest", "-q"]) == "python -m pytest"
    assert command_prefix(["./build.sh", "all"]) == "./build.sh"
    assert command_prefix(["git", "--no-pager", "log"]) == "git"
    assert matches(["npm", "test", "-x"], "npm test") and not matches(["npm", "testing"], "npm test")
    policy = Approvals()
    request = policy.needs_approval("bash", {"command": "cd sub && npm test -- -x && rm -rf dist"})
    assert request.prefixes == ("npm test", "rm")
    policy.remember(request, Answer(True, "prefix"))
    assert policy.needs_approval("bash", {"command": "npm test"}) is None
    assert policy.needs_approval("bash", {"command": "rm -rf build"}) is None
    assert policy.needs_approval("bash", {"command": "npm install"}) is not None
    assert policy.needs_approval("bash", {"command": "echo x > f"}).prefixes == ()    # a redirect: no "always"
    policy.remember(policy.needs_approval("bash", {"command": "make"}), Answer(True, "session"))
    assert policy.needs_approval("bash", {"command": "anything at all > f"}) is None
    assert policy.needs_approval("write_file", {"path": "a"}) is not None               # commands only
    policy.forget()
    assert policy.needs_approval("bash", {"command": "npm test"}) is not None


def test_review_asks_refuses_and_carries_the_reason():
    policy, asked = Approvals(), []

    def no(request):
        asked.append(request)
        return Answer(False, reason="  use the staging folder  ")
    refusal = policy.review("bash", {"command": "rm -rf out"}, None, no)
    assert asked[0].command == "rm -rf out" and "declined" in refusal.result
    assert refusal.result.endswith("Their reason: use the staging folder") and not refusal.notice
    assert policy.review("bash", {"command": "ls"}, None, no) is None and len(asked) == 1
    nobody = policy.review("bash", {"command": "rm -rf out"}, None, None)
    assert "nobody can be asked" in nobody.result
    assert nobody.notice == "[approval needed] bash `rm -rf out` was not run: allow it with ALLOW_COMMANDS=rm in " \
                            "~/.config/s08/.env, or --yolo"
    edit = policy.review("edit_file", {"path": "a.py"}, None, None)
    assert "--approval-mode auto_edit" in edit.notice and "a.py" in edit.notice
    assert policy.review("bash", {"command": "rm x"}, None, lambda r: Answer(True)) is None
    assert policy.needs_approval("bash", {"command": "rm x"}) is not None        # "yes" is for this call only


SAFE_PART = st.sampled_from(["ls", "cat a.txt", "git status", "grep -n x f", "wc -l f", "echo ok", "pwd"])
UNSAFE_PART = st.sampled_from(["rm f", "touch f", "echo x > f", "curl http://x", "python run.py", "mv a b",
                               "chmod +x f", "echo $(id)", "ls; rm f"])
JOIN = st.sampled_from([" && ", " || ", "; ", " | ", "\n", " & "])


@given(st.lists(SAFE_PART, max_size=4), UNSAFE_PART, st.lists(SAFE_PART, max_size=4), st.lists(JOIN, min_size=8,
                                                                                             max_size=8))
def test_one_changing_part_makes_any_combination_ask(before, unsafe, after, joins):
    parts = before + [unsafe] + after
    command = parts[0] + "".join(j + p for j, p in zip(joins, parts[1:]))
    assert Approvals().needs_approval("bash", {"command": command}) is not None, command


@given(st.lists(SAFE_PART, min_size=1, max_size=5), st.lists(JOIN, min_size=5, max_size=5))
def test_read_only_combinations_run(parts, joins):
    command = parts[0] + "".join(j + p for j, p in zip(joins, parts[1:]))
    assert Approvals().needs_approval("bash", {"command": command}) is None, command


@given(st.text(max_size=300))
def test_the_parser_never_fails_and_is_bounded(text):
    split_command(text)
    assert split_command("ls " * 5000) is None            # too long to analyse: it asks

"""The approval question shows everything it asks about (ui/approval_view.py), in a real terminal:
blank lines collapsed and counted, the head and the tail of a long command, long lines wrapped with a
mark, a new file's size and first lines, and `v` pages the whole of it, then asks the same question."""

from __future__ import annotations

import pytest

from approvals.policy import Request
from support.helpers import answer_question
from support.screen import Screen
from tools.preview import FileChange
from ui.approval_view import command_rows, full_text

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
HIDDEN_TAIL = "ls\n" + "\n" * 40 + "touch pwned.txt"


def rows_of(child, columns):
    screen = Screen(columns)
    screen.feed(child.logfile_read.getvalue())
    return screen.rows()


def test_blank_lines_are_counted_and_the_tail_is_shown_and_v_pages_the_whole_command(repl, standin, workspace):
    long_line = "echo " + " ".join(f"word{i}" for i in range(40))
    command = HIDDEN_TAIL + "\n" + long_line + "\n" + "\n".join(f"echo line{i}" for i in range(60)) + "\ntouch end.txt"
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "REFUSED-OK"})
    child = repl(approval_mode="default", pager="cat", columns=80)
    child.sendline("go")
    child.expect_exact("view the whole command in a pager")
    rows = rows_of(child, 80)
    assert "    ⋮ 40 blank lines" in rows and "    touch pwned.txt" in rows
    assert "    touch end.txt" in rows                                     # the tail, not "… more lines"
    assert any(row.startswith("    ⋮ ") and "more rows" in row and "v shows them all" in row for row in rows)
    assert any(row.startswith("    ↪ ") for row in rows) and all(len(row) <= 80 for row in rows)
    answer_question(child, "v")
    child.expect_exact("the whole command:")
    child.expect_exact("echo line30")                                 # the middle, hidden in the question
    child.expect_exact("(back to the question)")
    child.expect_exact("view the whole command in a pager")
    answer_question(child, "n")
    child.expect_exact("Why?")
    child.sendline("")
    child.expect_exact("REFUSED-OK")
    child.expect_exact(PROMPT)
    assert not (workspace / "pwned.txt").exists() and not (workspace / "end.txt").exists()


def test_a_new_file_shows_its_size_and_first_lines_and_v_shows_the_rest(repl, standin, workspace):
    content = "".join(f"line {i}\n" for i in range(1, 201)) + "LAST-LINE-OF-THE-FILE\n"
    standin.queue({"tool_calls": [{"name": "write_file", "input": {"path": "big.txt", "content": content}}]},
                  {"text": "WRITTEN"})
    child = repl(approval_mode="default", pager="cat")
    child.sendline("write it")
    child.expect_exact("view the whole change in a pager")
    raw = child.logfile_read.getvalue()
    assert "new file: 201 lines" in raw and "LAST-LINE-OF-THE-FILE" not in raw
    answer_question(child, "v")
    child.expect_exact("LAST-LINE-OF-THE-FILE")
    child.expect_exact("view the whole change in a pager")
    answer_question(child, "y")
    child.expect_exact("WRITTEN")
    assert (workspace / "big.txt").read_text() == content


def test_the_rows_hide_nothing_that_runs():
    rows, hidden = command_rows(HIDDEN_TAIL, 40)
    assert [r.plain for r in rows] == ["    ls", "    ⋮ 40 blank lines", "    touch pwned.txt"] and hidden
    rows, hidden = command_rows("a\n\nb", 40)
    assert [r.plain for r in rows] == ["    a", "", "    b"] and not hidden          # one blank line is shown
    wide, _ = command_rows("x" * 100, 40)
    assert [r.plain for r in wide] == ["    " + "x" * 34, "    ↪ " + "x" * 34, "    ↪ " + "x" * 32]
    text = full_text(Request("bash", "command", HIDDEN_TAIL))
    assert "   42  touch pwned.txt" in text and "   20  " in text
    diff = full_text(Request("edit_file", "edit", change=FileChange("a.py", "a\nb\n", "a\nc\n")))
    assert "-b" in diff and "+c" in diff

"""What a person sees and does in the REPL, in a real pseudo-terminal (issue 10's list).

Screens are rebuilt with tests/screen.py from everything the agent printed, so wrapping, indentation
and what a live area left behind are checked as a person would read them.
"""

from __future__ import annotations

import re

import pexpect
import pytest

from support.agents import AGENT
from support.helpers import answer_question, user_texts
from messages import INTERRUPTED_MARK, NOT_STARTED_RESULT, SESSION_STOPPED_MARK
from support.screen import Screen
from session.log import list_sessions, load_session

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
TIME = re.compile(r"^\s*(· )?\d+(\.\d)?s\s*$")


def screen(child, columns: int = 200) -> list[str]:
    return Screen(columns).feed(child.logfile_read.getvalue()).rows()


def turn(child, text: str, until: str) -> None:
    child.sendline(text)
    child.expect_exact(until)
    child.expect_exact(PROMPT)


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


# ---- tool calls you can read ------------------------------------------------------------------

def test_exit_code_timeout_and_the_first_and_last_lines(repl, standin):
    standin.queue(bash("ls nope"), {"text": "OK-ONE"}, bash("echo start; sleep 5"), {"text": "OK-TWO"},
                  bash("seq 1 100"), {"text": "OK-THREE"}, bash("false"), {"text": "OK-FOUR"})
    child = repl(bash_timeout=1)
    for word in ("one", "two", "three", "four"):
        turn(child, word, f"OK-{word.upper()}")
    rows, raw = screen(child), child.logfile_read.getvalue()
    at = rows.index("● bash  ls nope")
    assert rows[at + 1] == "  ⎿ ls: cannot access 'nope': No such file or directory"
    assert re.fullmatch(r"    exit 2 · \d+\.\ds", rows[at + 2])
    assert re.search(r"\x1b\[1;31mexit 2", raw)                              # red when not 0
    at = rows.index("● bash  echo start; sleep 5")
    assert rows[at + 1] == "  ⎿ start"
    assert re.fullmatch(r"    timed out after 1s \(BASH_TIMEOUT\): killed, with its children · \d+\.\ds", rows[at + 2])
    at = rows.index("● bash  seq 1 100")
    assert rows[at + 1:at + 9] == ["  ⎿ 1", "    2", "    3", "    … 94 more lines (/last shows them all)", "    98",
                                   "    99", "    100", rows[at + 8]] and rows[at + 8].startswith("    exit 0 · ")
    assert re.fullmatch(r"  ⎿ no output · exit 1 · \d+\.\ds", rows[rows.index("● bash  false") + 1])


def test_a_running_command_shows_its_output_live(repl, standin, workspace):
    command = "for i in 1 2 3; do echo tick$i; done; while [ ! -e go ]; do sleep 0.05; done; echo $((40+2))done"
    standin.queue(bash(command), {"text": "DONE"})
    child = repl()
    child.sendline("go")
    child.expect_exact("tick3")                # on screen while the command still runs (it waits for `go`)
    child.expect_exact("running bash…")
    (workspace / "go").touch()
    child.expect_exact("DONE")
    child.expect_exact(PROMPT)
    raw = child.logfile_read.getvalue()
    seen = raw.index("tick2")                  # drawn in the live area, with the spinner, before the end:
    assert raw.index("running bash…", seen) < raw.index("42done") < raw.index("exit 0")
    rows = screen(child)
    at = rows.index(f"● bash  {command}")
    assert rows[at + 1:at + 4] == ["  ⎿ tick1", "    tick2", "    tick3"] and "    42done" in rows[at + 4:at + 9]
    assert not any("running bash" in row for row in rows)                     # the live area left nothing behind


def test_last_pages_the_whole_result(repl, standin):
    standin.queue(bash("seq 1 40"), {"text": "LISTED"})
    child = repl(pager="cat")
    turn(child, "count", "LISTED")
    assert "\r\n    20\r\n" not in child.logfile_read.getvalue()             # only the head and tail were shown
    child.sendline("/last")
    child.expect_exact("\r\n20\r\n")
    child.expect_exact("\r\n40\r\n")
    child.expect_exact(PROMPT)


# ---- answers as formatted text, at any width ---------------------------------------------------

ANSWER = ("## Summary of the change\n\nThe **important** part: `parse()` now accepts a --verbose flag, and every "
          "existing caller keeps working exactly as before without any modification whatsoever.\n\n"
          "| file | what changed |\n|---|---|\n| cli.py | the new flag |\n| test_cli.py | two new tests |\n\n"
          "```python\ndef main(verbose=False):\n    return run(verbose)\n```\n\nThat is all for today.")


@pytest.mark.parametrize("columns", [60, 200])
def test_markdown_rendered_and_wrapped_at_words(repl, standin, workspace, columns):
    long_name = "a_rather_long_file_name_that_does_not_exist_anywhere_in_this_workspace.txt"
    standin.queue({"text": ANSWER, "delay": 0.01, "chunk": 9},
                  {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"path": long_name}}]},
                  {"text": "It is not there."})
    child = repl(columns=columns)
    turn(child, "explain", "That is all for today.")
    turn(child, "read it", "It is not there.")
    raw, rows = child.logfile_read.getvalue(), screen(child, columns)
    assert "**" not in raw and "```" not in raw and "## " not in raw and "|---|" not in raw
    assert re.search(r"\x1b\[1m(\x1b\[[\d;]*m)*important", raw)                      # bold
    assert re.search(r"def(\x1b\[[\d;]*m)+ (\x1b\[[\d;]*m)*main", raw)                  # highlighted code
    assert any("─" in row for row in rows) and any("cli.py" in row and "the new flag" in row for row in rows)
    assert all(len(row) <= columns for row in rows)
    assert not [row for row in rows if TIME.match(row)]                          # a time never stands alone
    text = " ".join(rows)
    for word in ("modification", "whatsoever", "accepts", "Summary"):
        assert word in text                                                     # wrapped at words, not in them
    at = next(i for i, row in enumerate(rows) if row.startswith("  ⎿ Error:"))
    block = [rows[at]]
    for row in rows[at + 1:]:
        if not row.startswith("    "):
            break
        block.append(row)
    assert long_name in "".join(row[4:] for row in block).replace(" ", "")    # all of it under the ⎿
    assert re.search(r" · \d+\.\ds$", block[-1]) and (len(block) == 1) == (columns == 200)


# ---- approvals -------------------------------------------------------------------------------

def test_approval_yes_no_always_and_the_diff(repl, standin, workspace):
    (workspace / "f.txt").write_text("first\nold line\nlast\n")
    standin.queue(bash("ls"), {"text": "R-LS"},
                  bash("touch yes.txt"), {"text": "R-YES"},
                  bash("touch no.txt"), {"text": "R-NO"},
                  bash("mkdir -p one"), {"text": "R-ALWAYS"},
                  bash("mkdir -p two"), {"text": "R-AGAIN"},
                  {"tool_calls": [{"name": "edit_file", "input": {"path": "f.txt", "old_text": "old line",
                                                                   "new_text": "new line"}}]}, {"text": "R-EDIT"})
    child = repl(approval_mode="default")
    turn(child, "list", "R-LS")                                                  # read-only: no question
    assert "? run this command?" not in child.logfile_read.getvalue()
    child.sendline("yes please")
    child.expect_exact("? run this command?")
    child.expect_exact("every command this session")
    answer_question(child, "y")
    child.expect_exact("R-YES")
    child.expect_exact(PROMPT)
    assert (workspace / "yes.txt").exists()
    child.sendline("no thanks")
    child.expect_exact("every command this session")
    answer_question(child, "n")
    child.expect_exact("Why? (optional, Enter to skip)")
    child.sendline("wrong folder")
    child.expect_exact("R-NO")
    child.expect_exact(PROMPT)
    assert not (workspace / "no.txt").exists()
    assert "  ⎿ not run: you said no (wrong folder)" in screen(child)
    result = standin.requests[-1]["messages"][-1]["content"][0]
    assert result["is_error"] and result["content"].endswith("Their reason: wrong folder")
    child.sendline("always")
    child.expect_exact("always allow `mkdir` this session")
    answer_question(child, "a")
    child.expect_exact("R-ALWAYS")
    child.expect_exact(PROMPT)
    turn(child, "again", "R-AGAIN")
    assert (workspace / "one").is_dir() and (workspace / "two").is_dir()
    assert child.logfile_read.getvalue().count("? run this command?") == 3          # "always" was remembered
    child.sendline("edit")
    child.expect_exact("? apply this change to f.txt?")
    child.expect_exact("every file change this session")
    rows = screen(child)
    assert "        2 - old line" in rows and "        2 + new line" in rows
    assert (workspace / "f.txt").read_text() == "first\nold line\nlast\n"        # nothing changed before the yes
    answer_question(child, "y")
    child.expect_exact("R-EDIT")
    child.expect_exact(PROMPT)
    assert (workspace / "f.txt").read_text() == "first\nnew line\nlast\n"
    child.send("\x1b[Z")                                                          # Shift-Tab
    child.expect_exact("approvals: auto_edit (shift-tab")


# ---- interrupting and typing ahead -------------------------------------------------------------

def test_esc_interrupts_like_ctrl_c(repl, standin):
    standin.queue({"text": "STREAMING " + "slowly " * 30, "hold": "mid", "chunk": 6}, {"text": "NEXT-OK"})
    child = repl()
    child.sendline("tell me a story")
    child.expect_exact("STREAMING")
    assert standin.wait_until_held()
    child.send("\x1b")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    turn(child, "carry on", "NEXT-OK")
    assert "^[" not in child.logfile_read.getvalue()
    assert user_texts(standin.requests[-1]["messages"]) == ["tell me a story", INTERRUPTED_MARK, "carry on"]


def test_typing_ahead_does_not_garble_the_answer_and_waits_at_the_prompt(repl, standin):
    standin.queue({"text": "FIRST " + "word " * 20 + "END-ONE", "hold": "mid", "chunk": 8},
                  {"text": "SECOND " + "word " * 20 + "END-TWO", "hold": "mid", "chunk": 8}, {"text": "THIRD-OK"})
    child = repl()
    child.sendline("one")
    child.expect_exact("FIRST")
    assert standin.wait_until_held()
    child.send("half a thought")
    standin.release()                                                     # written before the turn can end
    child.expect_exact("END-ONE")
    child.expect_exact(PROMPT)
    child.expect_exact("half a thought")                                  # it waits in the input, not sent
    rows = screen(child)
    assert rows[-1].startswith(PROMPT + "half a thought")
    assert not any("half a thought" in row for row in rows[:-1])            # and never mixed into the answer
    child.send("\x15")                                                    # Ctrl-U: clear it
    child.sendline("two")
    child.expect_exact("SECOND")
    assert standin.wait_until_held()
    child.send("queued question\r")                                        # with Enter: waits in the input too
    standin.release()                                                     # written before the turn can end
    child.expect_exact("END-TWO")
    child.expect_exact(PROMPT)
    child.expect_exact("queued question")
    assert len(standin.requests) == 2                                      # not sent by itself
    child.send("\r")                                                      # the person's own Enter sends it
    child.expect_exact("THIRD-OK")
    child.expect_exact(PROMPT)
    assert user_texts(standin.requests[-1]["messages"])[-1] == "queued question"


# ---- small things -----------------------------------------------------------------------------

def test_ctrl_c_hint_clear_cost_and_the_exit_hint(repl, standin, workspace):
    standin.queue({"text": "ANSWER-ONE"}, {"text": "ANSWER-TWO"})
    child = repl()
    child.sendcontrol("c")
    child.expect_exact("Ctrl-D or /quit to exit")
    child.sendcontrol("c")
    child.expect_exact(PROMPT)
    turn(child, "one", "ANSWER-ONE")
    child.sendline("/clear")
    child.expect_exact("history cleared")
    child.expect_exact(PROMPT)
    assert re.search(r"\x1b\[2J", child.logfile_read.getvalue())                  # the screen was cleared
    turn(child, "two", "ANSWER-TWO")
    child.sendline("/cost")
    child.expect_exact("1 model call (0 summaries)")
    child.expect_exact("this run, all its sessions: 2 model calls")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    raw = child.logfile_read.getvalue()
    assert raw.count("Ctrl-D or /quit to exit") == 1
    newest = list_sessions(workspace)[0].stem
    assert f"session {newest} saved" in raw
    # the interpreter and the script this test started, as it started them: a hint that works as written
    assert re.search(r"resume it with: \S*python\S* " + re.escape(AGENT) + " -c", raw)


def test_resuming_after_ctrl_c_says_nothing_but_after_kill_9_it_does(repl, standin, workspace):
    standin.queue({"text": "SLOW " + "words " * 30, "hold": "mid", "chunk": 6})
    child = repl()
    child.sendline("interrupt me")
    child.expect_exact("SLOW")
    assert standin.wait_until_held()
    child.sendcontrol("c")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    again = repl(args=("--continue",))
    assert "resumed session" in again.before and "not answered" not in again.before
    again.sendcontrol("d")
    again.expect(pexpect.EOF)
    texts = user_texts(load_session(list_sessions(workspace)[0]).messages)
    assert texts == ["interrupt me", INTERRUPTED_MARK]                        # no second mark either
    standin.release()                                                         # the first hold's thread
    standin.queue({"text": "DYING " + "words " * 30, "hold": "mid", "chunk": 6})
    dying = repl()
    dying.sendline("die now")
    dying.expect_exact("DYING")
    assert standin.wait_until_held()
    dying.kill(9)
    dying.close()
    resumed = repl(args=("--continue",))
    assert "the last request was not answered before the session stopped; /retry sends it again" in resumed.before
    texts = user_texts(load_session(list_sessions(workspace)[0]).messages)
    assert texts == ["die now", SESSION_STOPPED_MARK]


def test_a_long_paste_is_folded_and_sent_whole(repl, standin):
    standin.queue({"text": "GOT-PASTE"})
    child = repl(columns=60)
    pasted = "\n".join(f"pasted line {n}" for n in range(1, 13))
    child.send("look at this: \x1b[200~" + pasted + "\x1b[201~")
    child.expect_exact("[pasted 12 lines #1]")
    child.send(" thanks\r")
    child.expect_exact("GOT-PASTE")
    child.expect_exact(PROMPT)
    assert user_texts(standin.requests[-1]["messages"]) == ["look at this: " + pasted + " thanks"]


def test_soft_wrapped_input_is_not_marked_as_a_new_line(repl, standin):
    standin.queue({"text": "WRAPPED-OK"})
    child = repl(columns=60)
    child.send("word " * 25)
    child.expect_exact("word word")
    child.send("\x1b\r")                                                 # Esc Enter: a real new line
    child.send("second line")
    child.expect_exact("second line")
    rows = [row for row in screen(child, 60) if "word" in row or "second line" in row]
    assert rows[0].startswith(PROMPT) and not rows[1].lstrip().startswith("..")
    assert rows[-1].lstrip().startswith(".. second line")
    child.send("\r")
    child.expect_exact("WRAPPED-OK")


def test_esc_at_the_question_is_a_plain_no_and_ctrl_c_interrupts(repl, standin, workspace):
    standin.queue(bash("touch esc.txt"), {"text": "AFTER-ESC"}, bash("touch int.txt"), {"text": "NEXT-OK"})
    child = repl(approval_mode="default")
    child.sendline("one")
    child.expect_exact("every command this session")
    answer_question(child, "\x1b")
    child.expect_exact("AFTER-ESC")
    child.expect_exact(PROMPT)
    assert "Why?" not in child.logfile_read.getvalue() and not (workspace / "esc.txt").exists()
    assert standin.requests[-1]["messages"][-1]["content"][0]["content"].startswith("The user declined this bash")
    child.sendline("two")
    child.expect_exact("every command this session")
    answer_question(child, "\x03")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    turn(child, "three", "NEXT-OK")
    assert not (workspace / "int.txt").exists()
    results = [b for m in standin.requests[-1]["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b["type"] == "tool_result"]
    assert results[-1]["is_error"] and results[-1]["content"] == NOT_STARTED_RESULT        # it never started
    assert "  ⎿ not run: interrupted at the question" in screen(child)
    assert not any("interrupted by you" in row for row in screen(child))

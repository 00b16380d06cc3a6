"""Daily use in a real pseudo-terminal: a running command's lines show as they are printed (with a
long key to hide), the spinner comes back after an approval, and keys typed ahead wait in the next
prompt's input instead of being sent.

Each command here prints a line and then waits for a file that the test creates only after it has
seen that line on the screen: if a line were held back until the command ended, the test would wait
for it forever (and fail on pexpect's timeout) — no timing is asserted.
"""

from __future__ import annotations

import time

import pytest

from support.agents import base_env, spawn_agent
from support.helpers import answer_question, user_texts
from support.screen import Screen
from standin import StandIn

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
LONG_KEY = "sk-ant-api03-" + "Kq7x" * 23 + "AbC"          # 108 characters, as a real key is
STEPS = 4


def waiting_steps(n: int = STEPS) -> str:
    """A command that prints `step-i` and then waits for the file `go-i`, n times."""
    return (f"for i in $(seq {n}); do echo step-$i; "
            "while [ ! -e go-$i ]; do sleep 0.05; done; done; echo all-done")


def screen_rows(child, width: int = 200) -> list[str]:
    return Screen(width).feed(child.logfile_read.getvalue()).rows()


@pytest.fixture
def long_key_standin():
    assert len(LONG_KEY) == 108
    server = StandIn(api_key=LONG_KEY).start()
    yield server
    server.stop()
    assert not server.rejections, server.rejections


def test_each_line_shows_while_the_command_runs_with_a_long_key(tmp_path, workspace, long_key_standin):
    long_key_standin.queue({"tool_calls": [{"name": "bash", "input": {"command": waiting_steps()}}]},
                           {"text": "RAN-ALL"})
    child = spawn_agent(base_env(tmp_path, long_key_standin, anthropic_api_key=LONG_KEY), workspace, timeout=30)
    child.expect_exact(PROMPT)
    child.sendline("run the steps")
    child.expect_exact("running bash")
    for i in range(1, STEPS + 1):
        child.expect_exact(f"step-{i}")                    # on screen while the command waits for go-i
        child.expect_exact("esc to interrupt")              # the rest of that frame (the spinner under it)
        rows = screen_rows(child)
        live = [row.strip() for row in rows if row.strip().startswith("step-")]
        assert live[-1] == f"step-{i}"                      # the whole line, the newest last
        assert any("running bash" in row for row in rows)   # and the command is still running
        (workspace / f"go-{i}").touch()
    child.expect_exact("RAN-ALL")
    child.expect_exact(PROMPT)
    assert "exit 0" in child.logfile_read.getvalue()


def test_the_key_itself_never_shows_even_cut_across_reads(tmp_path, workspace, long_key_standin):
    (workspace / "k.txt").write_text(LONG_KEY)
    command = ("head -c 50 k.txt; echo -n; sleep 0.3; tail -c +51 k.txt; echo; echo shown-$((1+1)); "
               "while [ ! -e go ]; do sleep 0.05; done")
    long_key_standin.queue({"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "KEY-DONE"})
    child = spawn_agent(base_env(tmp_path, long_key_standin, anthropic_api_key=LONG_KEY), workspace, timeout=30)
    child.expect_exact(PROMPT)
    child.sendline("show the key")
    child.expect_exact("shown-2")
    assert "[redacted]" in child.logfile_read.getvalue()
    (workspace / "go").touch()
    child.expect_exact("KEY-DONE")
    child.expect_exact(PROMPT)
    shown = child.logfile_read.getvalue()
    assert LONG_KEY[:50] not in shown and LONG_KEY[50:] not in shown


def test_the_spinner_is_back_after_an_approval(repl, standin, workspace):
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": "touch started; " + waiting_steps(1)}}]},
                  {"text": "APPROVED-RAN"})
    child = repl(approval_mode="default")
    child.sendline("run it")
    child.expect_exact("every command this session")
    answer_question(child, "y")
    child.expect_exact("→ yes")
    child.expect_exact("running bash")                      # after the answer, while the command runs
    child.expect_exact("step-1")
    child.expect_exact("esc to interrupt")
    rows = screen_rows(child)
    assert any("running bash" in row and "esc to interrupt" in row for row in rows[-8:])
    assert not (workspace / "go-1").exists() and (workspace / "started").exists()
    (workspace / "go-1").touch()
    child.expect_exact("APPROVED-RAN")
    child.expect_exact(PROMPT)


def test_keys_typed_as_a_question_appears_wait_in_the_input_and_are_not_sent(repl, standin, workspace):
    standin.queue({"text": "Looking. " * 10, "delay": 0.05, "chunk": 9,
                   "tool_calls": [{"name": "bash", "input": {"command": "touch new1.txt"}}]},
                  {"text": "TOUCHED-ONE"}, {"text": "SENT-BY-ME"})
    child = repl(approval_mode="default")
    child.sendline("make new1")
    child.expect_exact("Looking.")
    child.expect_exact("? run this command?")
    child.send("arun touch new2.txt\r")                     # meant for the question, with an Enter after it
    child.expect_exact("every command this session")
    answer_question(child, "y")
    child.expect_exact("TOUCHED-ONE")
    child.expect_exact(PROMPT)
    child.expect_exact("arun touch new2.txt")               # in the input, for the person to edit
    time.sleep(1.0)                                         # (had it been sent, the request would be made now)
    assert len(standin.requests) == 2
    assert screen_rows(child)[-1].startswith(PROMPT + "arun touch new2.txt")
    assert (workspace / "new1.txt").exists() and not (workspace / "new2.txt").exists()
    child.send("\x15")                                      # Ctrl-U: the person clears it and types their own
    child.sendline("my own message")
    child.expect_exact("SENT-BY-ME")
    child.expect_exact(PROMPT)
    assert user_texts(standin.requests[-1]["messages"])[-1] == "my own message"


def test_the_small_things_at_100_columns(repl, workspace):
    """The demo at 100 columns: the status line fits one row and shows an "every command" grant after
    s; /help's rows line up; the demo counts a command's output lines right."""
    (workspace / "only.txt").write_text("x")
    child = repl(columns=100, args=("--demo",), approval_mode="default")
    child.sendline("run touch made.txt")
    child.expect_exact("every command this session")
    answer_question(child, "s")
    child.expect_exact("approvals default + every command")
    child.expect_exact(PROMPT)
    rows = screen_rows(child, 100)
    status = [row for row in rows if "approvals default + every command" in row]
    assert len(status) == 1 and status[0].startswith("demo model") and "context " in status[0]
    child.sendline("run ls")
    child.expect_exact("lines)")                                 # the demo's report of the output
    child.expect_exact(PROMPT)
    report = [row.strip() for row in screen_rows(child, 100) if "ok: made.txt" in row]
    assert report == ["• ok: made.txt (2 lines)"]                 # made.txt and only.txt, not the exit code
    child.sendline("/help")
    child.expect_exact("Keys")
    child.expect_exact(PROMPT)
    rows = screen_rows(child, 100)
    help_row, exit_row = next(r for r in rows if r.startswith("  /help ")), next(r for r in rows if "exit, q" in r)
    assert help_row.index("show commands") == exit_row.index("leave")

"""Plan mode in the REPL: Shift-Tab reaches it (default → auto_edit → plan), the prompt says so, a
change the model tries is refused without a question, and Shift-Tab leaves it again."""

from __future__ import annotations

import pytest

from approvals.plan_mode import PLAN_OFF, PLAN_ON

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
SHIFT_TAB = "\x1b[Z"


def test_shift_tab_into_plan_mode_and_out(repl, standin, workspace):
    standin.queue({"tool_calls": [{"name": "write_file", "input": {"path": "plan.txt", "content": "x"}}]},
                  {"text": "HERE-IS-THE-PLAN"}, {"text": "CARRYING-OUT"})
    child = repl(approval_mode="default")
    child.send(SHIFT_TAB)
    child.expect_exact("approvals: auto_edit")
    child.send(SHIFT_TAB)
    child.expect_exact("s: plan")                                    # (drawn over "approvals: auto_edit")
    child.sendline("plan a file")
    child.expect_exact("not run: plan mode (only reading)")
    child.expect_exact("HERE-IS-THE-PLAN")
    child.expect_exact("approvals plan (read only)")                 # the status line after the turn
    child.expect_exact(PROMPT)
    assert "? create plan.txt?" not in child.logfile_read.getvalue()  # refused, never asked
    assert not (workspace / "plan.txt").exists()
    texts = [b["text"] for b in standin.requests[0]["messages"][-1]["content"] if b.get("type") == "text"]
    assert texts == [PLAN_ON, "plan a file"]
    child.send(SHIFT_TAB)                                             # plan → default
    child.sendline("now do it")
    child.expect_exact("CARRYING-OUT")
    child.expect_exact("approvals default")
    last = standin.requests[-1]["messages"][-1]["content"]
    assert [b["text"] for b in last if b.get("type") == "text"] == [PLAN_OFF, "now do it"]

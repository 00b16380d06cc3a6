"""Approvals of MCP calls (approvals/policy.py): they ask by default, the person's allow list (Claude Code's
syntax) and "always" for one tool let them run, plan mode refuses what is not allowed, -p says how to allow."""

from __future__ import annotations

import pytest

from approvals.policy import Answer, Approvals, mcp_allowed


@pytest.mark.parametrize("entry, allowed", [("mcp__git", True), ("mcp__git__*", True), ("mcp__git__git_status", True),
                                            ("mcp__git__git_commit", False), ("mcp__gi", False), ("mcp", False),
                                            ("mcp__git__git", False), ("Bash(git status)", False)])
def test_claude_codes_allow_syntax(entry, allowed):
    assert mcp_allowed("mcp__git__git_status", (entry,)) is allowed


def test_an_mcp_call_asks_with_server_tool_and_arguments_and_always_is_per_tool():
    approvals = Approvals("auto_edit")
    request = approvals.needs_approval("mcp__git__git_commit", {"message": "m"})
    assert request is not None and request.kind == "mcp" and request.server == "git"
    assert '"message": "m"' in request.command
    approvals.remember(request, Answer(True, "prefix"))
    assert approvals.needs_approval("mcp__git__git_commit", {"message": "other"}) is None
    assert approvals.needs_approval("mcp__git__git_push", {}) is not None
    assert "1 MCP tool" in approvals.summary()
    approvals.forget()
    assert approvals.needs_approval("mcp__git__git_commit", {}) is not None


def test_the_persons_allow_list_and_yolo_run_without_asking():
    assert Approvals("default", allow_tools=("mcp__time",)).needs_approval("mcp__time__now", {}) is None
    assert Approvals("yolo").needs_approval("mcp__x__y", {}) is None
    assert Approvals("default").needs_approval("mcp_load_tools", {"names": ["a"]}) is None


def test_plan_mode_refuses_what_is_not_allowed_whatever_the_server_says():
    approvals = Approvals("plan", allow_tools=("mcp__time",))
    refusal, _ = approvals.decide("mcp__git__git_status", {}, None, None)
    assert refusal is not None and "plan mode" in refusal.notice
    assert approvals.decide("mcp__time__now", {}, None, None)[0] is None


def test_print_mode_says_how_to_allow_it_in_one_line():
    refusal, _ = Approvals("default").decide("mcp__git__git_commit", {"message": "x"}, None, None)
    assert refusal is not None and "\n" not in refusal.notice
    assert refusal.notice.startswith("[approval needed] mcp__git__git_commit was not run")
    assert '{"permissions": {"allow": ["mcp__git__git_commit"]}}' in refusal.notice

"""MCP in the REPL, in a pseudo-terminal: the approval question for an MCP call (server, tool, arguments —
escaped), "always" for that tool, the question about a project's .mcp.json (asked once for an exact entry,
again when it changes), /mcp and /context, and Esc ending a hung call."""

from __future__ import annotations

import json
import time

import pytest

from support.helpers import answer_question
from support.mcp_servers import edge_entry, user_servers

pytestmark = [pytest.mark.pty, pytest.mark.mcp]
PROMPT = "s08 >> "


def call(tool: str, **args) -> dict:
    return {"tool_calls": [{"name": tool, "input": args}]}


def test_the_approval_question_shows_server_tool_and_arguments_and_always_holds(repl, standin, tmp_path):
    user_servers(tmp_path / "home", {"edge": edge_entry()})
    standin.queue(call("mcp__edge__echo", text="FIRST\x1b[31m"), {"text": "ONE-DONE"},
                  call("mcp__edge__echo", text="SECOND"), {"text": "TWO-DONE"})
    child = repl(approval_mode="default")
    child.sendline("echo something")
    child.expect_exact("? call the MCP tool echo of server edge?")
    child.expect_exact('"text": "FIRST\\u001b[31m"')               # the escape shown as JSON, never obeyed
    child.expect_exact("yes, and always allow mcp__edge__echo this session")
    answer_question(child, "a")
    child.expect_exact("ONE-DONE")
    child.expect_exact(PROMPT)
    assert standin.requests[1]["messages"][-1]["content"][0]["content"] == "FIRST\x1b[31m"
    child.sendline("again")
    child.expect_exact("TWO-DONE")
    child.expect_exact(PROMPT)
    assert child.logfile_read.getvalue().count("? call the MCP tool") == 1     # "always" held


def test_a_project_server_is_asked_about_once_and_again_when_it_changes(repl, standin, workspace, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    entry = edge_entry(EDGE_MARKS=str(marks))
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))
    standin.queue({"text": "FIRST"}, {"text": "SECOND"}, {"text": "THIRD"})
    child = repl()
    child.sendline("hello")
    child.expect_exact("asks to start MCP servers that the repository chose")
    child.expect_exact("repo: ")
    child.expect_exact("[y/N]")
    time.sleep(0.5)
    child.sendline("y")
    child.expect_exact("FIRST")
    child.expect_exact(PROMPT)
    assert (marks / "pid").exists()
    child.sendline("/quit")
    child.expect_exact("resume it with")
    child.wait()

    child = repl()                                                # the same entry: no question
    child.sendline("hello")
    child.expect_exact("SECOND")
    child.expect_exact(PROMPT)
    assert "asks to start MCP servers" not in child.logfile_read.getvalue()
    child.sendline("/quit")
    child.wait()

    entry["args"].append("many")                                  # changed: asked again
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))
    child = repl()
    child.sendline("hello")
    child.expect_exact("asks to start MCP servers that the repository chose")
    time.sleep(0.5)
    child.sendline("n")
    child.expect_exact("[mcp] project servers not started: repo")
    child.expect_exact("THIRD")


def test_mcp_and_context_show_servers_and_their_schema_cost(repl, standin, tmp_path):
    user_servers(tmp_path / "home", {"edge": edge_entry("many"), "down": edge_entry("silent")})
    child = repl(mcp_timeout=20)
    child.sendline("/mcp")
    child.expect_exact("MCP servers")
    child.expect_exact("edge")
    child.expect_exact("running")
    child.expect_exact("87 tools")
    child.expect_exact("down")
    child.expect_exact("failed")
    child.expect_exact("deferred: over MCP_SCHEMA_BUDGET 5,000")
    child.expect_exact(PROMPT)
    child.sendline("/context")
    child.expect_exact("MCP schemas (in tools): edge 0, down 0, mcp_load_tools")
    child.expect_exact(PROMPT)


def test_esc_ends_a_hung_mcp_call_and_the_server_is_told(repl, standin, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    user_servers(tmp_path / "home", {"edge": edge_entry(EDGE_MARKS=str(marks))})
    standin.queue(call("mcp__edge__slow"), {"text": "AFTER"})
    child = repl()
    child.sendline("wait")
    child.expect_exact("running mcp__edge__slow")
    deadline = time.monotonic() + 60
    while not (marks / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send("\x1b")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    while not (marks / "cancelled").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (marks / "cancelled").exists()

"""Dispatch never raises: bad names, bad arguments and handler crashes become is_error results."""

from __future__ import annotations

from tools import REGISTRY, ToolContext, run_tool, tool, tool_schemas


def test_schemas_are_valid_api_tools():
    schemas = tool_schemas()
    assert {s["name"] for s in schemas} >= {"bash", "read_file", "write_file", "edit_file"}
    for s in schemas:
        assert s["input_schema"]["type"] == "object" and s["description"]
        assert set(s["input_schema"]["required"]) <= set(s["input_schema"]["properties"])


def test_unknown_tool(workspace):
    r = run_tool("delete_everything", {}, ToolContext(workspace=workspace))
    assert r.is_error and "Unknown tool 'delete_everything'" in r.content and "bash" in r.content


def test_missing_wrong_typed_and_unknown_arguments(workspace):
    ctx = ToolContext(workspace=workspace)
    r = run_tool("write_file", {"path": "a.txt"}, ctx)
    assert r.is_error and "missing required argument(s): content" in r.content
    r = run_tool("read_file", {"path": 42}, ctx)
    assert r.is_error and "'path' must be string" in r.content
    r = run_tool("read_file", {"path": "a.txt", "lines": 3}, ctx)
    assert r.is_error and "unknown argument(s): lines" in r.content
    r = run_tool("read_file", ["a.txt"], ctx)
    assert r.is_error and "must be a JSON object" in r.content
    r = run_tool("read_file", {"path": "a.txt", "limit": 0}, ctx)
    assert r.is_error and "at least 1" in r.content
    assert not (workspace / "a.txt").exists()


def test_quoted_integers_are_accepted(workspace):
    (workspace / "n.txt").write_text("1\n2\n3\n")
    r = run_tool("read_file", {"path": "n.txt", "offset": "2", "limit": "1"}, ToolContext(workspace=workspace))
    assert r.content.startswith("2\n")


def test_a_crashing_handler_becomes_an_error_result(workspace):
    @tool("explode", "always fails", {})
    def explode(ctx):
        raise RuntimeError("kaboom")
    try:
        r = run_tool("explode", {}, ToolContext(workspace=workspace))
        assert r.is_error and "RuntimeError: kaboom" in r.content
    finally:
        REGISTRY.pop("explode")

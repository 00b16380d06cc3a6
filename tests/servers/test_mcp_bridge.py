"""What crosses from an MCP server to the model (servers/bridge.py): names, schemas and results, all
untrusted — cleaned, bounded, or left out with one line. Properties where they are properties."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace as NS

from hypothesis import given
from hypothesis import strategies as st

from servers.bridge import (MAX_DESCRIPTION, MAX_IMAGES, MAX_RESULT_CHARS, bridge_tools, clean, convert_result,
                            split_name, tool_name)
from servers.config import NAME

SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}}}
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def tool(name, description="d", schema=SCHEMA, **more):
    return NS(name=name, description=description, input_schema=schema, **more)


@given(st.text())
def test_cleaned_text_holds_no_control_character_and_is_bounded(text):
    out = clean(text, 50)
    assert not UNSAFE.search(out) and len(out) <= 50
    out.encode("utf-8")


@given(st.from_regex(r"[A-Za-z0-9-]{1,15}(_[A-Za-z0-9-]{1,15})?", fullmatch=True), st.text(min_size=1))
def test_a_server_name_never_has_a_double_underscore_so_the_split_is_unique(server, name):
    assert NAME.match(server) and "__" not in server
    assert split_name(tool_name(server, name)) == (server, name)


def test_names_the_api_refuses_or_that_collide_are_left_out():
    listed = [tool("ok"), tool("b__c"), tool("bad name"), tool("n" * 80), tool("ok"), tool("esc\x1b[2J"),
              tool("bash")]
    tools, problems = bridge_tools("srv", listed, {"bash", "mcp__srv__bash"})
    assert [t.name for t in tools] == ["mcp__srv__ok", "mcp__srv__b__c"]
    assert [t.original for t in tools] == ["ok", "b__c"]
    assert len(problems) == 5 and all("\x1b" not in p for p in problems)
    assert sum("another tool has that name" in p for p in problems) == 2


def test_descriptions_and_schemas_are_cleaned_and_bounded():
    hostile = tool("t", "\x1b[2J\x1b]0;pwned\x07" + "D" * 100_000,
                   {"type": "object", "properties": {"k\x1b[31m": {"type": "string", "description": "\x1b[5mblink"}}})
    [t], _ = bridge_tools("s", [hostile], set())
    sent = json.dumps(t.api_schema())
    assert "\\u001b" not in sent and "\\u0007" not in sent and "pwned" not in sent
    assert len(t.description) <= MAX_DESCRIPTION and list(t.schema["properties"]) == ["k"]


def test_schemas_that_cannot_be_sent_leave_the_tool_out():
    deep: dict = {"type": "object"}
    node = deep
    for _ in range(40):
        node["properties"] = {"a": {"type": "object"}}
        node = node["properties"]["a"]
    listed = [tool("array", schema={"type": "array"}), tool("none", schema=None), tool("deep", schema=deep),
              tool("nan", schema={"type": "object", "default": float("nan")}),
              tool("huge", schema={"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 500}
                                                                     for i in range(100)}})]
    tools, problems = bridge_tools("s", listed, set())
    assert not tools and len(problems) == 5


def test_results_text_images_structured_and_errors():
    text = NS(type="text", text="hello")
    png = NS(type="image", mime_type="image/png", data="aGk=")
    svg = NS(type="image", mime_type="image/svg+xml", data="PHN2Zz4=")
    out = convert_result(NS(content=[text, png, svg] + [png] * 6, structured_content=None, is_error=False))
    assert out.text.startswith("hello") and "cannot read" in out.text and len(out.images) == MAX_IMAGES
    assert out.images[0] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}
    structured = convert_result(NS(content=[], structured_content={"n": 1}, is_error=True))
    assert structured.text == '{"n": 1}' and structured.is_error
    assert convert_result(NS(content=[], structured_content=None, is_error=False)).text == "(no output)"
    link = convert_result(NS(content=[NS(type="resource_link", uri="file:///x\x1b[2J")], is_error=False))
    assert link.text == "[resource: file:///x]"


def test_a_result_too_big_for_anything_is_cut_here_and_says_so():
    out = convert_result(NS(content=[NS(type="text", text="x" * (MAX_RESULT_CHARS + 10))], is_error=False))
    assert len(out.text) < MAX_RESULT_CHARS + 200 and "s08 keeps" in out.text


def test_a_server_with_thousands_of_tools_gives_at_most_max_tools():
    from servers.bridge import MAX_TOOLS
    tools, problems = bridge_tools("s", [tool(f"t{i}") for i in range(5_000)], set())
    assert len(tools) == MAX_TOOLS and problems == [f"s: only the first {MAX_TOOLS} of its 5000 tools are used"]

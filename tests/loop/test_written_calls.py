"""Tool calls written as text (loop/written_calls.py): each format small models use is recognized when it
names an offered tool, and nothing else is."""

from __future__ import annotations

import pytest

from loop.written_calls import written_call

OFFERED = ["bash", "read_file", "write_file"]


@pytest.mark.parametrize("text, name", [
    ('<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>', "read_file"),
    ('Let me look.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}', "bash"),         # unclosed
    ('<|python_tag|>{"name": "bash", "parameters": {"command": "ls"}}', "bash"),                       # Llama 3.1
    ('[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "x"}}]', "read_file"),                  # Mistral
    ('<function=write_file>{"path": "x", "content": "y"}</function>', "write_file"),
    ('{"name": "read_file", "arguments": {"path": "x"}}', "read_file"),
    ('  [{"name": "bash", "input": {"command": "ls"}}]  ', "bash"),
    ('{"type": "function", "function": {"name": "bash", "arguments": "{}"}}', "bash"),
    ('I will read it:\n```json\n{"name": "read_file", "args": {"path": "x"}}\n```', "read_file"),
    # a file's lines written into the string as they are (raw newlines, tabs: not strict JSON, what models write)
    ('<tool_call>\n{"name": "write_file", "arguments": {"path": "a.py", "content": "def f():\n\treturn 1\n"}}\n</tool_call>',
     "write_file"),
    ('{"name": "bash", "arguments": {"command": "printf \'a\nb\'"}}', "bash"),
])
def test_each_written_format_is_recognized(text, name):
    assert written_call(text, OFFERED) == name


@pytest.mark.parametrize("text", [
    "The file holds one function.",
    '{"name": "Alice", "arguments": ["a"]}',                   # not a tool offered
    '{"name": "read_file"}',                                   # no input: a mention, not a call
    '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
    '```json\n{"name": "read_file", "arguments": {"path": "x"}}\n```\nThat is what such a call looks like.',
    '<tool_call>{not json</tool_call>',
    "[" * 100_000,                                             # deep nesting: no crash
    "",
])
def test_what_is_not_a_call_to_an_offered_tool_is_left_alone(text):
    assert written_call(text, OFFERED) is None

"""Tool calls a model wrote as text instead of making them — what Qwen, Llama, Hermes and Mistral models
answer when the server's tool-call parser misses their format: the call arrives as the answer's text.

    written_call(text, offered) -> the tool's name, or None
    CORRECTION.format(name=...)    s08's one-line note to the model after such an answer

s08 never runs a call it only read in text (text is not a call: the person's approval, the hooks and
the id that ties a result to its call all belong to real tool calls, and the text may be an example the
model is quoting); like Claude Code and Codex it leaves it unrun. The loop (loop/agent_loop.py) answers
it once per turn with CORRECTION, so the model can make the call properly, and tells the person.

Recognized, when the named tool is one offered to the model (so JSON the person asked for is left alone):
- `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes, Qwen), closed or not;
- `<|python_tag|>{...}` (Llama 3.1) and `[TOOL_CALLS][{...}]` (Mistral), then the JSON;
- `<function=NAME>{...}</function>` (Llama 3.1's custom format);
- an answer that is nothing but such an object (or a list of them), or that ends with one in a ``` fence.
The object names the tool under "name" (or "function": {"name"}) and holds its input under "arguments",
"parameters", "input" or "args". Its strings may hold raw newlines and tabs (not strict JSON, but how a
model writes a file's lines into a call it writes out).
"""

from __future__ import annotations

import json
import re

MAX_TEXT = 200_000            # characters looked at: a longer answer is not a call
_TAGS = re.compile(r"<tool_call>|<\|python_tag\|>|\[TOOL_CALLS\]|<function_call>")
_FUNCTION = re.compile(r"<function=([A-Za-z0-9_.-]{1,128})>")
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n([^`]*)\n```$")
_INPUT_KEYS = ("arguments", "parameters", "input", "args")
_LENIENT = json.JSONDecoder(strict=False)          # control characters allowed inside strings

CORRECTION = ("[s08: your last answer wrote a call to {name} as text; s08 runs only real tool calls, so it was not "
              "run. If you meant to run it, make the call with the tool-use interface now, not as text.]")


def _named(value, offered: set[str]) -> str | None:
    """The offered tool a decoded object (or the first of a list of them) calls, if it is one."""
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, dict):
        return None
    name = value.get("name")
    if isinstance(value.get("function"), dict):
        name = value["function"].get("name", name)
    has_input = any(k in value for k in _INPUT_KEYS) or isinstance(value.get("function"), dict)
    return name if isinstance(name, str) and name in offered and has_input else None


def _decoded(text: str):
    """The JSON value at the start of `text` (after blanks), or None."""
    try:
        value, _ = _LENIENT.raw_decode(text.lstrip())
    except (ValueError, RecursionError):
        return None
    return value


def written_call(text: str, offered) -> str | None:
    """The name of the offered tool `text` writes a call to, or None when it is not a call written out."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        return None
    offered = set(offered)
    for tag in _TAGS.finditer(text):
        name = _named(_decoded(text[tag.end():]), offered)
        if name:
            return name
    for function in _FUNCTION.finditer(text):
        if function.group(1) in offered:
            return function.group(1)
    whole = text.strip()
    fenced = _FENCE.search(whole)
    whole = fenced.group(1).strip() if fenced else whole
    if whole[:1] in "{[":
        try:
            return _named(_LENIENT.decode(whole), offered)
        except (ValueError, RecursionError):
            return None
    return None

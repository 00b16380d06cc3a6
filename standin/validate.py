"""Strict validation of a Messages API request, with the real API's error wording.

`validate_request(body)` raises InvalidRequest with the message the real API
would put in its 400 invalid_request_error. The rules that matter most to an
agent are the pairing rules: every `tool_use` must be answered by a
`tool_result` at the start of the very next (user) message, every
`tool_result` must answer a `tool_use` of the message right before it, and
no text block may be empty. As the real API does, consecutive messages of the
same role are first merged into one turn, and the pairing rules are checked
on turns — so a user message of tool results followed by a user text message
is fine, but text that ends up before the tool results of a turn is not. The
first message must be the user's.
"""

from __future__ import annotations

import re

TOP_LEVEL = {"model", "messages", "max_tokens", "system", "tools", "tool_choice", "stream", "temperature",
             "top_p", "top_k", "stop_sequences", "metadata", "thinking", "service_tier", "container",
             "context_management", "output_config", "mcp_servers", "cache_control", "inference_geo"}
USER_BLOCKS = {"text", "image", "document", "tool_result", "search_result"}
ASSISTANT_BLOCKS = {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use",
                    "web_search_tool_result"}
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_CACHE_BREAKPOINTS = 4


class InvalidRequest(ValueError):
    """The 400 invalid_request_error message the real API would return."""


def _text_ok(text, where: str) -> None:
    if not isinstance(text, str):
        raise InvalidRequest(f"{where}.text: Input should be a valid string")
    if text == "":
        raise InvalidRequest("messages: text content blocks must be non-empty")
    if not text.strip():
        raise InvalidRequest("messages: text content blocks must contain non-whitespace text")


def _check_block(block, i: int, j: int, role: str, seen_ids: set) -> None:
    where = f"messages.{i}.content.{j}"
    if not isinstance(block, dict) or "type" not in block:
        raise InvalidRequest(f"{where}: Input should be a valid dictionary or object to extract fields from")
    kind = block["type"]
    allowed = USER_BLOCKS if role == "user" else ASSISTANT_BLOCKS
    if kind not in USER_BLOCKS | ASSISTANT_BLOCKS:
        raise InvalidRequest(f"{where}.type: Input tag '{kind}' found using 'type' does not match any "
                             "of the expected tags")
    if kind not in allowed:
        raise InvalidRequest(f"{where}: `{kind}` blocks can only be in "
                             f"`{'assistant' if role == 'user' else 'user'}` messages")
    if kind == "text":
        _text_ok(block.get("text"), where)
    elif kind == "tool_use":
        tid = block.get("id")
        if not isinstance(tid, str) or not TOOL_ID.match(tid):
            raise InvalidRequest(f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        if not isinstance(block.get("name"), str) or not block["name"]:
            raise InvalidRequest(f"{where}.tool_use.name: Field required")
        if not isinstance(block.get("input"), dict):
            raise InvalidRequest(f"{where}.tool_use.input: Input should be a valid dictionary")
        if tid in seen_ids:
            raise InvalidRequest(f"{where}: `tool_use` ids must be unique")
        seen_ids.add(tid)
    elif kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            raise InvalidRequest(f"{where}.tool_result.tool_use_id: Field required")
        content = block.get("content", "")
        if isinstance(content, list):
            for k, inner in enumerate(content):
                if not isinstance(inner, dict) or inner.get("type") not in ("text", "image", "document",
                                                                           "search_result"):
                    raise InvalidRequest(f"{where}.tool_result.content.{k}: invalid block")
                if inner.get("type") == "text":
                    _text_ok(inner.get("text"), f"{where}.content.{k}")
        elif not isinstance(content, str):
            raise InvalidRequest(f"{where}.tool_result.content: Input should be a valid string or list")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise InvalidRequest(f"{where}.tool_result.is_error: Input should be a valid boolean")


def _turns(messages: list) -> list[tuple[int, str, list]]:
    """Merge runs of same-role messages: (index of the run's first message, role, blocks)."""
    turns: list[tuple[int, str, list]] = []
    for i, msg in enumerate(messages):
        content = msg["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if turns and turns[-1][1] == msg["role"]:
            turns[-1][2].extend(blocks)
        else:
            turns.append((i, msg["role"], blocks))
    return turns


def _check_pairing(messages: list) -> None:
    turns = _turns(messages)
    for t, (i, role, blocks) in enumerate(turns):
        prev = turns[t - 1] if t > 0 else None
        expected = [b["id"] for b in prev[2] if b.get("type") == "tool_use"] if prev and prev[1] == "assistant" else []
        seen = set()
        for j, b in enumerate(blocks):
            if b.get("type") != "tool_result":
                continue
            if b["tool_use_id"] not in expected:
                raise InvalidRequest(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{b['tool_use_id']}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message.")
            if b["tool_use_id"] in seen:
                raise InvalidRequest(f"messages.{i}.content.{j}: each tool_use must have a single result. "
                                     f"Found multiple `tool_result` blocks with id: {b['tool_use_id']}")
            seen.add(b["tool_use_id"])
        ids = [b["id"] for b in blocks if b.get("type") == "tool_use"] if role == "assistant" else []
        if not ids:
            continue
        following = turns[t + 1][2] if t + 1 < len(turns) else []
        answered = {b.get("tool_use_id") for b in following if b.get("type") == "tool_result"}
        missing = [x for x in ids if x not in answered]
        if missing:
            raise InvalidRequest(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message.")
        leading = 0
        for b in following:
            if b.get("type") != "tool_result":
                break
            leading += 1
        if leading < len(ids):
            raise InvalidRequest(
                f"messages.{turns[t + 1][0]}: Did not find {len(ids)} tool_result block(s) at the beginning of "
                "this message. Messages following tool_use blocks must begin with a matching number of "
                "tool_result blocks.")


def _cache_controls(body: dict):
    """(where, cache_control) of every marked block, in the order the API processes them."""
    for k, t in enumerate(body.get("tools") or []):
        if isinstance(t, dict) and t.get("cache_control"):
            yield f"tools.{k}", t["cache_control"]
    if isinstance(body.get("system"), list):
        for k, b in enumerate(body["system"]):
            if isinstance(b, dict) and b.get("cache_control"):
                yield f"system.{k}", b["cache_control"]
    for i, m in enumerate(body.get("messages") or []):
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            for j, b in enumerate(m["content"]):
                if isinstance(b, dict) and b.get("cache_control"):
                    yield f"messages.{i}.content.{j}", b["cache_control"]


def _check_cache_ttls(body: dict) -> None:
    """Each cache_control is {"type": "ephemeral"} with an optional ttl of 5m or 1h, and no 1h breakpoint
    comes after a 5m one."""
    seen_short = False
    for where, control in _cache_controls(body):
        if not isinstance(control, dict) or control.get("type") != "ephemeral":
            raise InvalidRequest(f"{where}.cache_control.type: Input should be 'ephemeral'")
        ttl = control.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            raise InvalidRequest(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
        if ttl == "1h" and seen_short:
            raise InvalidRequest(f"{where}.cache_control.ttl: a ttl='1h' cache_control block must not come after "
                                 "a ttl='5m' cache_control block. Note that blocks are processed in the following "
                                 "order: `tools`, `system`, `messages`.")
        seen_short |= ttl == "5m"


def _count_cache_control(body: dict) -> int:
    count = 0
    system = body.get("system")
    for part in (body.get("tools") or [], system if isinstance(system, list) else []):
        count += sum(1 for b in part if isinstance(b, dict) and b.get("cache_control"))
    for m in body.get("messages") or []:
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict):
                    count += bool(b.get("cache_control"))
                    if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                        count += sum(1 for x in b["content"] if isinstance(x, dict) and x.get("cache_control"))
    return count


def _check_tools(tools) -> None:
    if not isinstance(tools, list):
        raise InvalidRequest("tools: Input should be a valid list")
    names = set()
    for k, t in enumerate(tools):
        if not isinstance(t, dict) or not TOOL_NAME.match(str(t.get("name", ""))):
            raise InvalidRequest(f"tools.{k}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
        schema = t.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise InvalidRequest(f"tools.{k}.custom.input_schema: Input should be a valid dictionary with "
                                 "type 'object'")
        if t["name"] in names:
            raise InvalidRequest("tools: Tool names must be unique.")
        names.add(t["name"])


def _check_message(msg, i: int, last: bool, seen_ids: set) -> None:
    """Raise InvalidRequest if message `i` is not one the real API takes there."""
    if not isinstance(msg, dict):
        raise InvalidRequest(f"messages.{i}: Input should be a valid dictionary")
    for key in msg:
        if key not in ("role", "content"):
            raise InvalidRequest(f"messages.{i}.{key}: Extra inputs are not permitted")
    if msg.get("role") not in ("user", "assistant"):
        raise InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    if "content" not in msg:
        raise InvalidRequest(f"messages.{i}.content: Field required")
    if i == 0 and msg["role"] != "user":
        raise InvalidRequest('messages: first message must use the "user" role')
    content = msg["content"]
    if isinstance(content, str):
        if not (last and msg["role"] == "assistant"):
            _text_ok(content, f"messages.{i}.content")
    elif isinstance(content, list):
        if not content and not (last and msg["role"] == "assistant"):
            raise InvalidRequest(f"messages.{i}: all messages must have non-empty content except for "
                                 "the optional final assistant message")
        for j, block in enumerate(content):
            _check_block(block, i, j, msg["role"], seen_ids)
    else:
        raise InvalidRequest(f"messages.{i}.content: Input should be a valid string or list")
    if last and msg["role"] == "assistant":
        tail = content if isinstance(content, str) else next(
            (b.get("text", "") for b in reversed(content) if b.get("type") == "text"), "")
        if tail and tail != tail.rstrip():
            raise InvalidRequest("messages: final assistant content cannot end with trailing whitespace")


def validate_request(body) -> None:
    """Raise InvalidRequest if the real API would refuse this request body."""
    if not isinstance(body, dict):
        raise InvalidRequest("Input should be a valid dictionary")
    for key in body:
        if key not in TOP_LEVEL:
            raise InvalidRequest(f"{key}: Extra inputs are not permitted")
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            raise InvalidRequest(f"{key}: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        raise InvalidRequest("model: Input should be a valid string")
    if not isinstance(body["max_tokens"], int) or isinstance(body["max_tokens"], bool):
        raise InvalidRequest("max_tokens: Input should be a valid integer")
    if body["max_tokens"] < 1:
        raise InvalidRequest("max_tokens: Input should be greater than or equal to 1")
    system = body.get("system")
    if isinstance(system, list):
        for k, b in enumerate(system):
            if not isinstance(b, dict) or b.get("type") != "text":
                raise InvalidRequest(f"system.{k}: Input should be a valid text block")
            _text_ok(b.get("text"), f"system.{k}")
    elif system is not None and not isinstance(system, str):
        raise InvalidRequest("system: Input should be a valid string or list of text blocks")
    if "tools" in body:
        _check_tools(body["tools"])
    messages = body["messages"]
    if not isinstance(messages, list):
        raise InvalidRequest("messages: Input should be a valid list")
    if not messages:
        raise InvalidRequest("messages: at least one message is required")
    seen_ids: set = set()
    for i, msg in enumerate(messages):
        _check_message(msg, i, i == len(messages) - 1, seen_ids)
    _check_pairing(messages)
    _check_cache_ttls(body)
    found = _count_cache_control(body)
    if found > MAX_CACHE_BREAKPOINTS:
        raise InvalidRequest(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be "
                             f"provided. Found {found}.")

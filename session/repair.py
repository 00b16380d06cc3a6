"""Make a replayed history one the API accepts, whatever the log held.

A log can be damaged, planted or cut short in ways the record checks of session/log.py do not see (a
well-formed record that breaks the pairing rules, a duplicated line, a tool call whose result was
never written). `make_sendable(messages)` returns a history that follows the API's rules — the same
rules the stand-in enforces (standin/validate.py) — changing as little as possible:

- blocks that cannot be sent (unknown types, empty text, tool calls without a usable id, name or
  input, a repeated tool-call id) are dropped, and messages left empty with them;
- the history starts with the person's message;
- the user turn after a turn of tool calls starts with exactly one result per call, in order:
  results that answer nothing are dropped, missing ones are added as "interrupted";
- tool results anywhere else are dropped;
- cache_control marks are removed (s08 adds its own to each request, at most four are allowed).

It returns the new list and one line per kind of change (empty when nothing had to change).
"""

from __future__ import annotations

import re

USER_BLOCKS = {"text", "image", "document", "tool_result", "search_result"}
ASSISTANT_BLOCKS = {"text", "tool_use", "thinking", "redacted_thinking"}
STOPPED_RESULT = "The session stopped before this tool call finished; it may not have completed."
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
RESULT_INNER = {"text", "image", "document", "search_result"}


def _text_ok(text) -> bool:
    return isinstance(text, str) and bool(text.strip())


def _block_ok(block, role: str, seen_ids: set) -> bool:
    if not isinstance(block, dict) or block.get("type") not in (USER_BLOCKS if role == "user" else ASSISTANT_BLOCKS):
        return False
    kind = block["type"]
    if kind == "text":
        return _text_ok(block.get("text"))
    if kind == "tool_use":
        tid = block.get("id")
        ok = (isinstance(tid, str) and TOOL_ID.match(tid) and tid not in seen_ids and isinstance(block.get("input"), dict)
              and isinstance(block.get("name"), str) and bool(block["name"]))
        if ok:
            seen_ids.add(tid)
        return bool(ok)
    if kind == "tool_result":
        content = block.get("content", "")
        inner_ok = isinstance(content, str) or (isinstance(content, list) and all(
            isinstance(b, dict) and b.get("type") in RESULT_INNER and (b["type"] != "text" or _text_ok(b.get("text")))
            for b in content))
        return isinstance(block.get("tool_use_id"), str) and inner_ok and isinstance(block.get("is_error", False), bool)
    return True


def _without_cache_marks(block: dict) -> dict:
    """s08 places its own cache breakpoints on each request; one stored in the log would add to them."""
    if "cache_control" not in block and not isinstance(block.get("content"), list):
        return block
    clean = {k: v for k, v in block.items() if k != "cache_control"}
    if isinstance(clean.get("content"), list):
        clean["content"] = [{k: v for k, v in b.items() if k != "cache_control"} for b in clean["content"]]
    return clean


def _blocks(message: dict) -> list:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def make_sendable(messages: list[dict], stopped_note: str) -> tuple[list[dict], list[str]]:
    """A valid history from `messages` (never mutated) and what was changed to get it."""
    dropped = stray = 0
    seen_ids: set = set()
    out: list[dict] = []
    pending: list[str] = []            # tool_use ids of the assistant turn that ends `out`, not yet answered
    answered_mid = answered_end = 0
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            dropped += 1
            continue
        content = [_without_cache_marks(b) for b in _blocks(message) if _block_ok(b, role, seen_ids)]
        dropped += len(_blocks(message)) - len(content)
        if role == "assistant":
            if not out or not content:
                dropped += bool(content)          # a whole message before the person's first one
                continue
            pending += [b["id"] for b in content if b["type"] == "tool_use"]
            out.append(_same_shape(message, content))
            continue
        results = [b for b in content if b["type"] == "tool_result"]
        others = [b for b in content if b["type"] != "tool_result"]
        if out and out[-1]["role"] == "assistant":          # the start of a user turn: answer every call
            by_id = {}
            for b in results:
                if b["tool_use_id"] in pending and b["tool_use_id"] not in by_id:
                    by_id[b["tool_use_id"]] = b
            stray += len(results) - len(by_id)
            missing = [i for i in pending if i not in by_id]
            answered_mid += len(missing)
            content = [by_id.get(i) or _stopped(i, stopped_note) for i in pending] + others
            pending = []
        else:
            stray += len(results)
            content = others
        if content:
            out.append(_same_shape(message, content))
    if pending:
        out.append({"role": "user", "content": [_stopped(i, stopped_note) for i in pending]})
        answered_end = len(pending)
    return out, _notes(dropped, stray, answered_mid, answered_end)


def _same_shape(message: dict, content: list) -> dict:
    """The message with `content`; a plain-string message stays a string when nothing changed."""
    if isinstance(message.get("content"), str) and len(content) == 1 and content[0].get("text") == message["content"]:
        return {"role": message["role"], "content": message["content"]}
    return {"role": message["role"], "content": content}


def _stopped(tool_use_id: str, note: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": note, "is_error": True}


def _notes(dropped: int, stray: int, answered_mid: int, answered_end: int) -> list[str]:
    notes = []
    if answered_end:
        notes.append(f"{answered_end} tool call{'s' if answered_end > 1 else ''} cut off when the session stopped "
                     "— marked as interrupted")
    fixes = []
    if dropped:
        fixes.append(f"dropped {dropped} unusable block(s) or message(s)")
    if stray:
        fixes.append(f"dropped {stray} tool result(s) that answered no call")
    if answered_mid:
        fixes.append(f"marked {answered_mid} tool call(s) without a result as interrupted")
    if fixes:
        notes.append("the session log held a history the API would refuse; " + ", ".join(fixes))
    return notes

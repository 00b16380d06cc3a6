"""Where a history may be cut, and what must survive any cut. Every layer uses these.

A cut at index i splits `messages[:i] | messages[i:]`. It is safe when no
tool_use/tool_result pair straddles it — the tool_use in front of the cut and
its result behind it. From that one rule follow the others: the part behind a
safe cut never starts with a tool_result, and text placed at a safe cut never
lands before tool_result blocks.

    0 user "fix the bug"        cuts: 0 ✓  1 ✓
    1 assistant tool_use A            2 ✗ (A straddles)
    2 user tool_result A              3 ✓
    3 assistant "done"                4 ✓

What must survive a cut (the person's messages, the work ledger) is decided by
continuity.py, from what s08 recorded — never by how a text looks.
"""

from __future__ import annotations

from messages import blocks
from .markers import ATTACHED_OPEN


def tool_names(messages: list[dict]) -> dict[str, str]:
    """tool_use id → tool name, over the whole history."""
    return {b["id"]: b.get("name", "tool") for m in messages if m.get("role") == "assistant"
            for b in blocks(m) if b.get("type") == "tool_use"}


def safe_cuts(messages: list[dict]) -> list[bool]:
    """safe[i] for i in 0..len(messages): True when no tool pair straddles a cut at i."""
    n = len(messages)
    used_at = {}
    for k, m in enumerate(messages):
        if m.get("role") == "assistant":
            for b in blocks(m):
                if b.get("type") == "tool_use":
                    used_at[b["id"]] = k
    cover = [0] * (n + 2)
    for j, m in enumerate(messages):
        if m.get("role") != "user" or isinstance(m.get("content"), str):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_result" and b.get("tool_use_id") in used_at:
                k = used_at[b["tool_use_id"]]
                if k < j:
                    cover[k + 1] += 1   # cuts k+1 .. j are unsafe
                    cover[j + 1] -= 1
            elif b.get("type") == "tool_result":
                cover[j] += 1           # an orphan result: never cut right in front of it
                cover[j + 1] -= 1
    safe, running = [], 0
    for i in range(n + 1):
        running += cover[i]
        safe.append(running == 0)
    return safe


def unseen_start(messages: list[dict]) -> int:
    """Index where the latest tool round the model has not seen yet begins (len if there is none).

    Before a model call, a history ending in tool results holds a round the model has not
    read: the assistant message that asked for the tools and the results after it. A history ending in
    the person's message with files attached (@path, loop/mentions.py) holds those files, unread: that message
    is kept too (the person's own text is kept anyway; the files would be lost)."""
    n = i = len(messages)
    while i > 0 and messages[i - 1].get("role") == "user":
        i -= 1
    if any(b.get("type") == "tool_result" for m in messages[i:] for b in blocks(m)):
        return max(0, i - 1)
    if any(b.get("type") == "text" and str(b.get("text", "")).startswith(ATTACHED_OPEN)
           for m in messages[i:] for b in blocks(m)):
        return i
    return n


def result_text(block: dict) -> str:
    """The text of a tool_result's content, whether a string or a list of blocks."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def replace_blocks(messages: list[dict], changes: dict[int, dict[int, dict]]) -> list[dict]:
    """A copy of the history with content blocks replaced: changes[message index][block index] = the new
    block (the input and its messages are not touched; unchanged messages are the same objects)."""
    out = list(messages)
    for i, blocks_changed in changes.items():
        content = list(messages[i]["content"])
        for j, block in blocks_changed.items():
            content[j] = block
        out[i] = {**messages[i], "content": content}
    return out

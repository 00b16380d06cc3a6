"""Helpers over the message list — plain dicts, exactly as the API takes them.

The history must always be sendable: every `tool_use` answered by a
`tool_result` at the start of the next user message, roles alternating,
no empty text. `add_user_text` keeps alternation by folding new text into a
trailing user message (after its tool results), and `close_dangling_tool_uses`
answers any tool call left open by an interruption.
"""

from __future__ import annotations

INTERRUPTED_RESULT = "Interrupted by the user before this tool call finished; it may not have completed."
NOT_STARTED_RESULT = "Not run: the user interrupted before this tool call started."
INTERRUPTED_MARK = "[Request interrupted by user]"
SESSION_STOPPED_MARK = "[The session stopped before this request was answered]"
STOP_MARKS = (INTERRUPTED_MARK, SESSION_STOPPED_MARK)
PERSON_NOTES = ("[you ran] ", "[undone by you] ", "[rewound by you] ")   # what the person did, not a request


def blocks(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content or [])


def tool_uses(message: dict) -> list[dict]:
    if message.get("role") != "assistant":
        return []
    return [b for b in blocks(message) if b.get("type") == "tool_use"]


def tool_result(tool_use_id: str, content: str, is_error: bool = False) -> dict:
    block: dict = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content or "(no output)"}
    if is_error:
        block["is_error"] = True
    return block


def text_of(message: dict) -> str:
    return "\n".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text")


def clean_text(text: str) -> str:
    """Text as valid UTF-8: undecodable input bytes (surrogates) become U+FFFD instead of
    breaking every later request."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape" if _escaped_only(text) else "surrogatepass") \
            .decode("utf-8", "replace")


def _escaped_only(text: str) -> bool:
    return all(not ("\ud800" <= ch <= "\udfff") or "\udc80" <= ch <= "\udcff" for ch in text)


def drop_interruption_marks(messages: list[dict]) -> None:
    """Remove "[Request interrupted by user]" (or the session-stopped mark) from the end of the history,
    before a retry."""
    if not messages or messages[-1].get("role") != "user":
        return
    kept = list(blocks(messages[-1]))
    while kept and kept[-1].get("type") == "text" and kept[-1].get("text") in STOP_MARKS:
        kept.pop()
    if len(kept) == len(blocks(messages[-1])):
        return
    if kept:
        messages[-1] = {"role": "user", "content": kept}
    else:
        messages[:] = list(messages)[:-1]


def add_user_text(messages: list[dict], text: str) -> None:
    """Append text to the history, merging into a trailing user message so roles still alternate
    (after its tool results, if it has any)."""
    if not text.strip():
        return
    text = clean_text(text)
    if messages and messages[-1].get("role") == "user":
        last = messages[-1]
        messages[-1] = {"role": "user", "content": blocks(last) + [{"type": "text", "text": text}]}
    else:
        messages.append({"role": "user", "content": text})


def close_dangling_tool_uses(messages: list[dict], note: str = INTERRUPTED_RESULT) -> int:
    """Answer the tool calls of the last assistant message that have no result yet — whether no
    results came at all, or only some of a parallel round did. Returns how many were answered."""
    if not messages:
        return 0
    if messages[-1].get("role") == "assistant":
        open_calls = tool_uses(messages[-1])
        if open_calls:
            messages.append({"role": "user", "content": [tool_result(b["id"], note, True) for b in open_calls]})
        return len(open_calls)
    if len(messages) < 2 or messages[-2].get("role") != "assistant":
        return 0
    content = blocks(messages[-1])
    answered = {b.get("tool_use_id") for b in content if b.get("type") == "tool_result"}
    missing = [b for b in tool_uses(messages[-2]) if b["id"] not in answered]
    if not answered or not missing:
        return 0
    at = sum(1 for b in content if b.get("type") == "tool_result")     # after the results, before any text
    messages[-1] = {"role": "user", "content": content[:at] + [tool_result(b["id"], note, True) for b in missing]
                    + content[at:]}
    return len(missing)

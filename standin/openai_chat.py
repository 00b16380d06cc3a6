"""The stand-in's second dialect: a small OpenAI-compatible backend (`POST /v1/chat/completions`), the
kind a gateway such as LiteLLM puts behind its Anthropic-style `/v1/messages`.

    chat_check(body, window, plain_only) -> (prompt tokens, refusal or None)
    chat_answer(body, reply, prompt)     -> the completion (JSON), and its chunks when streamed

It answers from the same script as the Messages API (server.py), so a test queues replies and reads
the request bodies the same way. A scripted reply here may hold:

    {"text": "hi"}                                        an answer (finish_reason "stop")
    {"tool_calls": [{"name": "read_file", "input": {...}}], "pieces": 8}
                                                          tool calls; the arguments streamed in 8-char pieces
    {"tool_calls": [{"name": "read_file", "raw_input": "{\"path\": "}]}
                                                          the arguments sent as this text, as they are (a
                                                          small model's invalid JSON)
    {"repeat_tool_id": True, ...}                         every piece of a tool call repeats its id and name
                                                          (as some local servers stream them)
    {"finish_reason": "length"}                           or any finish reason
    {"usage": {"prompt_tokens": 0, "completion_tokens": 0}}   the usage reported, instead of the count
    {"empty": True}                                       200 with no content at all: no text, usage 0/0
    {"error": 400, "message": "...", "code": "..."}       an HTTP error in OpenAI's shape

Backend behaviours (server options), like small local servers have them:
- a prompt over `context_window` (with `overflow="error"`: always the 400 below): streamed, an empty 200 (no content, usage 0/0, finish "stop") — what
  the gateway then passes on as a silent answer; not streamed, a 400 in OpenAI's wording
  ("This model's maximum context length is N tokens. However, you requested M tokens ...",
  code context_length_exceeded);
- `plain_only` (an HTTP status; 0: off): a system message whose content is a list of parts (what a
  system prompt sent as blocks becomes) is refused with pydantic's "Input should be a valid string",
  as a server built on pydantic models answers: 422 in FastAPI's `detail` shape, any other status in
  OpenAI's error shape.
"""

from __future__ import annotations

import json

from .exchange import new_id
from .tokens import REQUEST_OVERHEAD, TOOL_OVERHEAD, text_tokens

OVERFLOW_MESSAGE = ("This model's maximum context length is {window} tokens. However, you requested {asked} tokens "
                    "({prompt} in the messages, {completion} in the completion). Please reduce the length of the "
                    "messages or completion.")


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def count_chat_tokens(body: dict) -> int:
    """Prompt tokens of a chat request: every message's text and tool calls, and the tool definitions."""
    total = REQUEST_OVERHEAD
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        total += 3 + text_tokens(_content_text(m.get("content")))
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {} if isinstance(call, dict) else {}
            total += text_tokens(str(fn.get("name", ""))) + text_tokens(str(fn.get("arguments", "")))
    for tool in body.get("tools") or []:
        total += TOOL_OVERHEAD + text_tokens(json.dumps(tool, sort_keys=True))
    return total


def _max_out(body: dict) -> int:
    value = body.get("max_completion_tokens") or body.get("max_tokens") or 0
    return value if isinstance(value, int) and value > 0 else 0


def chat_check(body: dict, window: int, plain_only: int = 0, overflow_error: bool = False,
               count_answer: bool = False) -> tuple[int, tuple[int, dict] | None]:
    """(the prompt's tokens, (status, error body) the backend answers instead, or None). An over-window
    prompt is refused here when not streamed, or always with `overflow_error` (as vLLM and OpenAI do);
    otherwise, streamed, it gets an empty answer (chat_answer). `count_answer`: the request's max_tokens
    counts against the window too (OpenAI, vLLM, DeepSeek do; llama.cpp does not)."""
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return 0, (400, {"error": {"message": "'messages' is a required property", "type": "invalid_request_error",
                                   "param": "messages", "code": None}})
    if plain_only:
        for i, m in enumerate(body["messages"]):
            if isinstance(m, dict) and m.get("role") == "system" and not isinstance(m.get("content"), str):
                if plain_only == 422:
                    return 0, (422, {"detail": [{"type": "string_type", "loc": ["body", "messages", i, "content"],
                                                 "msg": "Input should be a valid string",
                                                 "input": m.get("content")}]})
                return 0, (plain_only, {"error": {
                    "message": f"1 validation error for ChatCompletionRequest\nmessages.{i}.content\n  "
                               "Input should be a valid string [type=string_type]",
                    "type": "invalid_request_error" if plain_only < 500 else "server_error", "code": plain_only}})
    prompt = count_chat_tokens(body)
    out = _max_out(body)
    if prompt + (out if count_answer else 0) > window and (overflow_error or count_answer or not body.get("stream")):
        message = OVERFLOW_MESSAGE.format(window=window, asked=prompt + out, prompt=prompt, completion=out)
        return prompt, (400, {"error": {"message": message, "type": "invalid_request_error", "param": "messages",
                                        "code": "context_length_exceeded"}})
    return prompt, None


def chat_error(reply: dict) -> tuple[int, dict] | None:
    if not reply.get("error"):
        return None
    status = int(reply["error"])
    return status, {"error": {"message": reply.get("message") or "error", "type": reply.get("type") or
                              ("invalid_request_error" if status == 400 else "server_error"),
                              "param": None, "code": reply.get("code")}}


def chat_answer(body: dict, reply: dict, prompt: int, window: int) -> tuple[dict, list[dict]]:
    """(the non-streamed completion, the chunks of the streamed one)."""
    empty = bool(reply.get("empty")) or prompt > window
    text = "" if empty else str(reply.get("text") or "")
    calls = [] if empty else [{"id": c.get("id") or new_id("call_"), "name": c["name"],
                               "arguments": c["raw_input"] if isinstance(c.get("raw_input"), str) else json.dumps(c.get("input", {}))} for c in reply.get("tool_calls") or []]
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    completion = text_tokens(text) + sum(text_tokens(c["arguments"]) for c in calls)
    usage = {"prompt_tokens": 0 if empty else prompt, "completion_tokens": 0 if empty else max(1, completion)}
    usage.update(reply.get("usage") or {})
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    ident, model, created = new_id("chatcmpl-"), body.get("model", "stand-in"), 1_767_225_600
    message: dict = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
    whole = {"id": ident, "object": "chat.completion", "created": created, "model": model,
             "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}

    def chunk(delta: dict, finish_reason=None, **extra) -> dict:
        return {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **extra}

    size = max(1, int(reply.get("pieces") or reply.get("chunk") or 12))
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": text[at:at + size]}) for at in range(0, len(text), size)]
    for n, call in enumerate(calls):
        args = call["arguments"]
        pieces = [args[at:at + size] for at in range(0, len(args), size)] or [""]
        for k, piece in enumerate(pieces):
            part: dict = {"index": n, "function": {"arguments": piece}}
            if k == 0 or reply.get("repeat_tool_id"):
                part = {"index": n, "id": call["id"], "type": "function",
                        "function": {"name": call["name"], "arguments": piece}}
            chunks.append(chunk({"tool_calls": [part]}))
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks += [chunk({}, finish), {**chunk({}), "choices": [], "usage": usage}]
    else:                                       # as llama.cpp's server does: the usage on the last chunk
        chunks.append(chunk({}, finish, usage=usage))
    return whole, chunks

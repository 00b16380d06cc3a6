"""What the stand-in server and the in-process scripted model share: the script, the checks, the answer.

    Exchange(script, brain, strict, context_window, cache)
      .queue(*replies) / .next_reply(body)     scripted replies first, then the brain (server.py lists them)
      .check(body) -> (prompt tokens, refusal) the real API's refusals: invalid request, prompt too long
      .answer(body, reply, prompt) -> message  content blocks, stop reason and usage, as the API sends them

Both are strict in the same way: a request the real API would refuse is refused (and kept in
`rejections`), so every test on either fails when s08 sends one. Usage comes from the stand-in's
own token counter and simulated prompt cache, so figures match between the two.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import deque

from .brain import is_summary_request
from .cache import PromptCache
from .tokens import count_request_tokens, text_tokens
from .validate import InvalidRequest, validate_request

DEFAULT_WINDOW = 200_000
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 408: "timeout_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 503: "api_error", 529: "overloaded_error"}
ERROR_MESSAGES = {401: "invalid x-api-key", 429: "Number of request tokens has exceeded your per-minute "
                  "rate limit", 500: "Internal server error", 529: "Overloaded", 403: "Permission denied"}
STREAM_ERROR_MESSAGES = {"overloaded_error": "Overloaded"}     # else "Internal server error"
NO_REPLY_LEFT = "(stand-in: no scripted reply left)"
HOLD_MOST = 120.0                    # seconds a held answer waits for release() at most
# what LiteLLM 1.80 answered (500) when its backend refused a system message made of parts
PLAIN_ONLY_MESSAGE = ("litellm.InternalServerError: InternalServerError: OpenAIException - 1 validation error for "
                      "ChatCompletionRequest\nmessages.0.content\n  Input should be a valid string [type=string_type]. "
                      "Received Model Group=small-model")


def new_id(prefix: str) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return prefix + "".join(secrets.choice(alphabet) for _ in range(24))


def blocks_for(reply: dict) -> list[dict]:
    """The answer's blocks. `"split": N` sends each tool call as blocks of its own with one id, each
    holding N characters of the input's JSON (as LiteLLM streams a tool call whose chunks repeat the id).
    A tool call's `"raw_input": "..."` is streamed as its input's text instead of `input`'s JSON, as it
    is — a small model's arguments that are not valid JSON (its non-streamed `input` is then {})."""
    blocks = []
    if reply.get("text"):
        blocks.append({"type": "text", "text": reply["text"]})
    for call in reply.get("tool_calls") or []:
        block = {"type": "tool_use", "id": call.get("id") or new_id("toolu_01"), "name": call["name"],
                 "input": call.get("input", {})}
        size = int(reply.get("split") or 0)
        text = json.dumps(block["input"])
        if isinstance(call.get("raw_input"), str):
            text = call["raw_input"]
            blocks.append({**block, "input": {}, "_partial": text})
        elif size > 0:
            blocks += [{**block, "input": {}, "_partial": text[at:at + size]} for at in range(0, len(text), size)]
        else:
            blocks.append(block)
    return blocks


def _block_tokens(block: dict) -> int:
    if block["type"] == "text":
        return text_tokens(block["text"])
    return text_tokens(block["name"]) + text_tokens(json.dumps(block["input"]))


def limit_output(blocks: list[dict], budget: int, stop_reason: str) -> tuple[list[dict], str | None, int]:
    """Cut the answer at `budget` output tokens, as max_tokens or the context window would."""
    used, kept = 0, []
    for block in blocks:
        cost = _block_tokens(block)
        if used + cost <= budget:
            kept.append(block)
            used += cost
            continue
        if block["type"] == "text":
            words, text = block["text"].split(" "), ""
            for w in words:
                if text_tokens(text + " " + w) + used > budget:
                    break
                text = (text + " " + w) if text else w
            if text.strip():
                kept.append({"type": "text", "text": text})
        else:
            kept.append({**block, "input": {}, "_partial": json.dumps(block["input"])[: max(1, budget - used)]})
        return kept, stop_reason, budget
    return kept, None, used


class Exchange:
    """The scripted side of a conversation with s08, without the transport."""

    def __init__(self, script=None, brain=None, strict: bool = True, context_window: int = DEFAULT_WINDOW,
                 cache: PromptCache | None = None, record: bool = True, reply_latency: float = 0.0,
                 summary_latency: float = 0.0):
        self.replies = deque(script or [])
        self.brain = brain
        self.strict, self.context_window = strict, context_window
        self.record = record                 # False: keep no request bodies (a long-running demo)
        self.requests: list[dict] = []       # bodies of /v1/messages requests, in order
        self.rejections: list[str] = []      # 400 messages sent back for invalid requests
        self.answers: list[str] = []         # one line per /v1/messages request: "200 end_turn", "400 prompt is…"
        self.usages: list[dict] = []         # usage of every answered request, in order, with its body
        self.cache = cache or PromptCache()
        self.lock = threading.Lock()
        self.plain_only = 0                  # a status: refuse the system prompt as blocks, as a gateway did
        # seconds before an answer starts, as a real model takes them: a summary request (its last message
        # holds s08's "<summary-request>" instruction) takes summary_latency, every other one reply_latency
        self.reply_latency, self.summary_latency = reply_latency, summary_latency
        # {"hold": ...} replies wait here until release(): a test acts while an answer is surely still coming
        self._holds = threading.Condition()
        self.holding = 0                     # answers waiting now
        self.releases = 0                   # release() calls so far

    def latency(self, body: dict) -> float:
        """How long the answer to this request waits before it starts."""
        return self.summary_latency if is_summary_request(body) else self.reply_latency

    def queue(self, *replies) -> None:
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self, body: dict) -> dict:
        with self.lock:
            reply = self.replies.popleft() if self.replies else None
        if reply is None:
            if self.brain is None:
                return {"text": NO_REPLY_LEFT}
            reply = self.brain
        return reply(body) if callable(reply) else dict(reply)

    def hold(self, most: float = HOLD_MOST) -> None:
        """Wait here (an answer's thread) until release() is called, or `most` seconds, whichever is first."""
        with self._holds:
            ticket = self.releases
            self.holding += 1
            self._holds.notify_all()
            try:
                self._holds.wait_for(lambda: self.releases != ticket, most)
            finally:
                self.holding -= 1
                self._holds.notify_all()

    def wait_until_held(self, n: int = 1, timeout: float = HOLD_MOST) -> bool:
        """True once `n` answers are held (the signal that an answer is still coming)."""
        with self._holds:
            return self._holds.wait_for(lambda: self.holding >= n, timeout)

    def release(self) -> None:
        """Let every held answer go on."""
        with self._holds:
            self.releases += 1
            self._holds.notify_all()

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(self.requests) >= n:
                return True
            time.sleep(0.02)
        return False

    def keep(self, body: dict) -> None:
        if self.record:
            with self.lock:
                self.requests.append(body)

    def check(self, body: dict, counting: bool = False) -> tuple[int, tuple[int, str] | None]:
        """(the prompt's tokens, the 400 the real API would answer — an invalid request, a prompt too
        long — or None)."""
        if self.plain_only and isinstance(body.get("system"), list):
            return 0, (self.plain_only, PLAIN_ONLY_MESSAGE)
        try:
            if self.strict:
                validate_request({**body, "max_tokens": 1} if counting else body)
        except InvalidRequest as exc:
            self.rejections.append(str(exc))
            return 0, (400, str(exc))
        prompt = count_request_tokens(body)
        if not counting and prompt > self.context_window:
            return prompt, (400, f"prompt is too long: {prompt} tokens > {self.context_window} maximum")
        return prompt, None

    def scripted_error(self, reply: dict, prompt: int) -> tuple[int, str, str] | None:
        """(status, message, error type) of a reply that is an HTTP error, or None."""
        if reply.get("error"):
            status = int(reply["error"])
            kind = reply.get("type") or ERROR_TYPES.get(status, "api_error")
            return status, reply.get("message") or ERROR_MESSAGES.get(status, kind), kind
        if reply.get("prompt_too_long"):
            return 400, (f"prompt is too long: {max(prompt, self.context_window + 1)} tokens > "
                         f"{self.context_window} maximum"), ERROR_TYPES[400]
        return None

    def answer(self, body: dict, reply: dict, prompt: int) -> tuple[dict, list[dict]]:
        """The answer message (as the API sends it) and its blocks (a cut tool call keeps its `_partial`
        input, for streaming)."""
        blocks = blocks_for(reply)
        stop = reply.get("stop_reason") or ("tool_use" if reply.get("tool_calls") else "end_turn")
        room = self.context_window - prompt
        budget = min(body["max_tokens"], max(1, room))
        blocks, forced, out_tokens = limit_output(
            blocks, budget, "max_tokens" if body["max_tokens"] <= room else "model_context_window_exceeded")
        stop = forced or stop
        usage = {**self.cache.usage(body), "output_tokens": max(1, out_tokens), **reply.get("usage", {})}
        if self.record:
            self.usages.append({**usage, "request": len(self.requests) - 1})
        message = {"id": new_id("msg_01"), "type": "message", "role": "assistant", "model": body["model"],
                   "content": [{k: v for k, v in b.items() if k != "_partial"} for b in blocks],
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}
        self.answers.append(f"200 {stop}")
        return message, blocks


def stream_events(message: dict, blocks: list[dict], size: int):
    """The answer as the stream of event dicts the API sends: (name, data, fraction of its block sent).
    A tool call cut short streams its `_partial` input."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}, None
    yield "ping", {"type": "ping"}, None
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            first: dict = {"type": "text", "text": ""}
            piece_key, text = "text", block["text"]
        else:
            first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            piece_key, text = "partial_json", block.get("_partial") or json.dumps(block["input"])
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": first}, None
        delta_type = "text_delta" if block["type"] == "text" else "input_json_delta"
        for at in range(0, len(text), size):
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": delta_type, piece_key: text[at:at + size]}}, (at, len(text))
        yield "content_block_stop", {"type": "content_block_stop", "index": index}, None
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                               "stop_sequence": None},
                            "usage": {"output_tokens": message["usage"]["output_tokens"]}}, None
    yield "message_stop", {"type": "message_stop"}, None

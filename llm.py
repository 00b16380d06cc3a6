"""The one place that talks to the Anthropic SDK: streaming calls, retries, plain-dict results.

`LLM.stream(...)` sends one Messages API request with `stream=True`, emits
TextDelta events as text arrives, and returns a ModelReply whose `content`
is a list of plain, API-shaped dicts (never SDK objects). Retries are ours,
not the SDK's (it gets max_retries=0), so each one is visible as a Retrying
event and Ctrl-C can cut a wait short. A retry happens only before any output
was shown; a failure after that ends the call. Every failure becomes an
LLMError with one line a person can act on.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field

import anthropic

from events import Emit, RequestStarted, ResponseDone, Retrying, TextDelta, ignore
from history import blocks as history_blocks

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504, 529}
MAX_RETRY_AFTER = 60.0
EPHEMERAL = {"type": "ephemeral"}
CACHEABLE = {"text", "tool_use", "tool_result", "image", "document"}


def _mark_last_block(message: dict) -> dict:
    """A copy of `message` with cache_control on its last block that can carry one."""
    blocks = history_blocks(message)
    for i in range(len(blocks) - 1, -1, -1):
        b = blocks[i]
        if b.get("type") in CACHEABLE and (b.get("type") != "text" or b.get("text", "").strip()):
            blocks[i] = {**b, "cache_control": EPHEMERAL}
            return {**message, "content": blocks}
    return message


def cache_breakpoints(system: str, messages: list[dict], anchor, tail: bool = True):
    """Prompt-caching breakpoints, at most 3 of the API's 4: the system prompt (which caches the
    tools before it too), the newest message, and the message that was newest in the previous call
    — so the cache written then is read now even when more than 20 blocks were added since.
    Returns (system blocks, messages with copies where marked, the new anchor). Never mutates."""
    marked = list(messages)
    if anchor is not None:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i] is anchor:
                marked[i] = _mark_last_block(messages[i])
                break
    if tail and messages:
        marked[-1] = _mark_last_block(messages[-1])
    system_blocks = [{"type": "text", "text": system, "cache_control": EPHEMERAL}] if system else system
    return system_blocks, marked, (messages[-1] if tail and messages else anchor)


@dataclass
class ModelReply:
    content: list[dict]
    stop_reason: str | None
    usage: dict = field(default_factory=dict)
    incomplete_tool_ids: set = field(default_factory=set)   # tool_use blocks cut off mid-input


class LLMError(Exception):
    """A model call failed; `str(err)` is the one line to show."""

    def __init__(self, message: str, kind: str, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None):
        super().__init__(message)
        self.kind, self.status, self.retryable, self.retry_after = kind, status, retryable, retry_after

    @property
    def short(self) -> str:
        """A few words for the retry line, e.g. "529 overloaded"."""
        words = {"rate_limit": "rate limited", "overloaded": "overloaded", "server": "server error",
                 "dropped": "connection dropped", "connection": "connection failed", "timeout": "timed out"}
        text = words.get(self.kind, self.kind.replace("_", " "))
        return f"{self.status} {text}" if self.status else text


def _error_message(exc: anthropic.APIStatusError) -> tuple[str, str]:
    body = exc.body if isinstance(exc.body, dict) else {}
    err = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    message = err.get("message") or getattr(exc, "message", "") or str(exc)
    return err.get("type", ""), str(message).strip().splitlines()[0][:300]


def _retry_after(exc) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(float(value), MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None


def classify(exc: BaseException, base_url: str, model: str, timeout: float, key_source: str = "") -> LLMError:
    """Turn any exception from a model call into an LLMError with a helpful line. `key_source` says
    where the key in use came from (e.g. "ANTHROPIC_API_KEY from /home/me/proj/.env")."""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, anthropic.APITimeoutError):
        return LLMError(f"Request to {base_url} timed out after {timeout:g}s (API_TIMEOUT).", "timeout",
                        retryable=True)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        text = str(cause or exc)
        if "refused" in text.lower() or "errno 111" in text.lower():
            return LLMError(f"Cannot connect to {base_url}: connection refused. Check ANTHROPIC_BASE_URL "
                            "and that the server is running.", "connection", retryable=True)
        return LLMError(f"Connection to {base_url} failed: {text[:200]}", "connection", retryable=True)
    if isinstance(exc, anthropic.APIStatusError):
        kind, message = _error_message(exc)
        status = exc.status_code if exc.status_code != 200 else {"overloaded_error": 529, "rate_limit_error": 429,
                                                                  "api_error": 500}.get(kind, 500)
        if status == 401:
            check = f"The key in use is {key_source}: check it there." if key_source else \
                "Check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in .env."
            return LLMError(f"Authentication failed (401) at {base_url}: {message}. {check}", "auth", status)
        if status == 403:
            return LLMError(f"Permission denied (403): {message}", "permission", status)
        if status == 404:
            return LLMError(f"Not found (404) at {base_url}: {message}. Check MODEL_ID={model} and "
                            "ANTHROPIC_BASE_URL.", "not_found", status)
        if status == 400 or status == 413:
            if "prompt is too long" in message.lower() or "too long" in message.lower() and status == 413:
                return LLMError(f"Prompt too long: {message}", "prompt_too_long", status)
            hint = " (if this endpoint does not support prompt caching, set PROMPT_CACHE=off)" \
                if "cache_control" in message else ""
            return LLMError(f"The API rejected the request ({status}): {message}{hint}", "bad_request", status)
        if status == 429:
            return LLMError(f"Rate limited (429): {message}", "rate_limit", status, True, _retry_after(exc))
        if status == 529 or kind == "overloaded_error":
            return LLMError(f"The API is overloaded (529): {message}", "overloaded", status, True,
                            _retry_after(exc))
        return LLMError(f"API error ({status}): {message}", "server", status, status in RETRY_STATUSES,
                        _retry_after(exc))
    text = f"{type(exc).__name__}: {exc}".strip()
    if "Timeout" in type(exc).__name__:
        return LLMError(f"No data from {base_url} for {timeout:g}s (API_TIMEOUT); the answer was abandoned.",
                        "timeout", retryable=True)
    if "incomplete chunked read" in text or "peer closed" in text or "RemoteProtocolError" in text:
        return LLMError(f"The connection to {base_url} dropped mid-answer.", "dropped", retryable=True)
    return LLMError(f"Model call failed: {text[:300]}", "unknown")


class _Accumulator:
    """Builds plain-dict content blocks from raw stream events."""

    def __init__(self, emit: Emit):
        self.emit, self.blocks, self.json_parts = emit, {}, {}
        self.stop_reason, self.usage, self.done, self.shown = None, {}, False, False

    def feed(self, ev) -> None:
        kind = ev.type
        if kind == "message_start":
            self.usage = ev.message.usage.model_dump(exclude_none=True) if ev.message.usage else {}
        elif kind == "content_block_start":
            self.blocks[ev.index] = ev.content_block.model_dump(exclude_none=True, mode="json")
            if self.blocks[ev.index].get("type") in ("tool_use", "server_tool_use"):
                self.json_parts[ev.index] = []
        elif kind == "content_block_delta":
            block, delta = self.blocks[ev.index], ev.delta
            if delta.type == "text_delta":
                block["text"] = block.get("text", "") + delta.text
                if delta.text:
                    self.shown = True
                    self.emit(TextDelta(delta.text))
            elif delta.type == "input_json_delta":
                self.json_parts[ev.index].append(delta.partial_json)
            elif delta.type == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.thinking
            elif delta.type == "signature_delta":
                block["signature"] = delta.signature
            elif delta.type == "citations_delta":
                block.setdefault("citations", []).append(delta.citation.model_dump(exclude_none=True))
        elif kind == "message_delta":
            self.stop_reason = ev.delta.stop_reason
            if ev.usage is not None:
                self.usage.update({k: v for k, v in ev.usage.model_dump(exclude_none=True).items()
                                   if isinstance(v, int)})
        elif kind == "message_stop":
            self.done = True

    def reply(self) -> ModelReply:
        content, incomplete = [], set()
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if index in self.json_parts:
                raw = "".join(self.json_parts[index])
                try:
                    block["input"] = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    block["input"] = {}
                    incomplete.add(block.get("id"))
                if not isinstance(block["input"], dict):
                    block["input"], _ = {}, incomplete.add(block.get("id"))
            if block.get("type") == "text" and not block.get("text", "").strip():
                continue  # the API refuses empty text blocks when they are sent back
            content.append(block)
        return ModelReply(content, self.stop_reason, self.usage, incomplete)


class LLM:
    """A configured client: `stream()` for answers and summaries alike."""

    def __init__(self, settings, key_source: str = ""):
        self.settings, self.key_source = settings, key_source
        credential = ({"api_key": settings.anthropic_api_key} if settings.anthropic_api_key
                      else {"auth_token": settings.anthropic_auth_token})
        self.client = anthropic.Anthropic(base_url=settings.base_url, max_retries=0,
                                          timeout=settings.api_timeout, **credential)
        self.anchor = None         # the newest message of the previous call (where its cache ends)

    def _fail(self, exc) -> LLMError:
        s = self.settings
        return classify(exc, s.base_url, s.model_id, s.api_timeout, self.key_source)

    def stream(self, *, system, messages: list[dict], tools: list[dict] | None = None,
               max_tokens: int | None = None, emit: Emit = ignore, purpose: str = "answer",
               extra: dict | None = None) -> ModelReply:
        """One model call, streamed; retried (visibly) only while nothing has been shown. A summary
        call's breakpoints end at the history's last message: its prefix is read from the cache, and
        the instruction after it is not written to it (nothing would read it again)."""
        anchor = self.anchor
        if self.settings.caching and purpose == "summary":
            # read the conversation's cache where the last call left it; write nothing new. Only when that
            # point is not in the request (a shortened one) mark its end, so the look-back can find it.
            history = messages[:-1]
            present = any(m is self.anchor for m in history)
            system, marked, _ = cache_breakpoints(system, history, self.anchor, tail=not present)
            messages = marked + messages[-1:]
        elif self.settings.caching:
            system, messages, anchor = cache_breakpoints(system, messages, self.anchor)
        params = {"model": self.settings.model_id, "max_tokens": max_tokens or self.settings.max_tokens,
                  "system": system, "messages": messages, **(extra or {})}
        if tools:
            params["tools"] = tools
        attempts = self.settings.api_max_retries + 1
        for attempt in range(1, attempts + 1):
            emit(RequestStarted(purpose))
            acc = _Accumulator(emit)
            try:
                stream = self.client.messages.create(stream=True, **params)
                try:
                    for ev in stream:
                        acc.feed(ev)
                finally:
                    stream.close()
                if not acc.done:
                    raise LLMError(f"The stream from {self.settings.base_url} ended before the answer was "
                                   "complete.", "dropped", retryable=True)
            except BaseException as exc:
                if acc.usage.get("input_tokens") is not None:
                    # the API billed the prompt even though the answer never completed
                    emit(ResponseDone(None, {**acc.usage, "output_tokens": acc.usage.get("output_tokens", 0)}, purpose))
                if not isinstance(exc, Exception):
                    raise                     # Ctrl-C: the loop repairs the history
                err = self._fail(exc)
                if acc.shown or not err.retryable or attempt == attempts:
                    if err.retryable and attempt > 1:
                        err.args = (f"{err} (after {attempt - 1} retr{'y' if attempt == 2 else 'ies'})",)
                    raise err from None
                delay = err.retry_after if err.retry_after is not None else \
                    min(8.0, 0.5 * 2 ** (attempt - 1)) * random.uniform(0.8, 1.0)
                emit(Retrying(delay, err.short, attempt, attempts - 1))
                time.sleep(delay)
                continue
            reply = acc.reply()
            self.anchor = anchor
            emit(ResponseDone(reply.stop_reason, reply.usage, purpose))
            return reply
        raise AssertionError("unreachable")

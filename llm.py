"""The one place that talks to the Anthropic SDK: streaming calls, retries, plain-dict results.

`LLM.stream(...)` sends one Messages API request with `stream=True`, emits
TextDelta events as text arrives, and returns a ModelReply whose `content`
is a list of plain, API-shaped dicts (never SDK objects). Retries are ours,
not the SDK's (it gets max_retries=0), so each one is visible as a Retrying
event and Ctrl-C can cut a wait short. A retry happens only before any output
was shown; a failure after that ends the call. Every failure becomes an
LLMError with one line a person can act on (llm_errors.py).

The endpoint is untrusted: the stream is read with a total deadline and an idle
timer that pings do not reset (llm_stream.py), and the answer is cleaned as it
arrives (llm_reply.py) — valid text, usable tool ids and names, sane usage.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import anthropic

from events import Emit, Notice, RequestStarted, ResponseDone, Retrying, ignore
from history import blocks as history_blocks
from llm_errors import LLMError, classify, stream_error
from llm_reply import KNOWN_STOP_REASONS, Accumulator, ModelReply  # noqa: F401  (re-exported)
from llm_stream import MalformedStream, StreamTimeout, watched_events
from redact import redact_url, secret_values

MIN_REPLY_CHARS = 2_000_000       # an answer may hold max(this, MAX_TOKENS × CHARS_PER_TOKEN_BOUND) chars
CHARS_PER_TOKEN_BOUND = 64
EPHEMERAL = {"type": "ephemeral"}
ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}
CACHEABLE = {"text", "tool_use", "tool_result", "image", "document"}


def _mark_last_block(message: dict, control: dict = EPHEMERAL) -> dict:
    """A copy of `message` with cache_control on its last block that can carry one."""
    blocks = history_blocks(message)
    for i in range(len(blocks) - 1, -1, -1):
        b = blocks[i]
        if b.get("type") in CACHEABLE and (b.get("type") != "text" or b.get("text", "").strip()):
            blocks[i] = {**b, "cache_control": control}
            return {**message, "content": blocks}
    return message


def cache_breakpoints(system: str, messages: list[dict], anchor, tail: bool = True, ttl: str = "5m"):
    """Prompt-caching breakpoints, at most the API's 4: the system prompt (which caches the tools
    before it too), the newest message, and the message that was newest in the previous call — so the
    cache written then is read now even when more than 20 blocks were added since. `ttl` is how long
    they live: "5m" (the API's default), "1h" (a write costs 2× instead of 1.25×, but outlives a pause
    of up to an hour), or "prefix": an hour for the stable prefix — the system prompt and the first
    message (a summary, or the request snip keeps at the head), marked on its own — and 5 minutes for
    the rest (the API wants 1-hour breakpoints before 5-minute ones).
    Returns (system blocks, messages with copies where marked, the new anchor). Never mutates."""
    prefix = ttl in ("prefix", "1h")
    rest = ONE_HOUR if ttl == "1h" else EPHEMERAL
    marked = list(messages)
    if ttl == "prefix" and len(messages) > 1:
        marked[0] = _mark_last_block(messages[0], ONE_HOUR)
    if anchor is not None:
        for i in range(len(messages) - 1, 0 if ttl == "prefix" else -1, -1):
            if messages[i] is anchor:
                marked[i] = _mark_last_block(messages[i], rest)
                break
    if tail and messages and marked[-1] is messages[-1]:
        marked[-1] = _mark_last_block(messages[-1], rest)
    control = ONE_HOUR if prefix else EPHEMERAL
    system_blocks = [{"type": "text", "text": system, "cache_control": control}] if system else system
    return system_blocks, marked, (messages[-1] if tail and messages else anchor)


class LLM:
    """A configured client: `stream()` for answers and summaries alike."""

    def __init__(self, settings, key_source: str = "", secrets: tuple | None = None):
        """`secrets`: every credential value to keep out of error messages (access.Access.secrets());
        without it, the settings' own key and token."""
        self.settings, self.key_source = settings, key_source
        credential = ({"api_key": settings.anthropic_api_key} if settings.anthropic_api_key
                      else {"auth_token": settings.anthropic_auth_token})
        self.client = anthropic.Anthropic(base_url=settings.base_url, max_retries=0,
                                          timeout=settings.api_timeout, **credential)
        self.anchor = None         # the newest message of the previous call (where its cache ends)
        self.secrets = secret_values(settings) if secrets is None else tuple(secrets)

    def _fail(self, exc) -> LLMError:
        s, url = self.settings, redact_url(self.settings.base_url)
        if isinstance(exc, StreamTimeout) and exc.which == "total":
            return LLMError(f"The answer from {url} took longer than {exc.seconds:g}s in all "
                            "(API_TOTAL_TIMEOUT); it was abandoned.", "timeout")
        if isinstance(exc, StreamTimeout):
            return LLMError(f"No data from {url} for {exc.seconds:g}s (API_TIMEOUT; pings do not count); the answer was "
                            "abandoned.", "timeout", retryable=True)
        if isinstance(exc, MalformedStream):
            return LLMError(f"The endpoint {url} sent a malformed stream ({exc}).", "malformed")
        return classify(exc, s.base_url, s.model_id, s.api_timeout, self.secrets, self.key_source)

    def _stream_error(self, data) -> LLMError:
        return stream_error(data, self.settings.base_url, self.settings.model_id, self.secrets, self.key_source)

    def stream(self, *, system, messages: list[dict], tools: list[dict] | None = None,
               max_tokens: int | None = None, emit: Emit = ignore, purpose: str = "answer",
               extra: dict | None = None, cache_ttl: str = "5m") -> ModelReply:
        """One model call, streamed; retried (visibly) only while nothing has been shown. A summary
        call's breakpoints end at the history's last message: its prefix is read from the cache, and
        the instruction after it is not written to it (nothing would read it again)."""
        anchor = self.anchor
        taken_ids = {b.get("id") for m in messages for b in history_blocks(m) if b.get("type") == "tool_use"}
        if self.settings.caching and purpose == "summary":
            # read the conversation's cache where the last call left it; write nothing new. Only when that
            # point is not in the request (a shortened one) mark its end, so the look-back can find it.
            history = messages[:-1]
            present = any(m is self.anchor for m in history)
            system, marked, _ = cache_breakpoints(system, history, self.anchor, not present, cache_ttl)
            messages = marked + messages[-1:]
        elif self.settings.caching:
            system, messages, anchor = cache_breakpoints(system, messages, self.anchor, True, cache_ttl)
        max_tokens = max_tokens or self.settings.max_tokens
        params = {"model": self.settings.model_id, "max_tokens": max_tokens,
                  "system": system, "messages": messages, **(extra or {})}
        if tools:
            params["tools"] = tools
        max_chars = max(MIN_REPLY_CHARS, max_tokens * CHARS_PER_TOKEN_BOUND)
        attempts = self.settings.api_max_retries + 1
        for attempt in range(1, attempts + 1):
            emit(RequestStarted(purpose))
            acc = Accumulator(emit, max_chars, self._stream_error)
            try:
                for data in watched_events(lambda: self.client.messages.with_streaming_response.create(
                        stream=True, **params), self.settings.api_timeout, self.settings.api_total_timeout):
                    acc.feed(data)
                    if acc.done:
                        break
                if not acc.done:
                    raise LLMError(f"The stream from {redact_url(self.settings.base_url)} ended before the "
                                   "answer was complete.", "dropped", retryable=True)
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
            reply = acc.reply(taken_ids)
            for note in reply.notes:
                emit(Notice(note, "warning"))
            self.anchor = anchor
            emit(ResponseDone(reply.stop_reason, reply.usage, purpose))
            return reply
        raise AssertionError("unreachable")


@dataclass
class KeyCheck:
    ok: bool                  # the endpoint accepted the key
    refused: bool = False     # the endpoint said no (401/403): do not store it
    reason: str = ""          # one line, never containing the key


def check_key(key: str, base_url: str, timeout: float = 20.0, secrets=()) -> KeyCheck:
    """One cheap request with `key`: list one model (free; the stand-in answers it too). What it says
    names the URL without its user:password and never holds `key` or any of `secrets`."""
    client = anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0, timeout=timeout)
    url, hidden = redact_url(base_url), (key, *secrets)
    try:
        client.models.list(limit=1)
        return KeyCheck(True)
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
        return KeyCheck(False, True, f"{url} refused the key ({exc.status_code})")
    except anthropic.APIStatusError as exc:
        return KeyCheck(False, False, f"{url} answered {exc.status_code} to the check")
    except anthropic.APIConnectionError as exc:
        return KeyCheck(False, False, classify(exc, base_url, "", timeout, hidden).args[0])
    finally:
        client.close()

"""One streamed model call with our own retries, for any provider that yields the API's SSE events.

    call_with_retries(request, emit, open_events, fail, stream_error, max_retries, ended_early, secrets)
        -> ModelReply

`open_events()` starts one attempt and yields each event's data (a dict, untrusted); the events are
accumulated and cleaned (llm/reply.py), TextDelta events go out as text arrives. Each retry is
visible as a Retrying event, and its wait is a plain sleep, so Ctrl-C cuts it short. A retry
happens only before any output was shown; a failure after that ends the call. `fail(exc)` turns
whatever an attempt raised into an LLMError (the provider knows its own exceptions).
"""

from __future__ import annotations

import random
import time
from typing import Callable, Iterator

from events import Emit, Notice, RequestStarted, ResponseDone, Retrying
from messages import blocks as history_blocks
from llm.contract import ErrorKind, LLMError, ModelReply, Request
from llm.reply import Accumulator
from llm.repetition import streaming_span
from llm.usage import INPUT, Usage

MIN_REPLY_CHARS = 2_000_000       # an answer may hold max(this, MAX_TOKENS × CHARS_PER_TOKEN_BOUND) chars
CHARS_PER_TOKEN_BOUND = 64
MAX_BACKOFF, FIRST_BACKOFF = 8.0, 0.5


def backoff(attempt: int) -> float:
    """The wait before retry `attempt` when the server named none: exponential, with jitter."""
    return min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** (attempt - 1)) * random.uniform(0.8, 1.0)


def call_with_retries(request: Request, emit: Emit, open_events: Callable[[], Iterator[dict]],
                      fail: Callable[[BaseException], LLMError], stream_error: Callable[[dict], LLMError],
                      max_retries: int, ended_early: str, secrets: tuple = ()) -> ModelReply:
    """One model call, streamed; retried (visibly) only while nothing has been shown. `ended_early`
    is the line for a stream that stopped before its answer was complete. `secrets`: every credential
    value, redacted from the answer as it arrives (an endpoint may echo the key)."""
    purpose = request.purpose
    taken_ids = {b.get("id") for m in request.messages for b in history_blocks(m) if b.get("type") == "tool_use"}
    max_chars = max(MIN_REPLY_CHARS, request.max_tokens * CHARS_PER_TOKEN_BOUND)
    attempts = max_retries + 1
    for attempt in range(1, attempts + 1):
        emit(RequestStarted(purpose))
        acc = Accumulator(emit, max_chars, stream_error, secrets, streaming_span(request.max_tokens))
        try:
            events = open_events()
            for data in events:
                acc.feed(data)
                if acc.done:
                    break
            close = getattr(events, "close", None)
            if close is not None:
                close()        # an answer stopped early (a loop, llm/repetition.py): its stream ends now
            if not acc.done:
                raise LLMError(ended_early, ErrorKind.DROPPED, retryable=True)
        except BaseException as exc:
            if acc.usage.get(INPUT) is not None:
                # the API billed the prompt even though the answer never completed
                emit(ResponseDone(None, Usage.of(acc.usage).to_api(), purpose))
            if not isinstance(exc, Exception):
                raise                     # Ctrl-C: the loop repairs the history
            err = fail(exc)
            if acc.shown or not err.retryable or attempt == attempts:
                if err.retryable and attempt > 1:
                    err.args = (f"{err} (after {attempt - 1} retr{'y' if attempt == 2 else 'ies'})",)
                raise err from None
            delay = err.retry_after if err.retry_after is not None else backoff(attempt)
            emit(Retrying(delay, err.short, attempt, attempts - 1))
            time.sleep(delay)
            continue
        reply = acc.reply(taken_ids)
        for note in reply.notes:
            emit(Notice(note, "warning"))
        emit(ResponseDone(reply.stop_reason, reply.usage.to_api() if reply.usage else {}, purpose))
        return reply
    raise AssertionError("unreachable")


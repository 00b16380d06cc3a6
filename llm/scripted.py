"""An in-process scripted model behind the provider seam: no HTTP, no SDK, deterministic.

    model = ScriptedModel(script=[{"text": "hi"}, ...], brain=Brain())
    model.stream(request, emit) -> ModelReply

It answers from the same scripts and brains as the stand-in (standin/exchange.py holds what both
share: the replies, the strict validation, the token counter and the simulated prompt cache), and
is strict in the same way: a request the real API would refuse raises LLMError BAD_REQUEST (and is
kept in `rejections`). The answer goes through the same accumulation, cleaning, retries and events
as the HTTP path (llm/streaming.py), as the API's stream events. Scripted errors ({"error": 429},
{"prompt_too_long": True}, {"stream_error": ...}, {"drop": ...}) fail as the Anthropic provider
would say; timing faults ({"hang"}, {"stall"}, {"delay"}) belong to the stand-in's wire tests.
"""

from __future__ import annotations

import json
import time

from events import Emit, ignore
from llm.contract import ErrorKind, LLMError, ModelReply, Request
from llm.errors import from_status, retry_after, stream_error
from llm.streaming import call_with_retries
from redact import secret_values
from standin.exchange import DEFAULT_WINDOW, STREAM_ERROR_MESSAGES, Exchange, stream_events

WHERE = "the scripted model"
CHUNK = 12                  # characters per streamed delta, as the stand-in's default


class ScriptedModel(Exchange):
    """A Provider that answers in-process; `requests`, `rejections`, `answers`, `usages` as the stand-in's."""

    def __init__(self, settings=None, key_source: str = "", secrets: tuple | None = None, *, script=None,
                 brain=None, strict: bool = True, context_window: int = DEFAULT_WINDOW, cache=None):
        super().__init__(script, brain, strict, context_window, cache)
        self.settings, self.key_source = settings, key_source
        self._secrets = tuple(secrets) if secrets is not None else secret_values(settings) if settings else ()

    def secrets(self) -> tuple:
        return self._secrets

    def bind(self, settings, key_source: str = "", secrets: tuple | None = None) -> ScriptedModel:
        """This model, configured as make_provider would configure a new one (tests keep one model
        across the App's rebuilds: PROVIDERS["scripted"] = model.bind)."""
        self.settings, self.key_source = settings, key_source
        self._secrets = tuple(secrets) if secrets is not None else secret_values(settings)
        return self

    def stream(self, request: Request, emit: Emit = ignore) -> ModelReply:
        retries = self.settings.api_max_retries if self.settings is not None else 0
        return call_with_retries(request, emit, lambda: self._events(request), self._fail, self._stream_error,
                                 retries, f"The stream from {WHERE} ended before the answer was complete.",
                                 self._secrets)

    def _fail(self, exc: BaseException) -> LLMError:
        return exc if isinstance(exc, LLMError) else LLMError(f"Model call failed: {exc}", ErrorKind.UNKNOWN)

    def _stream_error(self, data) -> LLMError:
        return stream_error(data, WHERE, "", self._secrets, self.key_source)

    def _events(self, request: Request):
        """One attempt: the request as the wire would carry it, checked, answered as stream events."""
        body = json.loads(json.dumps({**request.params(), "stream": True}))
        self.keep(body)
        prompt, refused = self.check(body)
        if refused is not None:
            status, message = refused
            self.answers.append(f"{status} {message}")
            raise from_status(status, "invalid_request_error", message, WHERE, body["model"], None)
        reply = self.next_reply(body)
        if self.latency(body):
            time.sleep(self.latency(body))
        if reply.get("drop") == "before":
            raise LLMError(f"The connection to {WHERE} dropped mid-answer.", ErrorKind.DROPPED, retryable=True)
        failure = self.scripted_error(reply, prompt)
        if failure is not None:
            status, message, kind = failure
            self.answers.append(f"{status} {message}")
            wait = retry_after({"retry-after": str(reply["retry_after"])}) if "retry_after" in reply else None
            raise from_status(status, kind, message, WHERE, body["model"], wait, self.key_source)
        answer, blocks = self.answer(body, reply, prompt)
        fault = reply.get("drop") == "mid" or reply.get("stream_error")
        sent = 0
        for name, data, place in stream_events(answer, blocks, CHUNK):
            if fault and (name == "message_delta" or place is not None and 0 < sent >= place[1] // 2):
                break
            sent += CHUNK if place is not None else 0
            if name != "ping":          # as the HTTP path: pings never reach the answer
                yield data
        else:
            return
        if reply.get("stream_error"):
            kind = reply["stream_error"]
            said = STREAM_ERROR_MESSAGES.get(kind, "Internal server error")
            yield {"type": "error", "error": {"type": kind, "message": said}}
        raise LLMError(f"The connection to {WHERE} dropped mid-answer.", ErrorKind.DROPPED, retryable=True)

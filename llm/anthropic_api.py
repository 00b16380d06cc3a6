"""The Anthropic provider: the Messages API's calls, and the key check.

    AnthropicProvider(settings, key_source, secrets).stream(request, emit) -> ModelReply
    check_key(key, base_url, ...) -> KeyCheck        one cheap request that says if a key works
    AnthropicProvider.warm()                         build the HTTP client now (a background thread at start-up)

Both go over plain HTTP (llm/anthropic_http.py), not the Anthropic SDK, whose import (about 1.8 s of CPU)
made the first answer and every -p run wait. A call is sent with `stream=True` and read by
llm/stream_watch.py (a total deadline, and an idle timer that pings do not reset: the endpoint is
untrusted); retries are ours (llm/streaming.py). Every failure becomes an LLMError with one line a
person can act on (llm/errors.py).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from events import Emit, ignore
from llm.contract import ErrorKind, LLMError, ModelReply, Request
from llm.errors import classify, stream_error
from llm.anthropic_http import AnthropicHTTP, SendFailure, StatusFailure
from llm.stream_watch import MalformedStream, StreamTimeout, watched_events
from llm.streaming import call_with_retries
from redact import redact_url, secret_values


class AnthropicProvider:
    """A configured client for the Messages API."""

    def __init__(self, settings, key_source: str = "", secrets: tuple | None = None):
        """`secrets`: every credential value to keep out of error messages (access.Access.secrets());
        without it, the settings' own key and token."""
        self.settings, self.key_source = settings, key_source
        self._secrets = secret_values(settings) if secrets is None else tuple(secrets)
        self._client: AnthropicHTTP | None = None
        self._building = threading.Lock()       # warm() in a background thread, or the first call

    def warm(self) -> None:
        """Build the HTTP client now (importing httpx2 takes about 0.1 s) — in a background thread while
        the person types at the first prompt, so the first answer does not wait for it. Sends nothing."""
        self.client  # noqa: B018

    def secrets(self) -> tuple:
        return self._secrets

    @property
    def client(self) -> AnthropicHTTP:
        with self._building:
            if self._client is None:
                s = self.settings
                self._client = AnthropicHTTP(s.base_url, s.anthropic_api_key or s.anthropic_auth_token, s.api_timeout)
            return self._client

    def _fail(self, exc) -> LLMError:
        s, url = self.settings, redact_url(self.settings.base_url)
        if isinstance(exc, StreamTimeout) and exc.which == "total":
            return LLMError(f"The answer from {url} took longer than {exc.seconds:g}s in all "
                            "(API_TOTAL_TIMEOUT); it was abandoned.", ErrorKind.TIMEOUT)
        if isinstance(exc, StreamTimeout):
            return LLMError(f"No data from {url} for {exc.seconds:g}s (API_TIMEOUT; pings do not count); the answer "
                            "was abandoned.", ErrorKind.TIMEOUT, retryable=True)
        if isinstance(exc, MalformedStream):
            return LLMError(f"The endpoint {url} sent a malformed stream ({exc}).", ErrorKind.MALFORMED)
        return classify(exc, s.base_url, s.model_id, s.api_timeout, self._secrets, self.key_source)

    def _stream_error(self, data) -> LLMError:
        return stream_error(data, self.settings.base_url, self.settings.model_id, self._secrets, self.key_source)

    def stream(self, request: Request, emit: Emit = ignore) -> ModelReply:
        s, params = self.settings, request.params()
        client = self.client        # (built here, before the call's clocks start)

        def open_events():
            return watched_events(lambda: client.open(params), s.api_timeout, s.api_total_timeout)
        ended = f"The stream from {redact_url(s.base_url)} ended before the answer was complete."
        return call_with_retries(request, emit, open_events, self._fail, self._stream_error, s.api_max_retries, ended,
                                 self._secrets)


@dataclass
class KeyCheck:
    ok: bool                  # the endpoint accepted the key
    refused: bool = False     # the endpoint said no (401/403): do not store it
    reason: str = ""          # one line, never containing the key


def check_key(key: str, base_url: str, timeout: float = 20.0, secrets=()) -> KeyCheck:
    """One cheap request with `key`: list one model (free; the stand-in answers it too). What it says
    names the URL without its user:password and never holds `key` or any of `secrets`."""
    client = AnthropicHTTP(base_url, key, timeout)
    url, hidden = redact_url(base_url), (key, *secrets)
    try:
        client.get("/v1/models", {"limit": 1})
        return KeyCheck(True)
    except StatusFailure as exc:
        if exc.status_code in (401, 403):
            return KeyCheck(False, True, f"{url} refused the key ({exc.status_code})")
        return KeyCheck(False, False, f"{url} answered {exc.status_code} to the check")
    except SendFailure as exc:
        return KeyCheck(False, False, classify(exc, base_url, "", timeout, hidden).args[0])
    finally:
        client.close()

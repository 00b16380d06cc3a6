"""The Anthropic API over plain HTTP, without the Anthropic SDK: the Messages API's streamed request, and the
key check's one-model list.

    AnthropicHTTP(base_url, credential, timeout)
      .open(params)         a context manager: the opened answer, whose .http_response stream_watch reads
      .get(path, query)     one small GET (the key check lists one model), read whole
    StatusFailure     the endpoint answered a non-2xx status (its parsed body and headers: errors.py words it)
    SendFailure       no answer came (no connection, a timeout before the headers, a bad URL): `timed_out`

Why not the SDK: `import anthropic` costs about 1.8 s of CPU (its pydantic types), and a first message sent
the moment the prompt showed waited for it (so did every -p run); a call needs none of it (the SSE stream
is read by llm/stream_watch.py, retries are llm/streaming.py's). httpx2 is the HTTP client the SDK itself
uses (one of its dependencies; about 0.1 s to import). A request is the one the SDK sends: the same URL
under the base URL, the key or token as `Authorization: Bearer`, the SDK's `anthropic-version`,
ANTHROPIC_CUSTOM_HEADERS (last, as the SDK reads them), the body encoded as the SDK encodes it, redirects
followed, the environment's proxies. A status error is read as the SDK reads it: the body parsed as JSON
when it is JSON, else its text (tests/llm/test_anthropic_http.py compares both with the SDK's).
"""

from __future__ import annotations

import json
import os
import platform
from contextlib import contextmanager
from collections.abc import Mapping, Sequence
from typing import Any, Iterator

from version import __version__

API_VERSION = "2026-10-21"          # the SDK's (tests/llm/test_anthropic_http.py compares them)
MAX_ANSWER_BYTES = 1 << 20          # of an error's body, or of the key check's answer: no more is read (an
                                    # endpoint's endless body would fill the memory; the SDK reads it all)


class StatusFailure(Exception):
    """A non-2xx answer: `status_code`, `body` (parsed JSON, or the text), `message`, `response` (read) — the
    fields of the SDK's APIStatusError, filled as it fills them."""

    def __init__(self, response, body, message: str):
        super().__init__(message)
        self.status_code, self.body, self.message, self.response = response.status_code, body, message, response


class SendFailure(Exception):
    """The request got no answer; the cause is chained (`__cause__`). `timed_out`: a timeout ended it."""

    def __init__(self, cause: BaseException, timed_out: bool):
        super().__init__("Request timed out." if timed_out else "Connection error.")
        self.timed_out = timed_out


class _Opened:
    def __init__(self, response):
        self.http_response = response


def custom_headers(environ=os.environ) -> dict[str, str]:
    """ANTHROPIC_CUSTOM_HEADERS, one `Name: value` a line, as the SDK reads it."""
    parsed: dict[str, str] = {}
    for line in (environ.get("ANTHROPIC_CUSTOM_HEADERS") or "").split("\n"):
        colon = line.find(":")
        if colon >= 0:
            parsed[line[:colon].strip()] = line[colon + 1:].strip()
    return parsed


class AnthropicHTTP:
    """One HTTP client (its connection pool shared by the calls of every thread) for one endpoint and key."""

    def __init__(self, base_url: str, credential: str, timeout: float):
        import httpx2
        self.headers = {"Accept": "application/json", "Content-Type": "application/json",
                        "User-Agent": f"s08/{__version__} (Python {platform.python_version()})",
                        "anthropic-version": API_VERSION, "Authorization": f"Bearer {credential}",
                        **custom_headers()}
        self._http = httpx2.Client(base_url=base_url, timeout=timeout, follow_redirects=True,
                                   limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100))
        self._timeout_error = httpx2.TimeoutException

    @contextmanager
    def open(self, params: dict) -> Iterator[Any]:
        """Send one streamed request (`params` without `stream`); the answer stays open inside the block."""
        body = json.dumps({**params, "stream": True}, default=_plain, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode()      # as the SDK encodes a body
        try:
            request = self._http.build_request("POST", "/v1/messages", headers=self.headers, content=body)
            response = self._http.send(request, stream=True)
        except self._timeout_error as exc:
            raise SendFailure(exc, True) from exc
        except Exception as exc:    # as the SDK: whatever stops the request is a connection failure
            raise SendFailure(exc, False) from exc
        try:
            if not response.is_success:
                raise status_failure(_bounded(response))
            yield _Opened(response)
        finally:
            response.close()

    def get(self, path: str, query: dict):
        """One GET under the base URL, read whole; raises StatusFailure or SendFailure."""
        try:
            request = self._http.build_request("GET", path, params=query,
                                               headers={k: v for k, v in self.headers.items() if k != "Content-Type"})
            response = _bounded(self._http.send(request, stream=True))
        except self._timeout_error as exc:
            raise SendFailure(exc, True) from exc
        except Exception as exc:
            raise SendFailure(exc, False) from exc
        if not response.is_success:
            raise status_failure(response)
        return response

    def close(self) -> None:
        self._http.close()


def _bounded(streamed):
    """A streamed answer read whole, or to MAX_ANSWER_BYTES (then closed: the rest is not waited for), as a
    read response. A body that breaks off or stalls halfway counts as what arrived of it."""
    import httpx2
    got = bytearray()
    try:
        for chunk in streamed.iter_bytes():
            got += chunk
            if len(got) >= MAX_ANSWER_BYTES:
                break
    except httpx2.HTTPError:
        pass
    finally:
        streamed.close()
    headers = [(k, v) for k, v in streamed.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]   # decoded here
    return httpx2.Response(streamed.status_code, headers=headers, content=bytes(got[:MAX_ANSWER_BYTES]),
                           request=streamed.request)


def _plain(value):
    """A history held in a sequence or mapping of its own (session.log.LoggedHistory) as JSON's list or object."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def status_failure(response) -> StatusFailure:
    """A read non-2xx answer as the SDK words it (`Error code: N - <body>`)."""
    text = response.text.strip()
    try:
        body: Any = json.loads(text)
        message = f"Error code: {response.status_code} - {body}"
    except ValueError:
        body, message = text, text or f"Error code: {response.status_code}"
    return StatusFailure(response, body, message)

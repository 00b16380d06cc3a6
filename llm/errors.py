"""Every way a call to the Anthropic API can fail, as one LLMError with one line a person can act on.

The one place error wording is read: an HTTP status, an SSE `error` event or a failed request
becomes an ErrorKind (llm/contract.py). A context overflow in any common wording (the table in
llm/overflow.py: Anthropic's, OpenAI's, LiteLLM's, llama.cpp's, the Chinese providers') becomes
PROMPT_TOO_LONG with the error's `counted` and `maximum` where the text states them. An endpoint
that refuses the system prompt as blocks or `cache_control` (FORM_WORDINGS: a gateway in front of a
server that takes only strings; 400, 422 or 5xx) becomes FORM_REFUSED, which the agent answers by
sending the plain form once (loop.py). The whole message is read, not only its first line: LiteLLM
puts the backend's validation error on the third. The calls are llm/anthropic_http.py's: its StatusFailure
and SendFailure carry what the SDK's APIStatusError and APIConnectionError did.

What the endpoint says in an error (its message, a retry-after header) is untrusted: the message is
made valid text, cut to one line of at most MESSAGE_CHARS and redacted (an endpoint that echoes the
key gets "[redacted]" shown instead); a retry-after that is negative, not a number or huge becomes
the usual backoff or MAX_RETRY_AFTER. A base URL's user:password part is never shown.
"""

from __future__ import annotations

import json
import math
import re

from llm.contract import ErrorKind, LLMError
from llm.anthropic_http import SendFailure, StatusFailure
from llm.overflow import overflow
from redact import redact, redact_url

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504, 529}
MAX_RETRY_AFTER = 60.0
MESSAGE_CHARS = 300
STREAM_ERROR_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500,
                       "timeout_error": 504, "invalid_request_error": 400, "authentication_error": 401,
                       "permission_error": 403, "not_found_error": 404, "request_too_large": 413}
WORDING_CHARS = 20_000             # how much of an error's text is read for its wording
# An endpoint that cannot take the system prompt as a list of blocks, or cache_control marks: pydantic's
# "Input should be a valid string" (a Python server behind a gateway; LiteLLM passes it on as a 500),
# "cache_control" named in a refusal, a backend's 422 (LiteLLM says only "Error code: 422"), and
# type errors about `system` or `content`.
FORM_WORDINGS = re.compile(r"cache_control|input should be a valid string|error code:? 422|"
                           r"(system|content)\W.{0,120}?(must be|should be|expected|expects)( a| an)?( valid)? "
                           r"(string|str\b)|invalid type for .{0,40}?(system|content)", re.IGNORECASE | re.DOTALL)
FORM_STATUSES = {400, 422, 500, 502, 503}


def one_line(text, secrets=()) -> str:
    """Untrusted text as one short, valid, redacted line."""
    text = redact(str(text), secrets)
    text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text[:MESSAGE_CHARS * 4])
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:MESSAGE_CHARS]


def _error_message(body) -> tuple[str, str]:
    body = body if isinstance(body, dict) else {}
    err = body.get("error", body)
    err = err if isinstance(err, dict) else {}
    kind = err.get("type")
    kind = kind if isinstance(kind, str) else ""
    return kind[:64], err.get("message") or ""


def retry_after(headers) -> float | None:
    """The server's retry-after, clamped to [0, MAX_RETRY_AFTER]; None when unusable."""
    try:
        value = float(headers.get("retry-after")) if headers is not None else math.nan
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return min(value, MAX_RETRY_AFTER)


def classify(exc: BaseException, base_url: str, model: str, timeout: float, secrets=(),
             key_source: str = "") -> LLMError:
    """Turn any exception from a model call into an LLMError with a helpful line. `key_source` says
    where the key in use came from (for a 401: "ANTHROPIC_API_KEY from /path/.env")."""
    if isinstance(exc, LLMError):
        return exc
    url = redact_url(base_url)
    if isinstance(exc, SendFailure) and exc.timed_out:
        return LLMError(f"Request to {url} timed out after {timeout:g}s (API_TIMEOUT).", ErrorKind.TIMEOUT,
                        retryable=True)
    if isinstance(exc, SendFailure):
        cause = exc.__cause__ or exc.__context__
        text = one_line(cause or exc, secrets)
        if "refused" in text.lower() or "errno 111" in text.lower():
            return LLMError(f"Cannot connect to {url}: connection refused. Check ANTHROPIC_BASE_URL "
                            "and that the server is running.", ErrorKind.CONNECTION, retryable=True)
        return LLMError(f"Connection to {url} failed: {text[:200]}", ErrorKind.CONNECTION, retryable=True)
    if isinstance(exc, StatusFailure):
        kind, raw = _error_message(exc.body)
        message = one_line(raw or exc.message or exc, secrets)
        status = exc.status_code if exc.status_code != 200 else STREAM_ERROR_STATUS.get(kind, 500)
        wait = retry_after(exc.response.headers)
        return from_status(status, kind, message, url, model, wait, key_source, _whole(exc.body, raw))
    text = one_line(f"{type(exc).__name__}: {exc}", secrets)
    if "Timeout" in type(exc).__name__:
        return LLMError(f"No data from {url} for {timeout:g}s (API_TIMEOUT); the answer was abandoned.",
                        ErrorKind.TIMEOUT, retryable=True)
    if _broke_in_transit(exc) or "incomplete chunked read" in text or "peer closed" in text:
        return LLMError(f"The connection to {url} dropped mid-answer.", ErrorKind.DROPPED, retryable=True)
    return LLMError(f"Model call failed: {text}", ErrorKind.UNKNOWN)


def _broke_in_transit(exc: BaseException) -> bool:
    """The connection failed while the body was read (a reset, a protocol error): httpx2's
    TransportError, by its class (httpx2 is imported only when a call is made), or the OS's own.
    A failure before the answer began is a SendFailure, classed above."""
    return isinstance(exc, ConnectionError) or any(c.__name__ == "TransportError" for c in type(exc).__mro__)


def stream_error(data, base_url: str, model: str, secrets=(), key_source: str = "") -> LLMError:
    """An `error` event in the middle of a stream (the HTTP status was already 200)."""
    kind, raw = _error_message(data)
    return from_status(STREAM_ERROR_STATUS.get(kind, 500), kind, one_line(raw or kind or "error", secrets),
                       redact_url(base_url), model, None, key_source, _whole(data, raw))


def _whole(body, raw) -> str:
    """All of an error's text that its wording may be in: the message whole, then the body (for
    numbers some servers put in fields of their own, like llama.cpp's n_ctx)."""
    try:
        rest = json.dumps(body, ensure_ascii=False)[:WORDING_CHARS] if body is not None else ""
    except (TypeError, ValueError):
        rest = ""
    return f"{raw if isinstance(raw, str) else ''}\n{rest}"[:WORDING_CHARS]


def from_status(status: int, kind: str, message: str, url: str, model: str, wait: float | None, key_source: str = "",
                text: str = "") -> LLMError:
    """`message`: the one line to show; `text`: everything the wording may be in (default: `message`)."""
    text = text or message
    if status == 401:
        check = f"The key in use is {key_source}: check it there." if key_source else \
            "Check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)."
        return LLMError(f"Authentication failed (401) at {url}: {message}. {check}", ErrorKind.AUTH, status)
    if status == 403:
        return LLMError(f"Permission denied (403): {message}", ErrorKind.PERMISSION, status)
    if status == 404:
        return LLMError(f"Not found (404) at {url}: {message}. Check MODEL_ID={one_line(model)} and "
                        "ANTHROPIC_BASE_URL.", ErrorKind.NOT_FOUND, status)
    if status not in (401, 403, 404, 429):
        found = overflow(text)
        if found is not None or status == 413 and "too long" in text.lower():
            return LLMError(f"Prompt too long: {message}", ErrorKind.PROMPT_TOO_LONG, status,
                            counted=found.counted if found else None, maximum=found.window if found else None)
    if status in FORM_STATUSES and FORM_WORDINGS.search(text):
        return LLMError(f"The endpoint refused the request's form ({status}): {message} (if this endpoint does "
                        "not support prompt caching, set PROMPT_CACHE=off)", ErrorKind.FORM_REFUSED, status)
    if status in (400, 413, 422):
        return LLMError(f"The API rejected the request ({status}): {message}", ErrorKind.BAD_REQUEST, status)
    if status == 429:
        return LLMError(f"Rate limited (429): {message}", ErrorKind.RATE_LIMIT, status, True, wait)
    if status == 529 or kind == "overloaded_error":
        return LLMError(f"The API is overloaded (529): {message}", ErrorKind.OVERLOADED, status, True, wait)
    return LLMError(f"API error ({status}): {message}", ErrorKind.SERVER, status, status in RETRY_STATUSES, wait)


"""The model seam: what the loop sends, what it gets back, and every way a call can fail.

    Provider.stream(request, emit) -> ModelReply     one model call; TextDelta events as text arrives
    Provider.secrets()                               every credential value commands must never see

A `Request` is the whole call (model, system, messages, tools, max_tokens, purpose); cache marks are
already in it (loop/prompt_cache.py: the conversation owns the cache policy, not the client). A
`ModelReply` holds plain, API-shaped dicts and one normalised `Usage` (llm/usage.py). A failure is an
`LLMError` whose `kind` is one of the closed set `ErrorKind`; for PROMPT_TOO_LONG it carries the
counted and the maximum tokens as numbers, parsed once by the provider, so nothing else reads
error wording. Providers are listed in llm/providers.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from events import Emit
from llm.usage import Usage

KNOWN_STOP_REASONS = {"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal",
                      "model_context_window_exceeded"}
SHORT_WORDS = {"rate_limit": "rate limited", "overloaded": "overloaded", "server": "server error",
               "dropped": "connection dropped", "connection": "connection failed", "timeout": "timed out"}


class ErrorKind(str, Enum):
    """Every way a model call can fail (the value is the word used in logs and the retry line)."""
    AUTH = "auth"
    PERMISSION = "permission"
    NOT_FOUND = "not_found"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER = "server"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    DROPPED = "dropped"              # the stream ended (or the connection broke) before the answer did
    MALFORMED = "malformed"          # the stream is not what the API sends
    OVERSIZED = "oversized"          # the answer grew far past what max_tokens allows
    PROMPT_TOO_LONG = "prompt_too_long"
    BAD_REQUEST = "bad_request"
    EMPTY = "empty"                  # a 200 with no content and no output tokens: silence, not an answer
    FORM_REFUSED = "form_refused"    # the endpoint refuses the system prompt as blocks, or cache_control
    UNKNOWN = "unknown"


class LLMError(Exception):
    """A model call failed; `str(err)` is the one line to show. `counted`/`maximum`: for
    PROMPT_TOO_LONG, the API's "N tokens > M maximum" when it said the numbers (else None)."""

    def __init__(self, message: str, kind: ErrorKind, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None, counted: int | None = None, maximum: int | None = None):
        super().__init__(message)
        self.kind, self.status, self.retryable, self.retry_after = ErrorKind(kind), status, retryable, retry_after
        self.counted, self.maximum = counted, maximum

    @property
    def short(self) -> str:
        """A few words for the retry line, e.g. "529 overloaded"."""
        text = SHORT_WORDS.get(self.kind.value, self.kind.value.replace("_", " "))
        return f"{self.status} {text}" if self.status else text


@dataclass
class Request:
    """One model call, complete: cache marks (if any) are already on `system` and `messages`."""
    model: str
    system: object                      # a str, or a list of text blocks (with cache marks)
    messages: list[dict]
    max_tokens: int
    tools: list[dict] | None = None
    purpose: str = "answer"             # "answer" or "summary"

    def params(self) -> dict:
        """The Messages API parameters (without `stream`)."""
        params = {"model": self.model, "max_tokens": self.max_tokens, "system": self.system,
                  "messages": self.messages}
        if self.tools:
            params["tools"] = self.tools
        return params


@dataclass
class ModelReply:
    content: list[dict]
    stop_reason: str | None
    usage: Usage | None = None
    incomplete_tool_ids: set = field(default_factory=set)   # tool_use blocks cut off mid-input
    notes: list[str] = field(default_factory=list)          # what cleaning changed, one line each
    repeated: bool = False        # the answer looped on one piece of text: cut to one copy (llm/repetition.py)


class Provider(Protocol):
    """A model behind the seam (llm/providers.py lists them)."""

    def stream(self, request: Request, emit: Emit) -> ModelReply:
        """One call: RequestStarted, TextDelta…, Retrying, ResponseDone events go to `emit`."""
        ...

    def secrets(self) -> tuple:
        """Every credential value to keep out of error lines and command output."""
        ...

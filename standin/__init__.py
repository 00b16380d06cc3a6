"""A local stand-in for the Anthropic Messages API (see server.py); run it with `python -m standin`."""

from .brain import Brain
from .server import StandIn
from .tokens import count_request_tokens
from .validate import InvalidRequest, validate_request

__all__ = ["Brain", "StandIn", "InvalidRequest", "count_request_tokens", "validate_request"]

"""The model seam (see contract.py) and its providers; importing it does not import the SDK.

    contract.py       Request, ModelReply, Provider, LLMError with a closed ErrorKind
    usage.py          one normalised Usage record (costs and the token meter read it)
    streaming.py      the retry loop over any stream of API events, with Retrying events
    stream_watch.py   an HTTP SSE stream read with a total deadline and an idle timer
    reply.py          the streamed answer accumulated and cleaned (the endpoint is untrusted)
    errors.py         the Anthropic API's errors as LLMErrors (the one place error wording is read)
    overflow.py       every common wording of a context overflow, in one table (errors.py reads it)
    anthropic_api.py  AnthropicProvider, check_key
    anthropic_http.py the Anthropic API over plain HTTP (httpx2), not the SDK: the streamed Messages
                      request and the key check's GET
    scripted.py       ScriptedModel: in-process answers from the stand-in's scripts and brains
    providers.py      PROVIDERS (the PROVIDER setting picks one) and make_provider
"""

from llm.anthropic_api import AnthropicProvider, KeyCheck, check_key
from llm.contract import KNOWN_STOP_REASONS, ErrorKind, LLMError, ModelReply, Provider, Request
from llm.providers import PROVIDERS, make_provider
from llm.usage import Usage

__all__ = ["KNOWN_STOP_REASONS", "PROVIDERS", "AnthropicProvider", "ErrorKind", "KeyCheck", "LLMError", "ModelReply",
           "Provider", "Request", "Usage", "check_key", "make_provider"]

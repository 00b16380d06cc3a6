"""Every common way an endpoint says "the prompt does not fit the context window", in one table.

    overflow(text) -> Overflow | None     the entry that matched, with the window and the count it stated

An Anthropic-compatible endpoint is often a gateway in front of another API, and passes that API's
wording on: a context overflow may arrive in Anthropic's, OpenAI's, a gateway's or a local server's
words, with any of 400, 413 or 500. Each entry names where the wording comes from; where the text
states the window (and the size asked for), the groups `window` and `counted` take them, so the
compactor can learn the window (compaction/window.py; an endpoint's text is untrusted and a window
below MIN_WINDOW is not believed there).

Sources (error texts as users reported them in public issue trackers):
  Anthropic      "prompt is too long: 213464 tokens > 200000 maximum"; "input length and `max_tokens` exceed
                 context limit: 189136 + 20000 > 204648" (anthropics/claude-code#408)
  OpenAI         "This model's maximum context length is 4097 tokens. However, you requested 4203 tokens
                 (3703 in the messages, 500 in the completion)", code context_length_exceeded
                 (mckaywrigley/chatbot-ui#102); "However, your messages resulted in 6988 tokens"
  DeepSeek       OpenAI's wording, code invalid_request_error: "This model's maximum context length is
                 131072 tokens. However, you requested 131134 tokens" (evalstate/fast-agent#621)
  vLLM           OpenAI's wording (vllm-project/vllm#20409), and since 2026 "However, your request has 8
                 input tokens plus 2045 'max_tokens'" (vllm-project/vllm#33425) or "you requested 128000
                 output tokens and your prompt contains at least 134145 input tokens"
  OpenRouter     "This endpoint's maximum context length is 131072 tokens. However, you requested about
                 138956 tokens" (OpenHands/OpenHands#9937)
  LiteLLM        "litellm.ContextWindowExceededError: ... maximum context length is 4096 tokens ..." (seen
                 here, litellm 1.80.0 in front of an OpenAI-compatible server; tests/test_gateway.py)
  llama.cpp      "the request exceeds the available context size. try increasing the context size or enable
                 context shift" (type exceed_context_size_error, ggml-org/llama.cpp#15780); "request (4390
                 tokens) exceeds the available context size (4096 tokens), try increasing it"; "Context size
                 has been exceeded." (ggml-org/llama.cpp#19774)
  llama-cpp-python  "Requested tokens (2285) exceed context window of 2048"
  SGLang         "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens)"
  Moonshot/Kimi  "Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)"
                 (MoonshotAI/kimi-cli#2011)
  Zhipu/GLM      code 1261 "Prompt exceeds max length" (zeroclaw-labs/zeroclaw#4124)
  MiniMax        "invalid params, context window exceeds limit (2013)" — 2013 is MiniMax's error code, not
                 a size (MiniMax-AI/MiniMax-M2#119, NousResearch/hermes-agent#14743)
  Qwen DashScope "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 204800]"
                 (QwenLM/qwen-code#98); "Current length is 69553 while limit is 65536" (anomalyco/opencode#1551)
  xAI            "This model's maximum prompt length is 131072 but the request contains 136973 tokens"
                 (cline/cline#3120)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

N = r"(\d[\d,]*)"


@dataclass(frozen=True)
class Wording:
    source: str
    pattern: re.Pattern
    window: int = 0          # the group holding the stated window (0: the text states none)
    counted: int = 0         # the group holding the tokens asked for (0: none)
    added: int = 0           # a group to add to `counted` (Anthropic's "input + max_tokens > window")


def _w(source: str, pattern: str, window: int = 0, counted: int = 0, added: int = 0) -> Wording:
    return Wording(source, re.compile(pattern, re.IGNORECASE | re.DOTALL), window, counted, added)


# Most specific first: the first entry that matches decides (a LiteLLM message holds OpenAI's wording
# too, and that one states the numbers).
WORDINGS: tuple[Wording, ...] = (
    _w("anthropic", rf"prompt is too long\W+{N}\s*tokens\s*>\s*{N}", window=2, counted=1),
    _w("anthropic", r"prompt is too long"),
    _w("anthropic-max-tokens", rf"exceed context limit:\s*{N}\s*\+\s*{N}\s*>\s*{N}", window=3, counted=1, added=2),
    # "you requested 4847 tokens (4747 in the messages, 100 in the completion)": the prompt is what is counted
    _w("openai", rf"maximum context length is {N} tokens.{{0,40}}?you requested(?: about)? {N} tokens \({N} "
                 rf"(?:in the messages|of text input)(?:, {N} in the functions)?", window=1, counted=3, added=4),
    _w("openai", rf"maximum context length is {N} tokens.{{0,40}}?(?:you requested(?: about)?|resulted in|"
                 rf"request has|prompt contains at least) {N}", window=1, counted=2),
    _w("openai", rf"maximum context length is {N} tokens", window=1),
    _w("openai", r"context_length_exceeded"),
    _w("litellm", r"ContextWindowExceededError"),
    _w("llama.cpp", rf"request \({N} tokens\) exceeds the available context size \({N} tokens\)",
       window=2, counted=1),
    _w("llama.cpp", rf"exceed_context_size_error.{{0,400}}?n_prompt_tokens\W+{N}.{{0,400}}?n_ctx\W+{N}", window=2, counted=1),
    _w("llama.cpp", r"exceeds? the available context size|exceed_context_size_error|context size has been exceeded"),
    _w("llama-cpp-python", rf"requested tokens \({N}\) exceed context window of {N}", window=2, counted=1),
    _w("sglang", rf"input length \({N} tokens\) exceeds the maximum allowed length \({N} tokens\)",
       window=2, counted=1),
    _w("moonshot", rf"exceeded model token limit:?\s*{N}\s*\(requested:?\s*{N}\)", window=1, counted=2),
    _w("moonshot", r"exceeded model token limit"),
    _w("zhipu", r"prompt exceeds max length"),
    _w("minimax", r"context window exceeds limit"),
    _w("dashscope", rf"range of input length should be \[1,\s*{N}\]", window=1),
    _w("qwen", rf"current length is {N} while limit is {N}", window=2, counted=1),
    _w("xai", rf"maximum prompt length is {N} but the request contains {N} tokens", window=1, counted=2),
)


@dataclass(frozen=True)
class Overflow:
    source: str
    window: int | None = None
    counted: int | None = None


def _number(match: re.Match, group: int) -> int | None:
    return int(match.group(group).replace(",", "")) if group and match.group(group) else None


def overflow(text: str) -> Overflow | None:
    """The overflow `text` (an error message, or its whole body) reports, or None when it is none."""
    text = text[:20_000]
    for wording in WORDINGS:
        found = wording.pattern.search(text)
        if found:
            counted = _number(found, wording.counted)
            if counted is not None and wording.added:
                counted += _number(found, wording.added) or 0
            return Overflow(wording.source, _number(found, wording.window), counted)
    return None

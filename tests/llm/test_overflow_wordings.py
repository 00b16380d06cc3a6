"""Every overflow wording in llm/overflow.py's table, one test each, with the text as the endpoint sends it;
and what an error becomes (llm/errors.py): PROMPT_TOO_LONG with the stated window, FORM_REFUSED for an
endpoint that refuses the system prompt as blocks, and neither for look-alikes."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from llm.contract import ErrorKind
from llm.errors import from_status, stream_error
from llm.overflow import WORDINGS, overflow

# (the entry's index in WORDINGS, a real text, the window it states, the tokens it says were asked for)
SAMPLES = [
    (0, "prompt is too long: 213,464 tokens > 200,000 maximum", 200_000, 213_464),
    (1, "Prompt is too long", None, None),
    (2, "input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648, decrease input length or "
        "`max_tokens` and try again", 204_648, 209_136),
    (3, "This model's maximum context length is 4096 tokens. However, you requested 4847 tokens (4747 in the "
        "messages, 100 in the completion). Please reduce the length of the messages or completion.", 4096, 4747),
    (3, "This model's maximum context length is 8192 tokens. However, you requested 8213 tokens (6683 in the "
        "messages, 730 in the functions, and 800 in the completion).", 8192, 7413),
    (4, "this endpoint's maximum context length is 131072 tokens. however, you requested about 138956 tokens",
     131_072, 138_956),
    (5, "This model's maximum context length is 131072 tokens. Please reduce the length of the messages.",
     131_072, None),
    (6, '{"error": {"message": "Request too large", "code": "context_length_exceeded"}}', None, None),
    (7, "litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: prompt overflow",
     None, None),
    (8, "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it", 4096, 4390),
    (9, '{"error": {"code": 400, "message": "the request exceeds the available context size. try increasing the '
        'context size or enable context shift", "type": "exceed_context_size_error", "n_prompt_tokens": 14429, '
        '"n_ctx": 8192}}', 8192, 14429),
    (10, "the request exceeds the available context size. try increasing the context size or enable context shift",
     None, None),
    (11, "Requested tokens (2285) exceed context window of 2048", 2048, 2285),
    (12, "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens).", 59_862, 160_062),
    (13, "Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)", 262_144, 269_030),
    (14, "Your request exceeded model token limit", None, None),
    (15, '{"error":{"code":"1261","message":"Prompt exceeds max length"}}', None, None),
    (16, "invalid params, context window exceeds limit (2013)", None, None),      # 2013: an error code, not a size
    (17, "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 204800]", 204_800, None),
    (18, "Please reduce the length of the messages or completion. Current length is 69553 while limit is 65536",
     65_536, 69_553),
    (19, "This model's maximum prompt length is 131072 but the request contains 136973 tokens.", 131_072, 136_973),
]


def test_every_entry_of_the_table_has_a_sample():
    assert {index for index, *_ in SAMPLES} == set(range(len(WORDINGS)))


@pytest.mark.parametrize("index, text, window, counted", SAMPLES, ids=[f"{i}-{WORDINGS[i].source}" for i, *_ in SAMPLES])
def test_each_wording_is_an_overflow_with_what_it_states(index, text, window, counted):
    found = overflow(text)
    assert found is not None and found.source == WORDINGS[index].source
    assert (found.window, found.counted) == (window, counted)
    assert WORDINGS[index].pattern.search(text)


@pytest.mark.parametrize("index, text, window, counted", SAMPLES, ids=[f"{i}-{WORDINGS[i].source}" for i, *_ in SAMPLES])
def test_each_wording_becomes_prompt_too_long_at_any_status_it_comes_with(index, text, window, counted):
    for status in (400, 413, 500):
        err = from_status(status, "invalid_request_error", text.splitlines()[0][:300], "http://x", "m", None, "", text)
        assert err.kind is ErrorKind.PROMPT_TOO_LONG and (err.maximum, err.counted) == (window, counted)


def test_the_whole_message_is_read_not_only_its_first_line():
    text = ("litellm.BadRequestError: upstream said\nThis model's maximum context length is 8192 tokens. However, "
            "you requested 9000 tokens")
    err = from_status(400, "", "litellm.BadRequestError: upstream said", "http://x", "m", None, "", text)
    assert err.kind is ErrorKind.PROMPT_TOO_LONG and err.maximum == 8192
    assert "\n" not in str(err)


def test_an_sse_error_event_with_an_overflow_wording_is_one():
    err = stream_error({"type": "error", "error": {"type": "api_error", "message":
                        "the request exceeds the available context size"}}, "http://x", "m")
    assert err.kind is ErrorKind.PROMPT_TOO_LONG


@pytest.mark.parametrize("text", [
    "Number of request tokens has exceeded your per-minute rate limit",
    "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-6",
    "max_tokens must be less than or equal to 16384",
    "messages: text content blocks must be non-empty",
])
def test_look_alikes_are_not_overflows(text):
    assert overflow(text) is None
    assert from_status(400, "invalid_request_error", text, "http://x", "m", None).kind is ErrorKind.BAD_REQUEST


def test_rate_limits_and_auth_stay_what_they_are_whatever_the_text():
    text = "This model's maximum context length is 4096 tokens"
    assert from_status(429, "", text, "http://x", "m", None).kind is ErrorKind.RATE_LIMIT
    assert from_status(401, "", text, "http://x", "m", None).kind is ErrorKind.AUTH


# ---- an endpoint that refuses the system prompt as blocks ----------------------------------------------

LITELLM_500 = ("litellm.InternalServerError: InternalServerError: OpenAIException - 1 validation error for "
               "ChatCompletionRequest\nmessages.0.content\n  Input should be a valid string [type=string_type]. "
               "Received Model Group=small-model")


@pytest.mark.parametrize("status, text", [
    (500, LITELLM_500),                                                         # what LiteLLM 1.80 answered
    (400, "litellm.BadRequestError: OpenAIException - Error code: 422. Received Model Group=small-model"),
    (400, "system.0.cache_control: Extra inputs are not permitted"),
    (400, "Invalid type for 'messages[0].content': expected a string, but got an array instead."),
    (422, "system: Input should be a valid string"),
    (503, "the system prompt must be a string"),
])
def test_refusals_of_the_blocks_form_are_form_refused_and_not_retried(status, text):
    err = from_status(status, "api_error", text.splitlines()[0], "http://x", "m", None, "", text)
    assert err.kind is ErrorKind.FORM_REFUSED and not err.retryable
    assert "PROMPT_CACHE=off" in str(err)


def test_a_plain_server_error_is_still_retried():
    err = from_status(500, "api_error", "Internal server error", "http://x", "m", None)
    assert err.kind is ErrorKind.SERVER and err.retryable


@given(st.text(max_size=2_000), st.sampled_from([400, 413, 422, 500, 503]))
def test_any_error_text_becomes_one_error_with_one_line(text, status):
    err = from_status(status, "invalid_request_error", text[:300], "http://x", "m", None, "", text)
    assert isinstance(err.kind, ErrorKind)
    if err.kind is ErrorKind.PROMPT_TOO_LONG and err.maximum is not None:
        assert err.maximum >= 0 and (err.counted is None or err.counted >= 0)

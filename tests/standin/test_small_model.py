"""The stand-in's small local model of issue 32: Brain(summary="restate") restates everything it was given,
and LocalWindow answers past its n_ctx as llama.cpp's server does (silence, or its 400) and leaves the
brain only the room the window has."""

from __future__ import annotations

import pytest

from llm.overflow import overflow
from standin import Brain, StandIn, count_request_tokens
from standin.brain import RESTATE_MARGIN
from standin.local_window import LocalWindow
from standin.tokens import text_tokens
from support.helpers import ask, call, results, say, user

SUMMARY_REQUEST = "<summary-request>\nSummarize the conversation above.\n</summary-request>"


def body(messages, max_tokens=2_000) -> dict:
    return {"model": "stand-in", "max_tokens": max_tokens, "messages": messages}


def conversation() -> list[dict]:
    c = call("read_file", path="a.py")
    return [user("the log: " + "error in module_17 " * 40), ask(c), results((c, "def f():\n    return 1\n")),
            say("read it"), user("what failed?")]


def test_a_restating_summary_holds_everything_and_ends_within_max_tokens():
    reply = Brain(summary="restate")(body(conversation() + [user(SUMMARY_REQUEST)]))
    text = reply["text"]
    assert "error in module_17 " * 40 in text and "what failed?" in text and "return 1" in text
    assert "read_file" in text and "read it" in text and "<summary-request>" not in text
    short = Brain(summary="restate")(body(conversation() + [user(SUMMARY_REQUEST)], max_tokens=60))["text"]
    assert 0 < text_tokens(short) <= 60 - RESTATE_MARGIN and text.startswith(short)


def test_the_default_summary_is_the_short_one():
    text = Brain()(body(conversation() + [user(SUMMARY_REQUEST)]))["text"]
    assert "## User requests" in text and "error in module_17 " * 40 not in text
    with pytest.raises(ValueError):
        Brain(summary="long")


def test_past_its_window_it_answers_with_silence_or_llama_cpps_400():
    request = body(conversation())
    size = count_request_tokens(request)
    silent = LocalWindow(size - 1, Brain())
    assert silent(request) == {"usage": {"input_tokens": 0, "output_tokens": 0}}
    assert silent.overflows == [size] and silent.sizes == [size] and silent.seen == [(size, "over")]
    refusal = LocalWindow(size - 1, Brain(), overflow="error")(request)
    assert refusal["error"] == 400 and refusal["type"] == "exceed_context_size_error"
    stated = overflow(refusal["message"])
    assert stated is not None and (stated.source, stated.window, stated.counted) == ("llama.cpp", size - 1, size)


def test_inside_its_window_the_brain_gets_only_the_room_left_and_a_longer_answer_is_cut():
    request = body(conversation())
    size = count_request_tokens(request)
    seen: list[int] = []

    def long_answer(b: dict) -> dict:
        seen.append(b["max_tokens"])
        return {"text": "word " * 500}
    window = LocalWindow(size + 50, long_answer)
    reply = window(request)
    assert seen == [50] and reply["stop_reason"] == "max_tokens" and text_tokens(reply["text"]) <= 50
    assert window.cut == [size] and not window.overflows and window.seen == [(size, "cut")]
    roomy = LocalWindow(size + 3_000, Brain())
    fits = roomy(request)
    assert "stop_reason" not in fits and fits["text"].startswith("You said: what failed?")
    assert roomy.seen == [(size, "answered")]


def test_served_over_http_silence_is_an_empty_answer():
    window = LocalWindow(100, Brain())
    with StandIn(brain=window) as server:
        import anthropic
        client = anthropic.Anthropic(base_url=server.url, api_key="k")
        answer = client.messages.create(**body([user("hi " * 200)], max_tokens=50))
    assert answer.content == [] and answer.usage.output_tokens == 0 and len(window.overflows) == 1

"""The stand-in's OpenAI-compatible dialect (standin/openai_chat.py), the backend of the gateway lane: its
answers, streamed and not, and the shapes a small local server has — an empty 200 over the window, OpenAI's
overflow wording, a refusal of a system message made of parts, tool calls whose chunks repeat the id."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from standin import StandIn


def post(server, body):
    request = urllib.request.Request(f"{server.url}/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json", "authorization": "Bearer k"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read().decode()
            status = answer.status
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    if body.get("stream"):
        chunks = [line[6:] for line in raw.splitlines() if line.startswith("data: ")]
        assert chunks[-1] == "[DONE]"
        return status, [json.loads(c) for c in chunks[:-1]]
    return status, json.loads(raw)


def chat(content="hi", system="You are s08.", **extra):
    return {"model": "small-model", "max_tokens": 100, "messages": [{"role": "system", "content": system},
                                                                     {"role": "user", "content": content}], **extra}


@pytest.fixture
def backend():
    server = StandIn(context_window=4096).start()
    yield server
    server.stop()


def test_an_answer_streamed_and_not(backend):
    backend.queue({"text": "hello there"}, {"text": "hello there"})
    status, whole = post(backend, chat())
    assert status == 200 and whole["choices"][0]["message"]["content"] == "hello there"
    assert whole["usage"]["prompt_tokens"] > 0 and whole["choices"][0]["finish_reason"] == "stop"
    status, chunks = post(backend, chat(stream=True, stream_options={"include_usage": True}))
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "hello there" and chunks[-1]["usage"]["completion_tokens"] > 0


def test_over_the_window_streamed_is_an_empty_200_and_not_streamed_is_openais_400(backend):
    big = "word " * 5000
    status, chunks = post(backend, chat(big, stream=True))
    assert status == 200
    assert not any(c["choices"][0]["delta"].get("content") for c in chunks if c["choices"])
    assert chunks[-1]["usage"]["completion_tokens"] == 0
    status, error = post(backend, chat(big))
    assert status == 400 and error["error"]["code"] == "context_length_exceeded"
    assert "maximum context length is 4096 tokens. However, you requested" in error["error"]["message"]
    assert not backend.replies            # no scripted reply was used up by either


def test_with_vllm_counting_the_answer_must_fit_too(backend):
    backend.chat_overflow = "vllm"
    status, error = post(backend, chat(stream=True, max_tokens=8000))
    assert status == 400 and "8000 in the completion" in error["error"]["message"]
    backend.queue({"text": "ok"})
    assert post(backend, chat(stream=True, max_tokens=1000))[0] == 200


@pytest.mark.parametrize("status", [422, 500])
def test_a_system_message_made_of_parts_is_refused_when_plain_only(backend, status):
    backend.plain_only = status
    parts = [{"type": "text", "text": "You are s08."}]
    got, error = post(backend, chat(system=parts))
    assert got == status and "Input should be a valid string" in json.dumps(error)
    backend.queue({"text": "ok"})
    assert post(backend, chat())[0] == 200


def test_tool_call_chunks_repeat_the_id_when_asked(backend):
    backend.queue({"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}], "pieces": 4,
                   "repeat_tool_id": True})
    status, chunks = post(backend, chat(stream=True))
    parts = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"]
             and c["choices"][0]["delta"].get("tool_calls")]
    assert len(parts) > 2 and len({p["id"] for p in parts}) == 1
    assert json.loads("".join(p["function"]["arguments"] for p in parts)) == {"path": "a.txt"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_scripted_usage_and_finish_reason(backend):
    backend.queue({"text": "cut", "finish_reason": "length", "usage": {"prompt_tokens": 17}})
    status, whole = post(backend, chat())
    assert whole["choices"][0]["finish_reason"] == "length" and whole["usage"]["prompt_tokens"] == 17

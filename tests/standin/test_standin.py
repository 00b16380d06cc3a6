"""The stand-in itself, through the real SDK: wire format, strict validation, faults, token counts."""

from __future__ import annotations

import time
from types import ModuleType

import pytest

from support.agents import TEST_KEY
from standin import StandIn, count_request_tokens, validate_request, InvalidRequest

TOOLS = [{"name": "bash", "description": "run", "input_schema": {"type": "object", "properties": {}}}]


def sdk() -> ModuleType:
    """The SDK, imported when a test first needs it rather than while collecting (tests/conftest.py:
    each worker then starts about two CPU-seconds sooner)."""
    import anthropic
    return anthropic


def client(server, key=TEST_KEY, retries=0, timeout=10.0):
    return sdk().Anthropic(base_url=server.url, api_key=key, max_retries=retries, timeout=timeout)


def ask(c, messages, **kw):
    return c.messages.create(model="m", max_tokens=kw.pop("max_tokens", 200), messages=messages, **kw)


def test_json_and_sse_replies_carry_usage(standin):
    standin.queue({"text": "hello there"}, {"text": "streamed", "tool_calls": [{"name": "bash",
                                                                              "input": {"command": "ls"}}]})
    c = client(standin)
    r = ask(c, [{"role": "user", "content": "hi"}])
    assert r.content[0].text == "hello there" and r.usage.input_tokens > 0 and r.usage.output_tokens > 0
    with c.messages.stream(model="m", max_tokens=200, messages=[{"role": "user", "content": "hi"}],
                           tools=TOOLS) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use" and final.content[1].input == {"command": "ls"}
    assert final.usage.input_tokens > 0


def test_max_tokens_cuts_the_answer(standin):
    standin.queue({"text": "word " * 200})
    r = ask(client(standin), [{"role": "user", "content": "hi"}], max_tokens=10)
    assert r.stop_reason == "max_tokens" and r.usage.output_tokens <= 10


BAD = [
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]}, {"role": "user", "content": "next"}],
     "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1"),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9", "content": "x"}]}],
     "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t9"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
      {"role": "user", "content": [{"type": "text", "text": "first"},
                                   {"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}],
     "Did not find 1 tool_result block(s) at the beginning of this message"),
    ([{"role": "user", "content": ""}], "text content blocks must be non-empty"),
    ([{"role": "user", "content": [{"type": "text", "text": "  "}]}], "must contain non-whitespace text"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
      {"role": "user", "content": "note"}, {"role": "user", "content": [
          {"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}],
     "Did not find 1 tool_result block(s) at the beginning of this message"),
    ([{"role": "assistant", "content": "hi"}], 'first message must use the "user" role'),
    ([], "at least one message is required"),
]


@pytest.mark.parametrize("messages, wording", BAD)
def test_strict_validation_uses_the_real_wording(standin, messages, wording):
    with pytest.raises(sdk().BadRequestError) as info:
        ask(client(standin), messages)
    assert wording in str(info.value)
    assert standin.rejections        # recorded, so the fixture would flag an agent that sent it
    standin.rejections.clear()


def test_consecutive_same_role_messages_are_merged_like_the_real_api(standin):
    standin.queue({"text": "fine"})
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
                {"role": "user", "content": "[snipped 2 messages]"},
                {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}]
    assert ask(client(standin), messages).content[0].text == "fine"


def test_too_many_cache_breakpoints():
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "text", "text": f"t{i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]}]}
    with pytest.raises(InvalidRequest, match="A maximum of 4 blocks with cache_control may be provided. Found 5."):
        validate_request(body)


def test_wrong_key_is_401(standin):
    with pytest.raises(sdk().AuthenticationError):
        ask(client(standin, key="wrong"), [{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("fault, error", [
    ({"error": 429, "retry_after": 1}, "RateLimitError"),
    ({"error": 529}, "InternalServerError"),
    ({"error": 500}, "InternalServerError"),
    ({"drop": "before"}, "APIConnectionError"),
    ({"prompt_too_long": True}, "BadRequestError"),
])
def test_injected_faults(standin, fault, error):
    standin.queue(fault)
    with pytest.raises(getattr(sdk(), error)) as info:
        ask(client(standin), [{"role": "user", "content": "hi"}])
    if "retry_after" in fault:
        assert info.value.response.headers["retry-after"] == "1"
    if "prompt_too_long" in fault:
        assert "prompt is too long:" in str(info.value) and "tokens >" in str(info.value)


def test_drop_mid_stream_is_a_protocol_error(standin):
    standin.queue({"drop": "mid", "text": "partial answer " * 20})
    stream = client(standin).messages.create(model="m", max_tokens=500, stream=True,
                                             messages=[{"role": "user", "content": "hi"}])
    got = []
    with pytest.raises(Exception) as info:
        for ev in stream:
            if ev.type == "content_block_delta":
                got.append(ev.delta.text)
    assert got and "incomplete" in str(info.value).lower()


def test_hang_triggers_client_timeout(standin):
    standin.queue({"hang": 60})
    started = time.monotonic()
    with pytest.raises(sdk().APITimeoutError):
        ask(client(standin, timeout=0.5), [{"role": "user", "content": "hi"}])
    assert time.monotonic() - started < 30          # the client gave up, far before the answer would come


def test_real_prompt_too_long_uses_the_window():
    with StandIn(api_key=TEST_KEY, context_window=50) as small:
        with pytest.raises(sdk().BadRequestError, match=r"prompt is too long: \d+ tokens > 50 maximum"):
            ask(client(small), [{"role": "user", "content": "word " * 100}])


def test_token_count_endpoint_and_cjk_awareness(standin):
    english = {"model": "m", "messages": [{"role": "user", "content": "hello world " * 100}]}
    chinese = {"model": "m", "messages": [{"role": "user", "content": "上下文压缩" * 240}]}
    n = client(standin).messages.count_tokens(**english).input_tokens
    assert n == count_request_tokens(english)
    zh = count_request_tokens(chinese)
    assert zh >= 1200 > len("上下文压缩" * 240) // 4      # ~1 token per CJK char, not chars/4


@pytest.mark.parametrize("where", ["mid", "before"])
def test_a_held_answer_waits_for_release(standin, where):
    """The signal a busy-machine test waits for: the answer is held (half sent, or not begun) until the
    test releases it, however long the test took to get there."""
    import threading
    standin.queue({"text": "FIRST-HALF " + "x " * 40 + "SECOND-HALF", "hold": where, "chunk": 8})
    c, got, done = client(standin), [], threading.Event()

    def read():
        with c.messages.stream(model="m", max_tokens=200, messages=[{"role": "user", "content": "hi"}]) as s:
            for text in s.text_stream:
                got.append(text)
        done.set()
    threading.Thread(target=read, daemon=True).start()
    assert standin.wait_until_held(timeout=30)
    assert not done.is_set() and "SECOND-HALF" not in "".join(got)
    standin.release()
    assert done.wait(30) and "".join(got).endswith("SECOND-HALF") and standin.holding == 0

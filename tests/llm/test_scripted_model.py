"""The in-process scripted model (llm/scripted.py) behind the provider seam, checked against the stand-in.

It must answer scripts and brains as the stand-in does (same content, stop reasons and usage),
refuse exactly the requests the stand-in refuses (so a test on it still fails when s08 would send
the real API something invalid), fail as the Anthropic provider says, and be cut by Ctrl-C.
"""

from __future__ import annotations


import pytest

from config import Settings, load_settings
from support.agents import TEST_KEY
from events import Notice, RequestStarted, ResponseDone, Retrying, TextDelta
from support.helpers import ask, call, results, say, user
from llm import PROVIDERS, AnthropicProvider, ErrorKind, LLMError, Request, Usage, make_provider
from llm.scripted import ScriptedModel
from standin import Brain, StandIn

SETTINGS = dict(anthropic_api_key=TEST_KEY, api_max_retries=2, model_id="claude-sonnet-4-6")


def request(messages, max_tokens=1000, system="You are a test.", tools=None) -> Request:
    return Request(model="claude-sonnet-4-6", system=system, messages=messages, max_tokens=max_tokens, tools=tools)


def both(*script, window=200_000):
    """(scripted model, stand-in, its Anthropic provider), each with `script`."""
    model = ScriptedModel(Settings(**SETTINGS), script=list(script), context_window=window)
    server = StandIn(script=list(script), api_key=TEST_KEY, context_window=window).start()
    http = AnthropicProvider(Settings(**SETTINGS, anthropic_base_url=server.url))
    return model, server, http


def same_reply(model, http, req):
    a, b = model.stream(req), http.stream(req)
    strip = [{k: v for k, v in blk.items() if k != "id"} for blk in a.content]
    assert strip == [{k: v for k, v in blk.items() if k != "id"} for blk in b.content]
    assert (a.stop_reason, a.usage) == (b.stop_reason, b.usage)
    return a


def test_it_answers_a_script_as_the_stand_in_does():
    script = [{"text": "hello there"},
              {"text": "running", "tool_calls": [{"name": "bash", "input": {"command": "ls"}}]},
              {"text": "a long answer " * 50, "stop_reason": "max_tokens"}]
    model, server, http = both(*script)
    try:
        first = same_reply(model, http, request([user("hi")]))
        assert first.content == [{"type": "text", "text": "hello there"}] and first.stop_reason == "end_turn"
        assert isinstance(first.usage, Usage) and first.usage.input > 0 and first.usage.output > 0
        second = same_reply(model, http, request([user("hi"), say("hello there"), user("run ls")]))
        assert second.stop_reason == "tool_use" and second.content[1]["input"] == {"command": "ls"}
        assert same_reply(model, http, request([user("story")], max_tokens=20)).stop_reason == "max_tokens"
        assert model.answers == server.answers and len(model.requests) == len(server.requests) == 3
    finally:
        server.stop()


def test_it_answers_from_a_brain_and_streams_text_deltas():
    model = ScriptedModel(brain=Brain())
    events = []
    reply = model.stream(request([user("run echo hi")]), events.append)
    assert reply.content[-1]["type"] == "tool_use" and reply.content[-1]["input"] == {"command": "echo hi"}
    deltas = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert deltas == reply.content[0]["text"]
    assert isinstance(events[0], RequestStarted) and isinstance(events[-1], ResponseDone)
    assert events[-1].usage == reply.usage.to_api()


INVALID = [
    [ask(call("bash", command="ls"))],                                         # first message not the user's
    [user("hi"), ask(call("bash", command="ls")), user("no results")],         # a tool_use left unanswered
    [user("hi"), say("")],                                                    # an empty text block
    [user("hi"), say("ok"), results((call("bash", command="ls"), "x"))],       # a result for no call
]


@pytest.mark.parametrize("messages", INVALID)
def test_it_refuses_what_the_stand_in_refuses_with_the_same_line(messages):
    model, server, http = both({"text": "never sent"})
    try:
        with pytest.raises(LLMError) as scripted:
            model.stream(request(messages))
        with pytest.raises(LLMError) as wire:
            http.stream(request(messages))
    finally:
        server.stop()
    assert scripted.value.kind is wire.value.kind is ErrorKind.BAD_REQUEST
    assert str(scripted.value) == str(wire.value)
    assert model.rejections == server.rejections and len(model.rejections) == 1
    assert model.replies and server.replies            # nothing answered


def test_a_prompt_too_long_carries_the_numbers():
    model = ScriptedModel(context_window=1000)
    with pytest.raises(LLMError) as info:
        model.stream(request([user("word " * 2000)]))
    err = info.value
    assert err.kind is ErrorKind.PROMPT_TOO_LONG and err.maximum == 1000 and err.counted > 1000
    model.queue({"prompt_too_long": True})
    with pytest.raises(LLMError) as scripted:
        model.stream(request([user("short")]))
    assert scripted.value.kind is ErrorKind.PROMPT_TOO_LONG and scripted.value.counted == 1001


def test_retryable_errors_are_retried_visibly_and_others_are_not():
    model = ScriptedModel(Settings(**SETTINGS), script=[{"error": 429, "retry_after": 0}, {"text": "finally"}])
    events = []
    assert model.stream(request([user("hi")]), events.append).content[0]["text"] == "finally"
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == 1 and retries[0].reason == "429 rate limited" and retries[0].delay == 0
    model.queue({"error": 401})
    with pytest.raises(LLMError) as info:
        model.stream(request([user("hi")]))
    assert info.value.kind is ErrorKind.AUTH and "Authentication failed (401)" in str(info.value)


def test_a_failure_after_text_was_shown_is_not_retried():
    model = ScriptedModel(Settings(**SETTINGS), script=[{"stream_error": "overloaded_error", "text": "partial " * 20},
                                                        {"drop": "mid", "text": "partial " * 20}])
    for kind in (ErrorKind.OVERLOADED, ErrorKind.DROPPED):
        events = []
        with pytest.raises(LLMError) as info:
            model.stream(request([user("hi")]), events.append)
        assert info.value.kind is kind and any(isinstance(e, TextDelta) for e in events)
        assert not any(isinstance(e, Retrying) for e in events)


def test_ctrl_c_mid_stream_reaches_the_caller_and_bills_the_prompt():
    model = ScriptedModel(script=[{"text": "one two three four five six seven eight nine ten"}])
    events = []

    def emit(event):
        events.append(event)
        if isinstance(event, TextDelta):
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        model.stream(request([user("hi")]), emit)
    done = [e for e in events if isinstance(e, ResponseDone)]
    assert len(done) == 1 and done[0].stop_reason is None and done[0].usage["input_tokens"] > 0


def test_cleaning_applies_as_on_the_wire():
    model = ScriptedModel(script=[{"tool_calls": [{"name": "bash", "id": "bad id!", "input": {"command": "ls"}}]}])
    events = []
    reply = model.stream(request([user("hi")]), events.append)
    assert reply.content[0]["id"].startswith("toolu_s08_")
    assert any(isinstance(e, Notice) and "renamed" in e.text for e in events)


def test_one_setting_picks_the_provider(workspace, tmp_path):
    assert set(PROVIDERS) == {"anthropic", "scripted"}
    nobody = tmp_path / "no-user-settings.env"
    settings = load_settings(workspace, environ={"PROVIDER": "scripted"}, user_file=nobody).settings
    assert isinstance(make_provider(settings), ScriptedModel)
    assert isinstance(make_provider(Settings()), AnthropicProvider)
    result = load_settings(workspace, environ={"PROVIDER": "nonesuch"}, user_file=nobody)
    assert result.settings.provider == "anthropic" and any("PROVIDER" in w for w in result.warnings)


def test_one_hour_cache_writes_reach_the_usage_and_are_priced_at_twice_the_input():
    """The API's `cache_creation` split survives cleaning: /cost prices a one-hour write at 2×."""
    from session.costs import TokenTally
    from loop.prompt_cache import cache_breakpoints
    model = ScriptedModel(script=[{"text": "ok"}])
    system, messages, _ = cache_breakpoints("You are a test. " * 400, [user("hi " * 800)], None, True, "1h")
    events = []
    reply = model.stream(request(messages, system=system), events.append)
    assert reply.usage.cache_write_1h == reply.usage.cache_write > 0
    assert Usage.of(reply.usage.to_api()) == reply.usage
    tally = TokenTally()
    tally.add([e for e in events if isinstance(e, ResponseDone)][0].usage, price=(1.0, 0.0))
    assert tally.usd["writes"] == pytest.approx(2.0 * reply.usage.cache_write / 1_000_000)


def test_the_summary_call_retries_on_the_error_kind_not_on_its_wording():
    from compaction.summary import SummaryFailed, _ask
    shares = []

    def summarize_with(error):
        def summarize(share):
            shares.append(share)
            if share == 1.0:
                raise error
            return "summary", "end_turn"
        return summarize
    too_long = LLMError("Prompt too long: 9 tokens > 5 maximum", ErrorKind.PROMPT_TOO_LONG, 400, counted=9, maximum=5)
    assert _ask(summarize_with(too_long), lambda share: share) == ("summary", "end_turn") and shares == [1.0, 0.5]
    shares.clear()
    with pytest.raises(SummaryFailed):
        _ask(summarize_with(LLMError("The text is too long", ErrorKind.SERVER)), lambda share: share)
    assert shares == [1.0]


def test_config_names_exactly_the_providers_there_are():
    """config.py validates PROVIDER by name without importing the providers (no import circle)."""
    from config import PROVIDER_NAMES
    from llm.providers import PROVIDERS
    assert set(PROVIDER_NAMES) == set(PROVIDERS)

"""Answers from a hostile or broken endpoint are cleaned on arrival (tests/broken_stream.py plays it).

Each test sends something the real API never would — a lone surrogate, a repeated tool id, string
usage, pings forever — and checks that the turn ends with a clear line or carries on, and that the
next request the agent sends is one the real API would accept (the broken server validates it).
"""

from __future__ import annotations

import json
import math

import pytest

from support.broken_stream import BrokenServer, message
from commands import dispatch
from support.agents import base_env
from events import Notice, Retrying
from messages import tool_uses
from llm.errors import MAX_RETRY_AFTER, retry_after

KEY = "sk-ant-api03-broken-endpoint-test-key-0123456789"


@pytest.fixture
def broken():
    server = BrokenServer().start()
    yield server
    server.stop()
    assert not server.rejections, f"the agent sent requests the API would refuse: {server.rejections}"


@pytest.fixture
def app_at(tmp_path, workspace, broken):
    from agent import App

    def make(**settings):
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": broken.url, "ANTHROPIC_API_KEY": KEY,
               **{k.upper(): str(v) for k, v in settings.items()}}
        events: list = []
        app = App(workspace, environ=env)
        app.set_emit(events.append)
        return app, events
    return make


def notices(events, kind=None):
    return [e.text for e in events if isinstance(e, Notice) and (kind is None or e.kind == kind)]


def sendable(messages) -> None:
    json.dumps(list(messages), ensure_ascii=False).encode("utf-8")      # raises on a lone surrogate


def test_lone_surrogates_in_text_and_tool_input_become_replacement_characters(app_at, broken, workspace):
    broken.queue({"events": message({"type": "text", "text": "half \ud83d of a pair"},
                                    {"type": "tool_use", "id": "toolu_1", "name": "write_file",
                                     "input": {"path": "s.txt", "content": "a\udc00b"}}, stop_reason="tool_use")},
                 {"events": message({"type": "text", "text": "done \udfff"})})
    app, events = app_at()
    result = app.turn("go")
    assert result.ok and result.text == "done \ufffd"
    assert (workspace / "s.txt").read_text(encoding="utf-8") == "a\ufffdb"
    assert app.messages[1]["content"][0]["text"] == "half \ufffd of a pair"
    sendable(app.messages)
    assert app.turn("again").ok and len(broken.requests) == 3


@pytest.mark.parametrize("ids", [["toolu_a", "toolu_a"], ["", "toolu_b"], ["bad id; rm", "toolu_c"],
                                 [None, 7], ["x" * 300, "toolu_d"]])
def test_unusable_tool_ids_are_rewritten_consistently(app_at, broken, ids):
    calls = [{"type": "tool_use", "name": "bash", "input": {"command": f"echo {n}"}, **({"id": i} if i is not None else {})}
             for n, i in enumerate(ids)]
    broken.queue({"events": message(*calls, stop_reason="tool_use")}, {"events": message({"type": "text", "text": "ok"})})
    app, events = app_at()
    assert app.turn("go").ok
    used = [c["id"] for c in tool_uses(app.messages[1])]
    assert len(set(used)) == 2 and all(isinstance(i, str) and i for i in used)
    answered = [b["tool_use_id"] for b in app.messages[2]["content"]]
    assert answered == used
    assert any("renamed" in n for n in notices(events, "warning"))


def test_a_tool_id_already_in_the_history_is_rewritten(app_at, broken):
    call = {"type": "tool_use", "id": "toolu_same", "name": "bash", "input": {"command": "true"}}
    broken.queue({"events": message(call, stop_reason="tool_use")}, {"events": message({"type": "text", "text": "a"})},
                 {"events": message(call, stop_reason="tool_use")}, {"events": message({"type": "text", "text": "b"})})
    app, _ = app_at()
    assert app.turn("one").ok and app.turn("two").ok
    ids = [c["id"] for m in app.messages for c in tool_uses(m)]
    assert ids[0] == "toolu_same" and ids[1] != "toolu_same"


def test_odd_tool_names_unknown_blocks_and_planted_fields_never_reach_the_next_request(app_at, broken):
    blocks = [{"type": "tool_use", "id": "toolu_n", "name": "\x1b]52;c;aGk=\x07bash", "input": {}},
              {"type": "evil_block", "payload": 1},
              {"type": "text", "text": "hi"}]
    events = message(*blocks, stop_reason="tool_use")
    events[1]["content_block"]["cache_control"] = {"type": "ephemeral"}     # planted on the tool_use
    broken.queue({"events": events}, {"events": message({"type": "text", "text": "ok"})})
    app, seen = app_at()
    assert app.turn("go").ok
    call = tool_uses(app.messages[1])[0]
    assert set(call) == {"type", "id", "name", "input"} and call["name"] == "__52_c_aGk__bash"
    assert "Unknown tool" in app.messages[2]["content"][0]["content"]
    assert all(b["type"] != "evil_block" for b in app.messages[1]["content"])
    assert any("evil_block" in n for n in notices(seen))


def test_tool_input_nested_too_deeply_is_not_run(app_at, broken):
    deep = '{"command": ' + "[" * 300 + "]" * 300 + "}"
    call = {"type": "tool_use", "id": "toolu_deep", "name": "bash", "partial_json": deep}
    broken.queue({"events": message(call, stop_reason="tool_use")}, {"events": message({"type": "text", "text": "ok"})})
    app, _ = app_at()
    assert app.turn("go").ok
    result = app.messages[2]["content"][0]
    assert result["is_error"] and "not a valid JSON object" in result["content"]


@pytest.mark.parametrize("usage", [{"input_tokens": "12", "output_tokens": "lots"},
                                   {"input_tokens": -3015000, "output_tokens": -1},
                                   {"input_tokens": 10 ** 30, "cache_read_input_tokens": 1e400},
                                   {"input_tokens": None, "output_tokens": True}, "not a dict"])
def test_usage_values_are_clamped_never_negative_never_a_crash(app_at, broken, usage):
    broken.queue({"events": message({"type": "text", "text": "hi"}, start_usage=usage, usage=usage)})
    app, events = app_at(model_price="3,15")
    assert app.turn("go").ok
    tally = app.ledger.session
    for value in (tally.uncached, tally.writes, tally.reads, tally.output):
        assert isinstance(value, int) and 0 <= value <= 10_000_000
    assert tally.dollars(app.price) >= 0
    dispatch(app, "/cost")


@pytest.mark.parametrize("header", ["-1", "nan", "inf", "soon", "1e999"])
def test_retry_after_that_is_not_a_sane_number_falls_back_to_the_usual_backoff(app_at, broken, header):
    broken.queue({"status": 429, "headers": {"retry-after": header}}, {"events": message({"type": "text", "text": "ok"})})
    app, events = app_at(api_max_retries=1)
    assert app.turn("go").ok
    delays = [e.delay for e in events if isinstance(e, Retrying)]
    assert len(delays) == 1 and 0 <= delays[0] <= 1


def test_retry_after_is_clamped():
    assert retry_after({"retry-after": "100000"}) == MAX_RETRY_AFTER
    assert retry_after({"retry-after": "2.5"}) == 2.5
    assert all(retry_after({"retry-after": v}) is None for v in ("-1", "nan", "-inf", "", "x"))
    assert not math.isnan(retry_after({"retry-after": "0"}))


def test_pings_do_not_keep_a_call_alive(app_at, broken):
    broken.queue({"events": message()[:1], "then": "ping", "every": 0.2})
    app, events = app_at(api_timeout=1, api_total_timeout=600, api_max_retries=0)
    result = app.turn("go")
    assert not result.ok and "API_TIMEOUT" in result.error and "pings do not count" in result.error


def test_a_trickle_that_never_ends_meets_the_total_deadline(app_at, broken):
    start = message({"type": "text", "text": "x"})[:3]
    broken.queue({"events": start, "then": "trickle", "every": 0.2})
    app, events = app_at(api_timeout=5, api_total_timeout=2, api_max_retries=2)
    result = app.turn("go")
    assert not result.ok and "API_TOTAL_TIMEOUT" in result.error
    assert len(broken.requests) == 1                # a total timeout is not retried
    assert app.turn("and now?").ok                  # the next turn works


def test_an_answer_that_never_stops_growing_is_cut_off(app_at, broken):
    start = message({"type": "text", "text": "x"})[:3]
    flood = [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "y" * 50_000}}] * 60
    broken.queue({"events": start + flood})
    app, events = app_at(max_tokens=100)
    result = app.turn("go")
    assert not result.ok and "grew past" in result.error
    assert app.turn("and now?").ok


def test_malformed_events_end_the_turn_with_one_line(app_at, broken):
    broken.queue({"events": message()[:1] + ["event: content_block_delta\ndata: {not json\n\n"]})
    app, events = app_at(api_max_retries=0)
    result = app.turn("go")
    assert not result.ok and "malformed stream" in result.error
    assert app.turn("again").ok


@pytest.mark.parametrize("where", ["http", "stream"])
def test_an_error_message_that_echoes_the_key_shows_redacted(app_at, broken, where):
    text = f"invalid x-api-key: {KEY}\nsecond line"
    if where == "http":
        broken.queue({"status": 401, "body": {"type": "error", "error": {"type": "authentication_error",
                                                                         "message": text}}})
    else:
        broken.queue({"events": message()[:1] + [{"type": "error", "error": {"type": "api_error", "message": text}}]})
    app, events = app_at(api_max_retries=0)
    result = app.turn("go")
    assert not result.ok and "[redacted]" in result.error
    assert all(KEY not in n for n in notices(events)) and KEY not in result.error
    assert "second line" not in result.error


def test_pause_turn_continues_the_turn_from_the_answer_sent_back(app_for, standin):
    standin.queue({"text": "Searching the docs...  ", "stop_reason": "pause_turn"},
                  {"text": "Found it."})
    app, events = app_for()
    result = app.turn("look it up")
    assert result.ok and len(standin.requests) == 2
    assert standin.requests[1]["messages"][-1]["role"] == "assistant"        # continued, not a new user turn
    assert [m["role"] for m in app.messages] == ["user", "assistant"]
    assert [b["text"] for b in app.messages[1]["content"]] == ["Searching the docs...", "Found it."]
    assert app.turn("thanks").ok


def test_endless_pauses_end_the_turn_with_a_notice(app_for, standin):
    standin.queue(*[{"text": f"part {n}", "stop_reason": "pause_turn"} for n in range(8)])
    app, events = app_for()
    assert app.turn("go").ok
    assert any("paused this turn" in n for n in notices(events, "warning"))
    assert len(standin.requests) == 6


def test_an_unknown_stop_reason_is_named_in_one_line(app_for, standin):
    standin.queue({"text": "hm", "stop_reason": "cosmic_ray\x1b[2J"})
    app, events = app_for()
    assert app.turn("go").ok
    assert any("does not know: cosmic_ray??2J" in n for n in notices(events, "warning"))

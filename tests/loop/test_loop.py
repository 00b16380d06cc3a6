"""The agent loop end to end, in-process, against the strict stand-in or (tests marked `scripted`) the
in-process scripted model; the wire itself (authentication, a stalled stream, keys) keeps real HTTP.

Every test's stand-in fixture fails the test if any request the agent sent
was invalid, so each scenario also proves the history stayed sendable.
"""

from __future__ import annotations

import pytest

import socket

from events import Notice, Retrying, ToolFinished
from messages import tool_uses


def errors(events):
    return [e.text for e in events if isinstance(e, Notice) and e.kind == "error"]


def last_results(request):
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


@pytest.mark.scripted
def test_tool_round_trip(app_for, standin, workspace):
    standin.queue({"text": "Writing it.", "tool_calls": [{"name": "bash", "input": {"command": "echo hi > f.txt"}}]},
                  {"text": "Done."})
    app, events = app_for()
    result = app.turn("make f.txt")
    assert result.ok and result.text == "Done."
    assert (workspace / "f.txt").read_text() == "hi\n"
    results = last_results(standin.requests[1])
    assert results[0]["content"] == "(no output)\n[exit code 0]"
    assert [m["role"] for m in app.messages] == ["user", "assistant", "user", "assistant"]


@pytest.mark.scripted
def test_parallel_tool_calls_answered_in_order_in_one_message(app_for, standin, workspace):
    (workspace / "a.txt").write_text("A\n")
    standin.queue({"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}},
                                  {"name": "write_file", "input": {"path": "b.txt", "content": "B"}},
                                  {"name": "bash", "input": {"command": "cat b.txt"}}]},
                  {"text": "ok"})
    app, events = app_for()
    assert app.turn("go").ok
    calls = tool_uses(app.messages[1])
    results = last_results(standin.requests[1])
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    assert [r["content"] for r in results] == ["A\n", "Created b.txt (1 bytes, 1 line)", "B\n[exit code 0]"]
    assert len([e for e in events if isinstance(e, ToolFinished)]) == 3


@pytest.mark.scripted
def test_model_errors_in_tool_calls_become_readable_results(app_for, standin):
    standin.queue({"tool_calls": [{"name": "launch_rockets", "input": {}},
                                  {"name": "read_file", "input": {"file": "x"}},
                                  {"name": "read_file", "input": {"path": "../../etc/passwd"}}]},
                  {"text": "I see."})
    app, _ = app_for()
    assert app.turn("go").ok
    results = last_results(standin.requests[1])
    assert all(r.get("is_error") for r in results)
    assert "Unknown tool" in results[0]["content"] and "missing required" in results[1]["content"]
    assert "outside the workspace" in results[2]["content"]


@pytest.mark.scripted
def test_max_tokens_on_text_is_reported_and_history_stays_valid(app_for, standin):
    standin.queue({"text": "word " * 300}, {"text": "second answer"})
    app, events = app_for(max_tokens=20)
    result = app.turn("write a lot")
    assert result.ok and "MAX_TOKENS=20" in " ".join(e.text for e in events if isinstance(e, Notice))
    assert app.messages[-1]["role"] == "assistant"
    assert app.turn("continue").text == "second answer"


@pytest.mark.scripted
def test_tool_call_cut_off_by_max_tokens_is_not_run(app_for, standin, workspace):
    standin.queue({"tool_calls": [{"name": "write_file", "input": {"path": "big.txt", "content": "x " * 500}}]},
                  {"text": "I will write it in parts."})
    app, _ = app_for(max_tokens=40)
    assert app.turn("write big.txt").ok
    assert not (workspace / "big.txt").exists()
    result = last_results(standin.requests[1])[0]
    assert result["is_error"] and "cut off by the output limit (MAX_TOKENS=40)" in result["content"]


def test_authentication_failure_is_one_clear_line(app_for, standin, tmp_path):
    app, events = app_for(anthropic_api_key="wrong-key")
    result = app.turn("hi")
    assert not result.ok
    [line] = errors(events)
    assert "Authentication failed (401)" in line and "ANTHROPIC_API_KEY" in line


@pytest.mark.scripted
def test_rate_limit_is_retried_visibly_honouring_retry_after(app_for, standin):
    standin.queue({"error": 429, "retry_after": 0.2}, {"text": "finally"})
    app, events = app_for()
    assert app.turn("hi").text == "finally"
    [retry] = [e for e in events if isinstance(e, Retrying)]
    assert retry.reason == "429 rate limited" and abs(retry.delay - 0.2) < 0.01 and retry.max_attempts == 2


@pytest.mark.scripted
def test_overloaded_after_all_retries_gives_up_with_one_line(app_for, standin):
    standin.queue({"error": 529}, {"error": 529}, {"error": 529})
    app, events = app_for(api_max_retries=2)
    result = app.turn("hi")
    assert not result.ok and len([e for e in events if isinstance(e, Retrying)]) == 2
    [line] = errors(events)
    assert "overloaded (529)" in line and "after 2 retries" in line
    standin.queue({"text": "back"})
    assert app.turn("again").text == "back"       # the history is still valid


@pytest.mark.scripted
def test_server_error_and_dropped_connection_then_success(app_for, standin):
    standin.queue({"error": 500}, {"drop": "before"}, {"text": "made it"})
    app, events = app_for(api_max_retries=3)
    assert app.turn("hi").text == "made it"
    assert len([e for e in events if isinstance(e, Retrying)]) == 2


@pytest.mark.scripted
def test_stream_dropped_mid_answer_leaves_no_half_answer(app_for, standin):
    standin.queue({"drop": "mid", "text": "half of a long answer " * 10})
    app, events = app_for()
    result = app.turn("hi")
    assert not result.ok and "dropped mid-answer" in errors(events)[0]
    assert all(m["role"] == "user" for m in app.messages)          # nothing half-written appended
    standin.queue({"text": "whole answer"})
    assert app.turn("again").text == "whole answer"


@pytest.mark.scripted
def test_error_event_mid_stream(app_for, standin):
    standin.queue({"stream_error": "overloaded_error", "text": "some text before the error " * 4})
    app, events = app_for()
    assert not app.turn("hi").ok and "overloaded" in errors(events)[0]


@pytest.mark.scripted
def test_server_error_after_partial_output_keeps_history_valid(app_for, standin):
    standin.queue({"text": "first answer"}, {"stream_error": "api_error", "text": "half an answer " * 8},
                  {"text": "next answer"})
    app, events = app_for()
    app.turn("one")
    assert not app.turn("two").ok and "API error (500)" in errors(events)[0]
    assert "half an answer" not in str(app.messages)
    assert app.turn("three").text == "next answer"
    assert [m["role"] for m in standin.requests[-1]["messages"]] == ["user", "assistant", "user"]


def test_a_stream_that_stalls_times_out_with_one_line(app_for, standin):
    standin.queue({"text": "slow answer " * 20, "stall": 3}, {"text": "quick answer"})
    app, events = app_for(api_timeout=1, api_max_retries=0)
    result = app.turn("hi")
    assert not result.ok and "No data from" in errors(events)[0] and "API_TIMEOUT" in errors(events)[0]
    assert app.turn("again").text == "quick answer"


@pytest.mark.scripted
def test_529_then_success_shows_the_retry(app_for, standin):
    standin.queue({"error": 529}, {"text": "fine now"})
    app, events = app_for()
    assert app.turn("hi").text == "fine now"
    assert [e.reason for e in events if isinstance(e, Retrying)] == ["529 overloaded"]


@pytest.mark.scripted
def test_prompt_too_long_twice_ends_with_a_clear_error(app_for, standin):
    standin.queue({"prompt_too_long": True}, {"prompt_too_long": True})
    app, events = app_for()
    assert not app.turn("hi").ok
    assert "still too long after compaction" in errors(events)[0]
    assert len(standin.requests) == 2          # the call and one retry (too little to summarize) — no more


def test_connection_refused_names_the_url(tmp_path, workspace):
    from agent import App
    from support.agents import base_env
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    events = []
    app = App(workspace, environ=base_env(tmp_path, None, anthropic_base_url=f"http://127.0.0.1:{port}",
                                          anthropic_api_key="k", api_max_retries=0))
    app.set_emit(events.append)
    assert not app.turn("hi").ok
    [line] = errors(events)
    assert f"Cannot connect to http://127.0.0.1:{port}: connection refused" in line


def test_missing_key_says_what_to_put_in_dotenv(tmp_path, workspace):
    from agent import App
    from support.agents import base_env
    events = []
    app = App(workspace, environ=base_env(tmp_path, None, demo="off"))
    app.set_emit(events.append)
    assert not app.turn("hi").ok
    [line] = errors(events)
    assert f"ANTHROPIC_API_KEY=sk-ant-... in {workspace.resolve() / '.env'}" in line
    assert app.messages == []


def test_key_added_to_dotenv_later_is_picked_up_with_consent(tmp_path, workspace, standin):
    from agent import App
    from support.agents import TEST_KEY, base_env
    events = []
    app = App(workspace, environ=base_env(tmp_path, None, demo="off"))
    app.set_emit(events.append)
    app.ask = lambda question: "y"          # the person agrees to the new endpoint and key
    assert not app.turn("hi").ok
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={TEST_KEY}\nANTHROPIC_BASE_URL={standin.url}\n")
    standin.queue({"text": "hello"})
    assert app.turn("hi").text == "hello"


@pytest.mark.scripted
def test_retry_after_an_interruption_drops_the_mark(app_for, standin):
    from messages import INTERRUPTED_MARK
    app, events = app_for()
    app.messages.append({"role": "user", "content": [{"type": "text", "text": "do the thing"},
                                                     {"type": "text", "text": INTERRUPTED_MARK}]})
    standin.queue({"text": "doing it"})
    app.retry()
    from support.helpers import plain
    assert plain(standin.requests[-1]["messages"]) == [{"role": "user", "content": [{"type": "text", "text": "do the thing"}]}]


def test_a_key_fixed_in_dotenv_is_used_without_restart(tmp_path, workspace, standin):
    from agent import App
    from support.agents import TEST_KEY, base_env
    env = base_env(tmp_path, standin)
    env.pop("ANTHROPIC_API_KEY")
    (workspace / ".env").write_text("ANTHROPIC_API_KEY=wrong-key\n")
    events = []
    app = App(workspace, environ=env)
    app.set_emit(events.append)
    app.ask = lambda question: "yes"        # the person agrees to the new key
    assert not app.turn("hi").ok and "Authentication failed (401)" in errors(events)[0]
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={TEST_KEY}\n")
    standin.queue({"text": "hello with the right key"})
    assert app.turn("hi again").text == "hello with the right key"
    assert any("settings reloaded" in e.text for e in events if isinstance(e, Notice))

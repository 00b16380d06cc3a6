"""The App's wiring: one event Bus (the ledger, /last and the usage log before the UI), one "can
anything be sent?" check for every path that calls the model, and a settings change that rebuilds
the model client, not what the compactor learned."""

from __future__ import annotations

from commands import dispatch
from support.agents import base_env
from events import Bus, Notice, ResponseDone, ToolFinished
from support.helpers import make_app
from session.log import load_session


def test_the_bus_calls_every_subscriber_in_order():
    bus, seen = Bus(), []
    first = bus.subscribe(lambda e: seen.append(("first", e)))
    bus.subscribe(lambda e: seen.append(("second", e)))
    bus.emit(1)
    bus.unsubscribe(first)
    bus.emit(2)
    assert seen == [("first", 1), ("second", 1), ("second", 2)]


def test_the_ledger_last_tool_and_usage_log_see_events_before_the_ui(app_for, standin):
    app, events = app_for()
    order = []
    app.set_emit(lambda e: order.append((e, app.ledger.session.calls, app.last_tool)))
    finished = ToolFinished("t1", "bash", "ok", False, 0.1)
    app.emit(finished)
    app.emit(ResponseDone("end_turn", {"input_tokens": 10, "output_tokens": 2}))
    assert order[0][2] is finished                      # /last knew it before the UI did
    assert order[1][1] == 1                             # the ledger counted the call before the UI saw it
    assert app.messages.usages and app.messages.usages[-1]["u"]["input_tokens"] == 10
    assert events == []                                 # set_emit replaced the first UI
    app.close()


def test_usage_is_logged_by_its_subscriber_and_survives_a_resume(app_for, standin):
    standin.queue({"text": "hello back"})
    app, _ = app_for()
    assert app.turn("hello").ok
    path = app.messages.log.path
    app.close()
    loaded = load_session(path)
    assert len(loaded.usages) == 1 and loaded.usages[0][2] == app.settings.model_id


def test_a_settings_change_rebuilds_the_client_not_the_compactor(app_for, standin, workspace):
    standin.queue({"text": "one"}, {"text": "two"})
    app, events = app_for()
    assert app.turn("first").ok
    agent, compactor, llm = app.agent, app.agent.compactor, app.agent.provider
    window, continuity, typed = compactor.window, app.continuity, list(app.continuity.typed.entries)
    (workspace / ".env").write_text("MAX_TOKENS=1234\n")
    assert app.turn("second").ok
    assert standin.requests[-1]["max_tokens"] == 1234 and app.settings.max_tokens == 1234
    assert app.agent is agent and app.agent.compactor is compactor and app.agent.provider is not llm
    assert compactor.window is window and app.continuity is continuity and compactor.continuity is continuity
    assert [e.text for e in continuity.typed.entries] == [e.text for e in typed] + ["second"]
    assert agent.tool_ctx.settings is app.settings
    assert any(isinstance(e, Notice) and "settings reloaded" in e.text for e in events)
    app.close()


def test_without_a_key_nothing_is_sent_by_any_path(tmp_path, workspace):
    env = base_env(tmp_path, None, demo="off")
    app, events = make_app(workspace, env)
    assert app.agent.provider is None
    assert app.turn("hello").error == "no API key"
    app.messages.append({"role": "user", "content": "waiting"})
    dispatch(app, "/compact")
    dispatch(app, "/retry")
    errors = [e.text for e in events if isinstance(e, Notice) and e.kind == "error"]
    assert len(errors) == 3 and len(set(errors)) == 1 and errors[0] == app.missing_key_message()
    app.close()

"""/cost and the status line price each call at the model that served it: demo calls are free before and
after /login, real calls keep their price after /logout, a resumed session's calls are priced at the
model recorded with each (older logs: the header's model), and the run's total counts resumed calls."""

from __future__ import annotations

import pytest

from support.agents import TEST_KEY, base_env
from commands import dispatch
from session.costs import TokenTally
from events import CostReport, TurnStatus
from session.log import LoggedHistory, SessionLog, load_session
from ui.reports import cost_report

SONNET = (3.0, 15.0)


def by_hand(usages, price=SONNET) -> float:
    """What the API bills for these usages at `price` (USD per million input, output tokens)."""
    total = 0.0
    for u in usages:
        billed = (u.get("input_tokens", 0) + 1.25 * u.get("cache_creation_input_tokens", 0)
                  + 0.1 * u.get("cache_read_input_tokens", 0))
        total += (billed * price[0] + u.get("output_tokens", 0) * price[1]) / 1e6
    return total


def make_app(workspace, environ, **kwargs):
    from agent import App
    events: list = []
    app = App(workspace, environ=environ, **kwargs)
    app.set_emit(events.append)
    app.ask = lambda q: "y"
    return app, events


def report(app, events) -> str:
    dispatch(app, "/cost")
    return str(cost_report([e for e in events if isinstance(e, CostReport)][-1]))


def test_demo_calls_stay_free_after_login_and_real_calls_keep_their_price_after_logout(tmp_path, workspace,
                                                                                       standin):
    app, events = make_app(workspace, base_env(tmp_path, None, anthropic_base_url=standin.url))
    assert app.demo
    app.turn("hello")
    app.turn("run ls")                                   # three demo calls, free
    app.login(TEST_KEY)
    standin.queue({"text": "real one"}, {"text": "real two"})
    app.turn("first")
    app.turn("second")
    real = by_hand(standin.usages)
    assert abs([e for e in events if isinstance(e, TurnStatus)][-1].cost - real) < 1e-9
    text = report(app, events)
    assert f"{real:.4f}" in text and "s08-demo: 3 calls (free)" in text and "claude-sonnet-4-6: 2 calls" in text
    app.logout()
    assert app.demo
    app.turn("hello again")
    assert f"{real:.4f}" in report(app, events) and "s08-demo: 4 calls (free)" in report(app, events)
    app.close()


@pytest.mark.scripted
def test_a_resumed_demo_session_is_free_and_the_runs_total_holds_it(tmp_path, workspace, standin):
    app, _ = make_app(workspace, base_env(tmp_path, None))
    assert app.demo
    app.turn("hello")
    app.turn("again")
    path = app.messages.log.path
    app.close()
    app, events = make_app(workspace, base_env(tmp_path, standin), resume=load_session(path))
    assert not app.demo
    text = report(app, events)
    assert "2 model calls" in text and "0.0000" in text and "this run" not in text    # the run holds the session
    standin.queue({"text": "real"})
    app.turn("go on")
    assert f"{by_hand(standin.usages):.4f}" in report(app, events)
    dispatch(app, "/clear")
    standin.queue({"text": "fresh"})
    app.turn("new")
    assert f"this run, all its sessions: 4 model calls · ${by_hand(standin.usages):.4f}" in report(app, events)
    app.close()


@pytest.mark.scripted
def test_an_older_log_without_models_is_priced_at_its_headers_model(tmp_path, workspace, standin):
    usage = {"input_tokens": 1000, "output_tokens": 100}
    paths = {}
    for model in ("s08-demo", "claude-sonnet-4-6"):
        history = LoggedHistory([], SessionLog(workspace, header={"model": model, "origin": "interactive"}))
        history.extend([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
            {"type": "text", "text": "hello"}]}])
        history.note_usage(usage, "answer")              # as s08 wrote it before usages named their model
        history.log.close()
        paths[model] = history.log.path
    for model, expected in (("s08-demo", 0.0), ("claude-sonnet-4-6", by_hand([usage]))):
        app, events = make_app(workspace, base_env(tmp_path, standin, model_id="claude-opus-4-5"),
                               resume=load_session(paths[model]))
        [total] = [line for line in report(app, events).splitlines() if line.startswith("total")]
        assert total.endswith(f"{expected:.4f}")
        app.close()


@pytest.mark.scripted
def test_the_usage_record_names_its_model_and_model_price_applies_to_the_persons_model(tmp_path, workspace,
                                                                                      standin):
    app, events = make_app(workspace, base_env(tmp_path, standin, model_price="1,2"))
    standin.queue({"text": "priced"})
    app.turn("hello")
    path = app.messages.log.path
    app.close()
    assert [m for _u, _p, m in load_session(path).usages] == ["claude-sonnet-4-6"]
    assert f"{by_hand(standin.usages, (1.0, 2.0)):.4f}" in report(*make_app(
        workspace, base_env(tmp_path, standin, model_price="1,2"), resume=load_session(path)))


def test_a_tally_prices_each_call_at_its_own_price():
    t = TokenTally()
    t.add({"input_tokens": 1_000_000}, price=(3.0, 15.0), model="a")
    t.add({"input_tokens": 1_000_000}, price=(0.0, 0.0), model="b")
    assert t.cost == 3.0 and t.dollars((1.0, 1.0)) == 2.0 and t.models == {"a": [1, (3.0, 15.0)], "b": [1, (0.0, 0.0)]}
    t.add({"output_tokens": 10}, price=None, model="c")
    assert t.cost is None and t.unpriced == 1

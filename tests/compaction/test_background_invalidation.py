"""A prepared summary is dropped — never applied — when what it summarized, or how, is no longer so:
/compact, /retry, /clear, a settings change of the summary's prompt, a different system prompt.
And BACKGROUND_COMPACT=off prepares nothing (the blocking design, as before).

Each test runs the real App against the stand-in: one turn reads three files, which passes PREPARE_AT,
so a summary is prepared at the turn's end; then the change; then a turn that reaches the limit. The
session log must say the summary was dropped, and nothing applied may be the one prepared before.
"""

from __future__ import annotations

import json

import pytest

from events import Compaction
from support.helpers import is_summary_request
from session.log import list_sessions
from standin import Brain


def make_project(workspace) -> None:
    for i in range(8):
        body = "\n".join(f"def f_{i}_{n}(x):\n    return x + {n * 7919 % 1000}" for n in range(60))
        (workspace / f"mod_{i}.py").write_text(body + "\n")


def prepared_app(app_for, standin, workspace, **settings):
    make_project(workspace)
    standin.brain = Brain()
    settings.setdefault("background_compact", "on")
    app, events = app_for(context_limit=6000, prepare_at=0.3, **settings)
    app.turn("read mod_0.py and mod_1.py and mod_2.py")
    prep = app.agent.compactor.background.current
    if settings.get("background_compact") != "off":
        assert prep is not None and prep.done.wait(120) and prep.text
    return app, events


def log_records(workspace) -> list[dict]:
    [path] = list_sessions(workspace)[:1]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def applied(events) -> list[str]:
    return [e.message for e in events if isinstance(e, Compaction) and "applied" in e.message]


def test_a_manual_compact_drops_the_prepared_summary(app_for, standin, workspace):
    app, events = prepared_app(app_for, standin, workspace)
    app.compact()
    assert app.agent.compactor.background.current is None
    assert any(r["t"] == "dropped" and "manual compact" in r["why"] for r in log_records(workspace))
    assert not applied(events)


def test_a_retry_drops_it(app_for, standin, workspace):
    app, events = prepared_app(app_for, standin, workspace)
    app.messages.append({"role": "user", "content": "run echo again"})
    app.retry()
    assert any(r["t"] == "dropped" and "/retry" in r["why"] for r in log_records(workspace))
    assert not applied(events)


def test_clear_starts_without_it(app_for, standin, workspace):
    app, events = prepared_app(app_for, standin, workspace)
    old = app.agent.compactor.background
    app.clear()
    assert app.agent.compactor.background is not old and app.agent.compactor.background.current is None
    app.turn("read mod_3.py and mod_4.py and mod_5.py and mod_6.py")
    assert not applied(events)


@pytest.mark.parametrize("change", ["summary size", "system prompt"])
def test_a_change_of_the_summary_prompt_drops_it(app_for, standin, workspace, change):
    app, events = prepared_app(app_for, standin, workspace)
    if change == "summary size":
        (workspace / ".env").write_text("SUMMARY_MAX_TOKENS=1500\n")     # read again before the next turn
    else:
        (workspace / "AGENTS.md").write_text("Always answer in haiku.\n")  # the system prompt changes
    app.turn("read mod_3.py and mod_4.py and mod_5.py and mod_6.py")
    records = log_records(workspace)
    assert any(r["t"] == "dropped" and "prompt changed" in r["why"] for r in records)
    old_key = next(r["key"] for r in records if r["t"] == "prepare")
    last = None
    for r in records:                    # what was applied, if anything, was prepared with the new prompt
        last = r if r["t"] == "prepared" else last
        assert r["t"] != "applied" or last["key"] != old_key


def test_off_prepares_nothing(app_for, standin, workspace):
    app, events = prepared_app(app_for, standin, workspace, background_compact="off")
    assert app.agent.compactor.background.current is None
    app.turn("read mod_3.py and mod_4.py and mod_5.py and mod_6.py")
    assert not any(r["t"] in ("prepare", "prepared", "applied") for r in log_records(workspace))
    compacted = [e.message for e in events if isinstance(e, Compaction) and e.layer == "compacted"]
    assert compacted and compacted[0].startswith("[compacted]") and not applied(events)
    assert sum(is_summary_request(r) for r in standin.requests) == 1

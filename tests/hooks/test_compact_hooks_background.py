"""PreCompact and PostCompact fire for a summary prepared in the background too — when it is applied,
not when it is prepared: a block then means the fallback (said on screen), and PostCompact gets the
summary that went in."""

from __future__ import annotations

import json
import sys

from events import Compaction, Notice
from support.helpers import is_summary_request
from standin import Brain


def prepared_app(app_for, standin, workspace):
    """A turn that reads three files passes PREPARE_AT: a summary is prepared in the background."""
    for i in range(8):
        body = "\n".join(f"def f_{i}_{n}(x):\n    return x + {n * 7919 % 1000}" for n in range(60))
        (workspace / f"mod_{i}.py").write_text(body + "\n")
    standin.brain = Brain()
    app, events = app_for(context_limit=6000, prepare_at=0.3, background_compact="on")
    app.turn("read mod_0.py and mod_1.py and mod_2.py")
    prep = app.agent.compactor.background.current
    assert prep is not None and prep.done.wait(120) and prep.text
    return app, events


def applied(events) -> list[str]:
    return [e.message for e in events if isinstance(e, Compaction) and "applied" in e.message]


def hooks_file(tmp_path, hooks: dict) -> None:
    path = tmp_path / "home" / ".config" / "s08" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def command(event: str, text: str) -> dict:
    return {event: [{"hooks": [{"type": "command", "command": text}]}]}


def recorder(tmp_path) -> str:
    log = tmp_path / "compact.log"
    return f"{sys.executable} -c \"import sys; open('{log}', 'a').write(sys.stdin.read().strip() + chr(10))\""


def records(tmp_path) -> list[dict]:
    log = tmp_path / "compact.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_both_fire_when_the_prepared_summary_is_applied(tmp_path, app_for, standin, workspace):
    rec = recorder(tmp_path)
    hooks_file(tmp_path, {**command("PreCompact", rec), **command("PostCompact", rec)})
    app, events = prepared_app(app_for, standin, workspace)
    prep = app.agent.compactor.background.current
    assert records(tmp_path) == []                         # prepared: no hook yet
    app.turn("read mod_3.py and mod_4.py and mod_5.py and mod_6.py")
    assert applied(events)
    got = records(tmp_path)
    assert [(r["hook_event_name"], r["trigger"]) for r in got][:2] == [("PreCompact", "auto"), ("PostCompact", "auto")]
    assert got[1]["summary"] == prep.text
    app.close()


def test_a_block_when_it_is_applied_means_the_fallback_said_on_screen(tmp_path, app_for, standin, workspace):
    hooks_file(tmp_path, command("PreCompact", "cat >/dev/null; echo 'not now' >&2; exit 2"))
    app, events = prepared_app(app_for, standin, workspace)
    summaries = sum(is_summary_request(r) for r in standin.requests)
    app.turn("read mod_3.py and mod_4.py and mod_5.py and mod_6.py")
    assert not applied(events)
    assert any(isinstance(e, Notice) and "PreCompact hook blocked" in e.text and "not now" in e.text for e in events)
    assert any(isinstance(e, Compaction) and e.layer == "fallback" for e in events)
    assert sum(is_summary_request(r) for r in standin.requests) == summaries      # no blocking summary either
    app.close()

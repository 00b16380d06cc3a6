"""A single input larger than the context can hold is stored on disk and sent as a preview with its
path, so it never jams the turns after it (against a stand-in with a small window, strict as ever)."""

from __future__ import annotations

import stat


from support.agents import SMALL_WINDOW, base_env
from support.helpers import plain
from events import Notice

WINDOW = SMALL_WINDOW


def make_app(tmp_path, workspace, server):
    from agent import App
    env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "k",
           "CONTEXT_WINDOW": str(WINDOW), "CONTEXT_LIMIT": "10000"}
    events: list = []
    app = App(workspace, environ=env)
    app.set_emit(events.append)
    return app, events


def test_a_paste_larger_than_the_window_is_saved_and_sent_as_a_preview(tmp_path, workspace, small_window):
    paste = "BEGIN " + "word " * 30_000 + " END"
    small_window.queue({"text": "I will read it in pieces."}, {"text": "still here"})
    app, events = make_app(tmp_path, workspace, small_window)
    assert app.turn(paste).ok
    sent = small_window.requests[0]["messages"][-1]["content"]
    sent = sent if isinstance(sent, str) else sent[-1]["text"]
    assert "<large-input>" in sent and "BEGIN" in sent and "END" in sent and len(sent) < 4_000
    saved = workspace / sent.split("saved in full at: ")[1].split()[0]
    assert saved.read_text() == paste and stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert any("too large for the context" in e.text for e in events if isinstance(e, Notice))
    assert app.turn("and now a short question").text == "still here"


def test_a_large_paste_on_a_disk_that_refuses_it_still_sends_head_and_tail(tmp_path, workspace, small_window):
    (workspace / ".task_outputs").write_text("in the way")
    small_window.queue({"text": "ok"})
    app, events = make_app(tmp_path, workspace, small_window)
    assert app.turn("HEAD " + "x " * 40_000 + " TAIL").ok
    sent = small_window.requests[0]["messages"][-1]["content"]
    sent = sent if isinstance(sent, str) else sent[-1]["text"]
    assert "could not be saved" in sent and "HEAD" in sent and "TAIL" in sent


def test_inputs_that_fit_are_sent_as_they_are(tmp_path, workspace, small_window):
    small_window.queue({"text": "ok"})
    app, _ = make_app(tmp_path, workspace, small_window)
    text = "y " * 2_000
    assert app.turn(text).ok
    assert plain(small_window.requests[0]["messages"])[-1]["content"] == [{"type": "text", "text": text}]

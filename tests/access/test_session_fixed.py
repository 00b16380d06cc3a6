"""The endpoint, the key and the model are fixed for the session: a settings file changed mid-session
(by the person, a command, or the model — a prompt injection only needs `edit_file .env`) is not used
for them until the person agrees. The REPL asks; -p and piped input ignore the change and say so."""

from __future__ import annotations


from support.agents import base_env
from events import Notice
from support.helpers import settings_file


def make_app(tmp_path, workspace, ask=None):
    from agent import App
    events: list = []
    app = App(workspace, environ=base_env(tmp_path, None))
    app.set_emit(events.append)
    app.ask = ask
    return app, events


def notices(events, kind=None):
    return [e.text for e in events if isinstance(e, Notice) and (kind is None or e.kind == kind)]


def test_without_anyone_to_ask_the_change_is_ignored_and_said_once(tmp_path, workspace, standin, other):
    settings_file(workspace, standin.url, agreed=True)
    app, events = make_app(tmp_path, workspace)
    standin.queue({"text": "one"}, {"text": "two"}, {"text": "three"})
    assert app.turn("first").text == "one"
    settings_file(workspace, other.url, key="sk-ant-attacker-1234", model_id="evil-model", max_tokens=1234)
    assert app.turn("second").text == "two"
    assert app.turn("third").text == "three"
    assert not other.requests
    assert [r["model"] for r in standin.requests] == ["claude-sonnet-4-6"] * 3     # and with TEST_KEY (401 else)
    assert standin.requests[-1]["max_tokens"] == 1234                            # ordinary settings do reload
    [said] = [t for t in notices(events, "warning") if "ignored a settings change" in t]
    assert f"ANTHROPIC_BASE_URL: {standin.url} → {other.url}" in said and "evil-model" in said
    assert "ANTHROPIC_API_KEY changed to a different value" in said and "attacker" not in said
    assert app.settings.base_url == standin.url


def test_the_person_is_asked_once_per_change_and_no_keeps_the_endpoint(tmp_path, workspace, standin, other):
    settings_file(workspace, standin.url, agreed=True)
    questions = []
    app, events = make_app(tmp_path, workspace, ask=lambda q: questions.append(q) or "n")
    standin.queue({"text": "one"}, {"text": "two"}, {"text": "three"})
    app.turn("first")
    settings_file(workspace, other.url)
    assert app.turn("second").text == "two" and app.turn("third").text == "three"
    [question] = questions
    assert other.url in question.text and "ANTHROPIC_BASE_URL" in question.text and not question.secret
    assert not other.requests and len(standin.requests) == 3
    assert any("kept this session's endpoint" in t for t in notices(events))


def test_yes_switches_to_the_new_endpoint_key_and_model(tmp_path, workspace, standin, other):
    settings_file(workspace, standin.url, agreed=True)
    app, _events = make_app(tmp_path, workspace, ask=lambda q: "y")
    standin.queue({"text": "from A"})
    other.queue({"text": "from B"})
    assert app.turn("first").text == "from A"
    settings_file(workspace, other.url, key="another-key-123", model_id="model-b")
    assert app.turn("second").text == "from B"
    assert other.requests[-1]["model"] == "model-b" and len(standin.requests) == 1


def test_a_declined_change_is_asked_again_when_it_changes_again(tmp_path, workspace, standin, other):
    settings_file(workspace, standin.url, agreed=True)
    answers = iter(["n", "y"])
    asked = []
    app, _events = make_app(tmp_path, workspace, ask=lambda q: asked.append(q.text) or next(answers))
    standin.queue({"text": "a"}, {"text": "b"})
    other.queue({"text": "c"})
    app.turn("1")
    settings_file(workspace, standin.url, model_id="model-x")
    assert app.turn("2").text == "b" and standin.requests[-1]["model"] == "claude-sonnet-4-6"
    settings_file(workspace, other.url, model_id="model-x")
    assert app.turn("3").text == "c" and len(asked) == 2

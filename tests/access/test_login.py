"""/login and /logout: a key checked with one request, kept in the user-level file (0600, folder 0700)."""

from __future__ import annotations

import stat

import pytest

from config import load_settings, user_settings_file
from support.agents import TEST_KEY, base_env
from access.credentials import key_problem, remove_keys, store_key, stored_key
from events import Notice


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def texts(events, kind=None):
    return [e.text for e in events if isinstance(e, Notice) and (kind is None or e.kind == kind)]


@pytest.fixture
def login_app(tmp_path, workspace, standin):
    """No key anywhere (so the demo answers), but the endpoint a key would be used with is the stand-in."""
    from agent import App
    env = base_env(tmp_path, None, anthropic_base_url=standin.url)
    events: list = []
    app = App(workspace, environ=env)
    app.set_emit(events.append)
    yield app, events, user_settings_file(env)
    app.close()


def test_store_key_is_private_atomic_and_keeps_other_settings(tmp_path):
    path = tmp_path / "cfg" / "s08" / ".env"
    store_key(path, "sk-first-key-0001")
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    path.write_text(path.read_text() + "MODEL_ID=my-model\n")
    store_key(path, "sk-$HOME-${USER}-2")                 # stored literally, not expanded
    assert stored_key(path) == "sk-$HOME-${USER}-2" and mode(path) == 0o600
    assert path.read_text().count("ANTHROPIC_API_KEY=") == 1 and "MODEL_ID=my-model" in path.read_text()
    assert not [p for p in path.parent.iterdir() if p.name not in (".env", "user-settings-digest")]   # no temp file
    assert remove_keys(path) and stored_key(path) == "" and "MODEL_ID=my-model" in path.read_text()
    assert not remove_keys(path)


@pytest.mark.parametrize("bad", ["", "short", "sk ant with spaces", "sk-ant-'quoted'", "sk-ant-\x1b[2J-key",
                                 "sk-ant-ключ-1234", "x" * 2000])
def test_texts_that_cannot_be_keys_are_refused_without_echoing_them(bad, tmp_path):
    problem = key_problem(bad)
    assert problem and (not bad or bad not in problem)
    with pytest.raises(ValueError):
        store_key(tmp_path / "s08" / ".env", bad)


def test_login_checks_stores_and_switches_from_the_demo(login_app, standin):
    app, events, path = login_app
    assert app.demo
    app.ask = lambda q: "wrong-key-0000"
    app.login()
    assert "refused the key (401); nothing stored" in texts(events, "error")[0] and not path.exists()
    assert app.demo
    asked = []
    app.ask = lambda q: asked.append(q) or TEST_KEY
    app.login()
    assert asked[0].secret and stored_key(path) == TEST_KEY and mode(path) == 0o600
    assert app.access.sources["ANTHROPIC_API_KEY"] == str(path) and app.access.sources["ANTHROPIC_BASE_URL"] == \
        "environment" and app.access.sources["MODEL_ID"] is None
    assert not app.demo and app.settings.base_url == standin.url
    standin.queue({"text": "a real answer"})
    assert app.turn("hello").text == "a real answer"
    assert TEST_KEY not in " ".join(texts(events))


def test_login_needs_someone_to_ask(login_app):
    app, events, path = login_app
    from commands import UNUSABLE, dispatch
    assert dispatch(app, "/login") == UNUSABLE                # -p fails with 2, piped input with 1
    assert "run it in the interactive REPL" in texts(events, "error")[0] and not path.exists()


def test_an_unreachable_endpoint_stores_the_key_only_if_the_person_says_so(tmp_path, workspace):
    from agent import App
    env = base_env(tmp_path, None, anthropic_base_url="http://127.0.0.1:9")      # nothing listens there
    app = App(workspace, environ=env)
    events: list = []
    app.set_emit(events.append)
    answers = iter(["sk-unchecked-key-1", "n", "sk-unchecked-key-1", "y"])
    app.ask = lambda q: next(answers)
    app.login()
    assert not user_settings_file(env).exists() and app.demo
    app.login()
    assert stored_key(user_settings_file(env)) == "sk-unchecked-key-1" and not app.demo
    app.close()


def test_logout_removes_the_key_and_the_demo_answers_again(login_app):
    app, events, path = login_app
    app.login(TEST_KEY)
    assert not app.demo
    from commands import dispatch
    dispatch(app, "/logout")
    assert stored_key(path) == "" and app.demo and path.exists()
    assert app.turn("hello").text.startswith("[demo] You said: hello")


def test_a_key_in_the_workspace_env_shadows_the_user_file_and_login_says_so(login_app, workspace, standin):
    app, events, path = login_app
    (workspace / ".env").write_text("ANTHROPIC_API_KEY=workspace-key-1\n")
    app.ask = lambda q: "y"
    app.turn("hi")                       # the person agrees to the workspace key (the stand-in refuses it)
    app.login(TEST_KEY)
    assert any(f"ANTHROPIC_API_KEY is also set in {workspace / '.env'}" in t for t in texts(events, "warning"))
    standin.queue({"text": "with the new key"})
    assert app.turn("again").text == "with the new key"
    assert load_settings(workspace, environ={"HOME": str(path.parents[2])}).settings.anthropic_api_key \
        == "workspace-key-1"

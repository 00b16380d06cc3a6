"""The trust rule at the start of a session: an endpoint named by the workspace's .env is used only with
the person's consent, whichever file the key comes from (the environment, the user-level file, /login,
or that .env itself: whoever names the endpoint drives the agent). The default API, the environment's
and the user file's URLs and a file named with --env-file need none. Yes is remembered per (folder,
URL); no falls back to the endpoint of any other folder; with nobody to ask (-p, piped input) nothing
is sent."""

from __future__ import annotations

import stat

import pytest

from access.model_access import Access
from config import DEFAULT_BASE_URL, user_settings_file
from support.agents import TEST_KEY, base_env
from access.credentials import consent_file, endpoint_agreed, remember_endpoint, stored_key
from events import Notice

EVIL = "http://127.0.0.1:9/evil"


def write(path, **settings):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k.upper()}={v}\n" for k, v in settings.items()))


def home_env(tmp_path, **settings) -> dict:
    return {"HOME": str(tmp_path / "home"), **{k.upper(): v for k, v in settings.items()}}


def texts(events, kind=None):
    return [e.text for e in events if isinstance(e, Notice) and (kind is None or e.kind == kind)]


# ---- the rule, for each combination of sources ------------------------------------------
WS, ENV, USER = ".env", "environment", "user file"
RULE = [  # (where the base URL is set, where each credential is set, the URL, consent needed)
    (WS, {"anthropic_api_key": ENV}, EVIL, True),
    (WS, {"anthropic_api_key": USER}, EVIL, True),
    (WS, {"anthropic_auth_token": ENV}, EVIL, True),
    (WS, {"anthropic_auth_token": USER}, EVIL, True),
    (WS, {"anthropic_api_key": WS}, EVIL, True),              # its own key: its model still drives the agent
    (WS, {"anthropic_auth_token": WS}, EVIL, True),
    (WS, {"anthropic_auth_token": WS, "anthropic_api_key": ENV}, EVIL, True),      # the env's key would go too
    (WS, {"anthropic_api_key": WS, "anthropic_auth_token": USER}, EVIL, True),
    (WS, {"anthropic_api_key": ENV}, "https://api.anthropic.com/", False),        # the default API
    (WS, {}, EVIL, False),                                                        # no key to give away
    (ENV, {"anthropic_api_key": ENV}, EVIL, False),
    (ENV, {"anthropic_api_key": WS}, EVIL, False),
    (ENV, {"anthropic_api_key": USER}, EVIL, False),
    (USER, {"anthropic_api_key": USER}, EVIL, False),
    (USER, {"anthropic_api_key": ENV}, EVIL, False),
    (USER, {"anthropic_auth_token": WS}, EVIL, False),
    (None, {"anthropic_api_key": ENV}, EVIL, False),                              # no URL anywhere: default
]


@pytest.mark.parametrize("url_in, keys, url, expected", RULE)
def test_the_rule_for_each_combination_of_sources(tmp_path, workspace, url_in, keys, url, expected):
    layers = {WS: {}, ENV: {}, USER: {}}
    if url_in:
        layers[url_in]["anthropic_base_url"] = url
    for name, where in keys.items():
        layers[where][name] = f"{where.replace(' ', '-').replace('.', '')}-{name}-1234"
    environ = home_env(tmp_path, **layers[ENV])
    write(workspace / ".env", **layers[WS])
    write(user_settings_file(environ), **layers[USER])
    access = Access(workspace, environ=environ)
    assert access.needs_consent is expected
    assert access.demo_active == (not keys)                  # the demo answers only when no key is configured
    if keys:                                                # unagreed: no key in the settings, so no client
        assert access.settings().has_credentials is not expected


def test_a_file_named_with_env_file_is_the_persons_own(tmp_path, workspace):
    write(workspace / ".env", anthropic_base_url=EVIL)
    environ = home_env(tmp_path, anthropic_api_key="env-key-123456")
    assert Access(workspace, environ=environ).needs_consent
    assert not Access(workspace, env_file=workspace / ".env", environ=environ).needs_consent


def test_consent_is_per_folder_and_url_and_a_changed_url_asks_again(tmp_path, workspace):
    environ = home_env(tmp_path, anthropic_api_key="env-key-123456")
    user = user_settings_file(environ)
    write(workspace / ".env", anthropic_base_url=EVIL)
    path = remember_endpoint(user, workspace, EVIL)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not Access(workspace, environ=environ).needs_consent
    elsewhere = tmp_path / "another"
    write(elsewhere / ".env", anthropic_base_url=EVIL)
    assert Access(elsewhere, environ=environ).needs_consent               # same URL, other folder
    write(workspace / ".env", anthropic_base_url=EVIL + "2")
    assert Access(workspace, environ=environ).needs_consent               # same folder, other URL
    remember_endpoint(user, workspace, EVIL + "2")                       # a folder keeps its newest URL only
    assert endpoint_agreed(user, workspace, EVIL + "2") and not endpoint_agreed(user, workspace, EVIL)
    assert path.read_text().count('"folder"') == 1


def test_a_consent_file_others_could_write_is_not_believed(tmp_path, workspace):
    environ = home_env(tmp_path, anthropic_api_key="env-key-123456")
    write(workspace / ".env", anthropic_base_url=EVIL)
    path = remember_endpoint(user_settings_file(environ), workspace, EVIL)
    path.chmod(0o666)
    assert Access(workspace, environ=environ).needs_consent


# ---- the session: ask, remember, fall back, or send nothing --------------------------------
def make_app(workspace, environ, ask=None):
    from agent import App
    events: list = []
    app = App(workspace, environ=environ)
    app.set_emit(events.append)
    app.ask = ask
    return app, events


def test_nobody_to_ask_sends_nothing_and_says_why_once(tmp_path, workspace, other):
    write(workspace / ".env", anthropic_base_url=other.url, model_id="evil-model")
    app, events = make_app(workspace, base_env(tmp_path, None, anthropic_api_key=TEST_KEY))
    assert app.agent.provider is None and not app.demo
    first, second = app.turn("hello"), app.turn("again")
    assert not first.ok and not second.ok and not other.requests
    said = texts(events, "error")
    assert len(said) == 2 and "sending nothing" in said[0] and other.url in said[0]
    assert "ANTHROPIC_API_KEY from the environment" in said[0] and "--env-file" in said[0]
    assert "answer yes" in said[0] and TEST_KEY not in said[0] and "see above" in said[1]
    assert not consent_file(app.access.user_file).exists()
    app.close()


def test_yes_uses_the_endpoint_and_remembers_it(tmp_path, workspace, standin):
    write(workspace / ".env", anthropic_base_url=standin.url)
    environ = base_env(tmp_path, None, anthropic_api_key=TEST_KEY)
    questions = []
    app, events = make_app(workspace, environ, ask=lambda q: questions.append(q) or "y")
    standin.queue({"text": "from the agreed endpoint"})
    assert app.turn("hello").text == "from the agreed endpoint"
    [question] = questions
    assert str(workspace) in question.text and standin.url in question.text and question.prompt == "[y/N] "
    assert "ANTHROPIC_API_KEY from the environment" in question.text and TEST_KEY not in question.text
    assert endpoint_agreed(user_settings_file(environ), workspace, standin.url)
    app.close()
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q) or "n")
    assert not app.access.needs_consent and len(questions) == 1            # the next start does not ask
    app.close()


def test_no_falls_back_to_the_endpoint_of_any_other_folder(tmp_path, workspace, standin, other):
    """The user-level file names the person's own endpoint and key; the .env points elsewhere."""
    environ = base_env(tmp_path, None)
    write(user_settings_file(environ), anthropic_base_url=standin.url, anthropic_api_key=TEST_KEY)
    write(workspace / ".env", anthropic_base_url=other.url, model_id="evil-model", anthropic_auth_token="ws-token-1")
    app, events = make_app(workspace, environ, ask=lambda q: "n")
    standin.queue({"text": "from my own endpoint"})
    assert app.turn("hello").text == "from my own endpoint"
    assert not other.requests and standin.requests[0]["model"] == "claude-sonnet-4-6"
    assert any(f"not using it: this session uses {standin.url}" in t for t in texts(events, "warning"))
    assert not consent_file(user_settings_file(environ)).exists()
    write(workspace / ".env", anthropic_base_url=other.url + "/v2")       # still ignored for this session
    standin.queue({"text": "still mine"})
    assert app.turn("again").text == "still mine" and not other.requests
    app.close()


def test_no_without_an_endpoint_of_ones_own_means_the_default_api(tmp_path, workspace):
    write(workspace / ".env", anthropic_base_url=EVIL, model_id="evil-model")
    app, events = make_app(workspace, base_env(tmp_path, None, anthropic_api_key=TEST_KEY), ask=lambda q: None)
    assert app.settle_endpoint()
    assert app.settings.base_url == DEFAULT_BASE_URL and app.settings.model_id == "claude-sonnet-4-6"
    assert app.settings.anthropic_api_key == TEST_KEY and app.agent.provider is not None
    assert any(DEFAULT_BASE_URL in t for t in texts(events, "warning"))
    app.close()


def test_the_demo_answers_when_no_key_is_configured_and_no_question_is_asked(tmp_path, workspace):
    write(workspace / ".env", anthropic_base_url=EVIL)
    app, _ = make_app(workspace, base_env(tmp_path, None), ask=lambda q: pytest.fail("asked"))
    assert app.demo and app.turn("hello").text.startswith("[demo] ")
    app.close()


@pytest.fixture
def checked(monkeypatch):
    """Where /login's key check went (it still goes there for real)."""
    import llm
    urls = []
    real = llm.check_key
    monkeypatch.setattr(llm, "check_key", lambda key, url, *args: urls.append(url) or real(key, url, *args))
    return urls


def test_login_checks_the_key_only_with_an_agreed_endpoint(tmp_path, workspace, standin, other, checked):
    environ = base_env(tmp_path, None)
    user = user_settings_file(environ)
    write(user, anthropic_base_url=standin.url)                # the person's own endpoint, no key yet
    write(workspace / ".env", anthropic_base_url=other.url)
    app, events = make_app(workspace, environ)
    assert app.demo
    app.login(TEST_KEY)                                         # nobody to ask: nothing checked or stored
    assert not checked and stored_key(user) == "" and app.demo
    questions = []
    app.ask = lambda q: questions.append(q) or "n"
    app.login(TEST_KEY)
    assert checked == [standin.url] and stored_key(user) == TEST_KEY and not app.demo
    assert "/login" in questions[0].text and other.url in questions[0].text
    standin.queue({"text": "mine"})
    assert app.turn("hello").text == "mine" and not other.requests
    app.close()


def test_login_after_yes_uses_the_folders_endpoint(tmp_path, workspace, other, checked):
    environ = base_env(tmp_path, None)
    write(workspace / ".env", anthropic_base_url=other.url)
    app, _ = make_app(workspace, environ, ask=lambda q: "y")
    app.login(TEST_KEY)
    assert checked == [other.url] and endpoint_agreed(user_settings_file(environ), workspace, other.url)
    assert app.turn("hello").ok and len(other.requests) == 1
    app.close()


def test_a_key_agreed_to_mid_session_still_needs_the_endpoint_agreed(tmp_path, workspace, standin, other):
    environ = base_env(tmp_path, None)
    user = user_settings_file(environ)
    write(user, anthropic_base_url=standin.url)
    write(workspace / ".env", anthropic_base_url=other.url)
    questions = []
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or ("y" if len(questions) == 1
                                                                                     else "n"))
    assert app.demo
    write(user, anthropic_base_url=standin.url, anthropic_api_key=TEST_KEY)     # the person adds a key
    standin.queue({"text": "mine"})
    assert app.turn("hello").text == "mine" and not other.requests
    assert "A settings file changed" in questions[0] and "not agreed to" in questions[1]
    app.close()


# ---- -p and piped input ----------------------------------------------------------------

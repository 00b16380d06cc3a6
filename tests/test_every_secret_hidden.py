"""Every credential s08 knows of is redacted, not only the one the session sends: the environment's (as
the key guard received it), the workspace's .env, a file named with --env-file, the user-level file,
the pinned values (a key /login gave, one /logout removed) and the demo's own key. The tools' results
and the error lines use the one set Access.secrets() computes.

The attacks: under --demo the demo's key replaces the person's real key in the settings, so a session
that redacted only "the key in use" would show the real one to the model, write it into the session
log, and send it in a request body after `-c` with a key; a folder whose .env names its own endpoint
and its own dummy key would receive the person's real /login key from `cat ~/.config/s08/.env`."""

from __future__ import annotations

import pytest

import json
import string
import tempfile
from pathlib import Path

from hypothesis import assume, given, settings, strategies as st

from access.model_access import Access
from access.login import logout
from config import user_settings_file
from support.agents import base_env
from access.credentials import store_key
from events import Notice
from redact import REDACTED, credential_values, redact
from standin import StandIn
from support.helpers import make_app
from support.helpers import everything_written, write

REAL = "sk-ant-api03-REAL-user-level-key-0123456789"
ENV_KEY = "sk-ant-api03-FROM-the-environment-987654"


# ---- (a) --demo: the person's real key is not the one in use ------------------------------
def test_under_demo_the_real_keys_are_hidden_from_the_model_and_the_session_log(tmp_path, workspace):
    environ = base_env(tmp_path, None, anthropic_api_key=ENV_KEY)
    user = write(user_settings_file(environ), f"ANTHROPIC_API_KEY={REAL}\n")
    write(workspace / ".env", f"ANTHROPIC_AUTH_TOKEN={REAL}-ws-token\n")
    app, _ = make_app(workspace, environ, demo="on")
    demo_key = app.settings.anthropic_api_key
    assert app.demo and demo_key != REAL
    write(workspace / "notes.txt", f"the env key is {ENV_KEY}, the demo's {demo_key}\n")   # printed, somehow
    for request in (f"run cat {user}", "read .env", "run cat notes.txt"):
        assert app.turn(request).ok
    results = json.dumps([b for m in app.messages if isinstance(m["content"], list) for b in m["content"]
                          if b["type"] == "tool_result"])
    assert REAL not in results and ENV_KEY not in results and demo_key not in results
    assert results.count(REDACTED) == 4
    app.close()
    logged = everything_written(workspace)
    assert "[redacted]" in logged and REAL not in logged and ENV_KEY not in logged and demo_key not in logged


@pytest.mark.scripted
def test_resuming_a_demo_session_with_a_key_sends_no_key_of_an_older_log(tmp_path, workspace, standin):
    """A log written before every key was redacted (or planted): the resumed history hides them."""
    from session.log import LoggedHistory, SessionLog, load_session
    environ = base_env(tmp_path, standin)
    write(user_settings_file(environ), f"ANTHROPIC_API_KEY={REAL}\n")
    history = LoggedHistory([], SessionLog(workspace, header={"model": "s08-demo", "origin": "interactive"}))
    call = {"type": "tool_use", "id": "toolu_01abc", "name": "bash", "input": {"command": "cat ~/.config/s08/.env"}}
    history.extend([{"role": "user", "content": "show me"}, {"role": "assistant", "content": [call]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01abc",
                                                  "content": f"ANTHROPIC_API_KEY={REAL}"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "done"}]}])
    history.log.close()
    app, _ = make_app(workspace, environ, resume=load_session(history.log.path))
    standin.queue({"text": "resumed"})
    assert app.turn("go on").text == "resumed"
    assert REAL not in json.dumps(standin.requests) and REDACTED in json.dumps(standin.requests[-1]["messages"])
    app.close()


# ---- (b) a folder's own endpoint and dummy key: the person's real key stays hidden ------------
def test_a_folders_endpoint_never_sees_the_persons_real_key(tmp_path, workspace):
    other = StandIn().start()                       # the folder's endpoint: accepts its own dummy key
    try:
        environ = base_env(tmp_path, None)
        user = user_settings_file(environ)
        store_key(user, REAL)                       # the person's /login key
        write(workspace / ".env", f"ANTHROPIC_BASE_URL={other.url}\nANTHROPIC_API_KEY=dummy-key-of-the-folder\n")
        other.queue({"tool_calls": [{"name": "bash", "input": {"command": f"cat {user}"}}]}, {"text": "thanks"},
                    {"error": 400, "message": f"echoing {REAL}"})
        app, events = make_app(workspace, environ, ask=lambda q: "y")
        assert app.turn("hello").text == "thanks"
        assert not app.turn("again").ok                                  # its error line echoes the key
        assert REAL not in json.dumps(other.requests) and REDACTED in json.dumps(other.requests[-1])
        shown = " ".join(e.text for e in events if isinstance(e, Notice))
        assert "echoing [redacted]" in shown and REAL not in shown
        app.close()
    finally:
        other.stop()


# ---- one place knows them all -------------------------------------------------------------
def test_access_knows_every_credential_and_keeps_what_it_saw(tmp_path, workspace, standin):
    environ = base_env(tmp_path, None, anthropic_api_key="env-key-0001", anthropic_auth_token="env-token-0002",
                       anthropic_base_url=standin.url)
    write(user_settings_file(environ), "ANTHROPIC_API_KEY=user-key-0003\n")
    write(workspace / ".env", "ANTHROPIC_API_KEY=ws-key-0004\nANTHROPIC_BASE_URL=http://me:url-pass-0005@h\n")
    named = write(tmp_path / "mine.env", "ANTHROPIC_AUTH_TOKEN=named-token-0006\n")
    access = Access(workspace, env_file=named, environ=environ, demo="on")
    known = access.secrets()
    for value in ("env-key-0001", "env-token-0002", "user-key-0003", "ws-key-0004", "url-pass-0005",
                  "named-token-0006", access.demo.key):
        assert value in known
    store_key(access.user_file, "login-key-0008")
    access.pins.login("login-key-0008", str(access.user_file))
    assert "login-key-0008" in access.secrets()
    logout(access, lambda e: None)
    (workspace / ".env").write_text("")
    assert {"login-key-0008", "ws-key-0004"} <= set(access.secrets())     # once seen, hidden all session
    access.close()


def test_the_tools_and_the_client_share_that_set(tmp_path, workspace):
    environ = base_env(tmp_path, None, anthropic_api_key=ENV_KEY)
    write(user_settings_file(environ), f"ANTHROPIC_API_KEY={REAL}\n")
    app, _ = make_app(workspace, environ)
    assert REAL in app.agent.tool_ctx.secrets and REAL in app.agent.provider.secrets()
    assert app.agent.tool_ctx.secrets == app.agent.provider.secrets()
    app.close()


KEYS = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=8, max_size=40)
PLACES = ("env key", "env token", "ws key", "ws token", "user key", "named token")


@settings(max_examples=40)
@given(st.lists(st.tuples(st.sampled_from(PLACES), KEYS), min_size=1, max_size=6), st.text(max_size=40))
def test_no_known_key_survives_redaction(placed, noise):
    """Wherever a key is configured, any output holding it comes back without it."""
    with tempfile.TemporaryDirectory() as tmp:
        assume(not any(key in REDACTED for _, key in placed))       # "redacted" itself cannot be hidden by it
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        environ, files = {"HOME": str(root / "home")}, {"ws": {}, "user": {}, "named": {}}
        for place, key in placed:
            where, kind = place.split()
            name = "ANTHROPIC_API_KEY" if kind == "key" else "ANTHROPIC_AUTH_TOKEN"
            (environ if where == "env" else files[where]).setdefault(name, key)
        paths = {"ws": workspace / ".env", "user": user_settings_file(environ), "named": root / "named.env"}
        for where, values in files.items():
            write(paths[where], "".join(f"{k}={v}\n" for k, v in values.items()))
        access = Access(workspace, env_file=paths["named"] if files["named"] else None, environ=environ)
        output = noise.join(key for _, key in placed)
        hidden = redact(output, access.secrets())
        configured = [v for values in (environ, *files.values()) for k, v in values.items() if k != "HOME"]
        assert not any(key in hidden for key in configured)
        access.close()


def test_credential_values_reads_each_file_literally_and_skips_short_values(tmp_path):
    path = write(tmp_path / "a.env", "ANTHROPIC_API_KEY='quoted-key-123'\nANTHROPIC_AUTH_TOKEN=short\n")
    values = credential_values({"ANTHROPIC_API_KEY": " spaced-key-456 "}, [path, tmp_path / "missing"])
    assert set(values) == {"quoted-key-123", "spaced-key-456"}

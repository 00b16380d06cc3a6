"""The user-level settings file is s08's own (user_file_guard.py): a guarded setting (endpoint, key or
token, APPROVAL_MODE, ALLOW_COMMANDS) that changed since s08 last wrote the file is asked about in the
REPL and refused by -p in one stderr line; /login's own writes are s08's. And a folder's .env never
sets PROVIDER, and asks before its MODEL_ID is used."""

from __future__ import annotations



from support.agents import TEST_KEY, base_env
from access.credentials import store_key
from events import Notice
from support.helpers import make_app
from access.user_file_guard import changed, digest_file
from support.user_file import attack, environ_with_login


def test_the_repl_asks_and_no_keeps_the_safe_values(tmp_path, workspace, standin):
    environ, user = environ_with_login(tmp_path, standin)
    attack(user, "http://127.0.0.1:9")
    questions = []
    app, events = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "n")
    standin.queue({"text": "ok"})
    assert app.turn("hello").text == "ok" and app.approvals.mode == "default"
    [question] = questions
    assert str(user) in question and "APPROVAL_MODE=yolo" in question and "127.0.0.1:9" in question
    assert "ignoring ANTHROPIC_BASE_URL, APPROVAL_MODE" in " ".join(e.text for e in events if isinstance(e, Notice))
    app.close()
    again, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "n")
    standin.queue({"text": "ok"})
    again.turn("hello")
    assert len(questions) == 2                                       # no was for that session only
    again.close()


def test_yes_uses_the_new_values_and_is_remembered(tmp_path, workspace, standin):
    environ, user = environ_with_login(tmp_path, standin)
    user.write_text(user.read_text() + "ALLOW_COMMANDS=make\nAPPROVAL_MODE=auto_edit\n")   # the person's own edit
    questions = []
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "y")
    standin.queue({"text": "ok"})
    app.turn("hello")
    assert len(questions) == 1 and app.approvals.mode == "auto_edit" and app.approvals.allow_commands == ("make",)
    app.close()
    assert changed(user) == {}
    later, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "y")
    assert later.approvals.mode == "auto_edit" and len(questions) == 1
    later.close()


def test_a_key_changed_behind_s08_s_back_asks_and_login_s_own_write_does_not(tmp_path, workspace, standin):
    environ, user = environ_with_login(tmp_path, standin)
    user.write_text(user.read_text().replace(TEST_KEY, "sk-ant-planted-key-0123456789"))
    found = changed(user)
    assert list(found) == ["ANTHROPIC_API_KEY"]
    questions = []
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "n")
    assert app.settings.anthropic_api_key == ""                     # not used until agreed
    app.turn("hello")
    assert "sk-ant-planted" not in questions[0] and "a new value, not shown" in questions[0]
    app.close()
    store_key(user, TEST_KEY)                                        # /login writes the file: s08's own
    assert changed(user) == {}


def test_login_does_not_bless_an_unapproved_change_it_keeps(tmp_path, workspace, standin):
    environ, user = environ_with_login(tmp_path, standin)
    attack(user, "http://127.0.0.1:9")
    store_key(user, TEST_KEY + "-new")                               # /login keeps the other lines
    assert set(changed(user)) == {"ANTHROPIC_BASE_URL", "APPROVAL_MODE"}


def test_without_a_record_the_file_as_it_is_becomes_the_record_and_a_foreign_record_trusts_nothing(tmp_path):
    user = tmp_path / "s08" / ".env"
    user.parent.mkdir()
    user.write_text(f"ANTHROPIC_API_KEY={TEST_KEY}\nAPPROVAL_MODE=auto_edit\n")     # written by hand
    assert changed(user) == {} and digest_file(user).exists()
    digest_file(user).chmod(0o666)                                   # anyone could have written it
    assert set(changed(user)) == {"ANTHROPIC_API_KEY", "APPROVAL_MODE"}
    digest_file(user).chmod(0o600)
    digest_file(user).write_text("not json")
    assert set(changed(user)) == {"ANTHROPIC_API_KEY", "APPROVAL_MODE"}


# ---- a folder's .env: PROVIDER never, MODEL_ID with consent ------------------------------------

def test_a_folder_env_never_sets_provider(tmp_path, workspace, standin):
    environ = base_env(tmp_path, standin)
    (workspace / ".env").write_text("PROVIDER=scripted\n")
    app, _ = make_app(workspace, environ)
    assert app.settings.provider == "anthropic"
    assert sum("ignoring PROVIDER=scripted from this folder's .env" in w for w in app.warnings) == 1
    app.close()

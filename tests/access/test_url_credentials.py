"""A base URL may carry `user:password@`. Wherever s08 prints the URL — /login's check, the change
question, the start-up question, the "sending nothing" line, a warning about the URL itself — it
prints it without them; and a tool output that shows the password gets it redacted."""

from __future__ import annotations


from config import load_settings, user_settings_file
from support.agents import TEST_KEY, base_env
from events import Notice, Question
from llm import check_key
from redact import redact_url
from standin import StandIn

PASSWORD = "s3cret-pass-word-42"


def with_password(url: str) -> str:
    return url.replace("http://", f"http://someone:{PASSWORD}@")


def said(events) -> str:
    return " ".join(e.text for e in events if isinstance(e, (Notice, Question)))


def make_app(workspace, environ, ask=None):
    from agent import App
    events: list = []
    app = App(workspace, environ=environ)
    app.set_emit(events.append)
    app.ask = lambda q: events.append(q) or (ask(q) if ask else None)
    return app, events


def test_login_never_prints_the_urls_password_when_the_key_is_refused(tmp_path, workspace):
    server = StandIn(api_key=TEST_KEY).start()
    try:
        url = with_password(server.url)
        check = check_key("a-wrong-key-123", url)
        assert check.refused and PASSWORD not in check.reason and "[redacted]@127.0.0.1" in check.reason
        app, events = make_app(workspace, base_env(tmp_path, None, anthropic_base_url=url))
        app.login("a-wrong-key-123")
        assert "refused the key" in said(events) and PASSWORD not in said(events)
        app.close()
    finally:
        server.stop()
    assert PASSWORD not in check_key("a-key-12345678", "http://u:" + PASSWORD + "@127.0.0.1:9").reason


def test_the_questions_the_refusal_and_the_error_line_never_print_it(tmp_path, workspace, standin):
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={with_password(standin.url)}\n")
    environ = base_env(tmp_path, None, anthropic_api_key=TEST_KEY)
    app, events = make_app(workspace, environ)
    app.ask = None
    assert not app.turn("hello").ok                      # nobody to ask: "sending nothing"
    app.ask = lambda q: events.append(q) or "y"
    app.turn("hello")                                    # the start-up question, yes (the stand-in wants no
    other = with_password("http://127.0.0.1:9/other")    # user:password: a 401 line that names the URL)
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={other}\n")
    app.ask = lambda q: events.append(q) or "n"
    app.turn("again")                                    # the change question: no
    text = said(events)
    for what in ("sending nothing", "Use this endpoint?", "Authentication failed (401) at http://[redacted]@",
                 "A settings file changed"):
        assert what in text
    assert PASSWORD not in text
    app.close()


def test_a_url_without_scheme_is_refused_without_showing_its_password(tmp_path, workspace):
    result = load_settings(workspace, environ={"HOME": str(tmp_path), "ANTHROPIC_BASE_URL": f"me:{PASSWORD}@host"})
    assert any("has no scheme" in w for w in result.warnings) and PASSWORD not in " ".join(result.warnings)
    assert redact_url(f"me:{PASSWORD}@host/x") == "[redacted]@host/x"


def test_the_user_file_url_password_is_a_secret_too(tmp_path, workspace, standin):
    environ = base_env(tmp_path, standin)
    user = user_settings_file(environ)
    user.parent.mkdir(parents=True)
    user.write_text(f"ANTHROPIC_BASE_URL={with_password('http://127.0.0.1:9')}\n")
    app, _ = make_app(workspace, environ)
    assert PASSWORD in app.agent.tool_ctx.secrets
    app.close()

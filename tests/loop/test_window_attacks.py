"""A hostile repository or endpoint against the window s08 asks for (llm/window_probe.py, app.py's
probe_window): through the real App against stand-ins over HTTP."""

from __future__ import annotations

from config import user_settings_file
from support.agents import TEST_KEY, base_env
from support.helpers import make_app


def test_a_folder_endpoint_is_not_asked_its_window_before_the_person_agreed(tmp_path, workspace, standin, other):
    """A cloned repository's .env names its own server: the probe (which carries the key) does not go
    there while the question is open, nor after a no; the person's own endpoint is asked instead."""
    environ = base_env(tmp_path)
    user = user_settings_file(environ)
    user.parent.mkdir(parents=True)
    user.write_text(f"ANTHROPIC_BASE_URL={standin.url}\nANTHROPIC_API_KEY={TEST_KEY}\n")
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={other.url}\n")
    other.props_window = standin.props_window = 8_192
    app, _ = make_app(workspace, environ, ask=lambda q: "n")
    assert app.access.needs_consent and app.window_probe is None       # nothing asked before the answer
    standin.queue({"text": "mine"})
    assert app.turn("hello").text == "mine"
    assert app.window_probe is not None and app.window_probe.done.wait(30)
    assert other.probes == [] and not other.requests
    assert standin.probes == ["/props"] and app.window_probe.root == standin.url
    app.close()

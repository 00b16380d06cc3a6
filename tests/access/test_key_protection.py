"""The key stays with s08: not in the agent's process environment as commands can read it, not in any
tool result, session log, transcript or persisted output, not in a warning or an error line.

The /proc test runs the real agent (`-p`) with the key exported, and lets a command dump the
environment of every ancestor into a file — written by the command itself, so redaction of tool
results cannot hide a leak there.
"""

from __future__ import annotations

import json

import pytest

from support.agents import PROTECTED_KEY, base_env
from config import load_settings

KEY = PROTECTED_KEY


def test_no_tool_result_log_transcript_or_persisted_output_holds_the_key(tmp_path, workspace, keyed_standin,
                                                                         monkeypatch):
    from agent import App
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    monkeypatch.setenv("PLANTED", KEY)                    # a command that prints the key some other way
    keyed_standin.queue(
        {"tool_calls": [{"name": "bash", "input": {"command": "cat .env; echo $PLANTED; env | grep PLANTED"}},
                        {"name": "read_file", "input": {"path": ".env"}},
                        {"name": "bash", "input": {"command": "seq 1 300000; cat .env; seq 1 10"}}]},
        {"text": "I saw it."})
    env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": keyed_standin.url}
    events: list = []
    app = App(workspace, environ=env)
    app.set_emit(events.append)
    assert app.settings.anthropic_api_key == KEY
    assert app.turn("show me the settings").ok
    app.compact("")                                        # a transcript too
    app.close()
    sent = json.dumps(keyed_standin.requests)
    assert "[redacted]" in sent and KEY not in sent
    assert KEY not in json.dumps(list(app.messages)) and KEY not in repr(events)
    written = [p for p in workspace.rglob("*") if p.is_file() and p.name != ".env"]
    assert any(p.parent.name == ".sessions" for p in written) and any(".transcripts" in p.parts for p in written)
    assert any(p.parent.name == ".task_outputs" and p.suffix == ".txt" for p in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("value", ['"sk-ant-abc\\ndef-0123456789"', "sk-ant-abc\x1b[2Jdef", "sk-ant-abc def-0123",
                                   "sk-ant-ábc-0123456789"])
def test_a_key_with_control_characters_is_refused_at_load_without_printing_it(workspace, value):
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={value}\n")
    result = load_settings(workspace, environ={})
    assert not result.settings.has_credentials
    assert len(result.warnings) == 1 and "ANTHROPIC_API_KEY" in result.warnings[0]
    assert "abc" not in result.warnings[0] and "\n" not in result.warnings[0]


def test_an_unparseable_key_line_is_reported_without_its_value(workspace):
    (workspace / ".env").write_text('ANTHROPIC_API_KEY="sk-ant-unterminated-0123456789\nMODEL_ID=m\n')
    result = load_settings(workspace, environ={})
    assert all("unterminated" not in w for w in result.warnings)


def test_a_base_url_with_credentials_is_not_shown_in_errors(app_for, standin):
    from redact import redact_url
    assert redact_url("https://user:pa55@host.example/anthropic") == "https://[redacted]@host.example/anthropic"
    assert redact_url("http://127.0.0.1:8765") == "http://127.0.0.1:8765"

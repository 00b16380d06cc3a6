"""What a folder's .env may decide only with the person's consent (access/folder_trust.py): its endpoint, whatever
the key's source (whoever names it drives the agent), and the settings that relax approvals or keep files
outside the workspace (APPROVAL_MODE other than default, ALLOW_COMMANDS, S08_HISTORY_FILE). One question,
remembered per folder and values (a change asks again); -p and piped input ignore the relaxations with
one line. The environment, --env-file and the user-level file are the person's own: no question.
And an endpoint change the person accepts mid-session is asked about once, not twice."""

from __future__ import annotations


import pytest

from config import user_settings_file
from support.agents import TEST_KEY, base_env
from access.credentials import agreed_values, consent_file, endpoint_agreed, remember_endpoint
from events import Notice
from support.helpers import make_app

TOUCH = {"tool_calls": [{"name": "bash", "input": {"command": "touch made.txt"}}]}


def env_without_yolo(tmp_path, server=None, **settings):
    env = base_env(tmp_path, server, **settings)
    del env["APPROVAL_MODE"]            # the real default: commands that change things ask
    return env


def notices(events, kind=None):
    return [e.text for e in events if isinstance(e, Notice) and (kind is None or e.kind == kind)]


# ---- the endpoint: its own key does not make it trusted ------------------------------------
def test_a_folder_endpoint_with_its_own_key_is_asked_about_and_no_sends_it_nothing(tmp_path, workspace, standin,
                                                                                 other):
    environ = base_env(tmp_path)
    user = user_settings_file(environ)                  # the person's own endpoint and key
    user.parent.mkdir(parents=True)
    user.write_text(f"ANTHROPIC_BASE_URL={standin.url}\nANTHROPIC_API_KEY={TEST_KEY}\n")
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={other.url}\nANTHROPIC_API_KEY=its-own-key-123\n")
    questions = []
    app, events = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "n")
    assert app.access.needs_consent and app.agent.provider is None      # nothing can be sent before the answer
    standin.queue({"text": "mine"})
    assert app.turn("hello").text == "mine" and not other.requests
    [question] = questions
    assert other.url in question and "ANTHROPIC_API_KEY from this folder's .env" in question
    assert "drives this agent" in question and "~/.ssh/*" in question and "its-own-key" not in question
    app.close()


# ---- relaxations: not used until agreed ----------------------------------------------------


def test_the_persons_own_files_relax_without_a_question(tmp_path, workspace, standin):
    environ = env_without_yolo(tmp_path, standin)
    user = user_settings_file(environ)
    user.parent.mkdir(parents=True)
    user.write_text("APPROVAL_MODE=yolo\nS08_HISTORY_FILE=~/my-history\n")
    app, _ = make_app(workspace, environ, ask=lambda q: pytest.fail(f"asked: {q.text}"))
    assert app.approvals.mode == "yolo" and app.settings.s08_history_file == "~/my-history"
    assert app.settle_endpoint()
    app.close()
    named = workspace / "mine.env"
    named.write_text("ALLOW_COMMANDS=touch\n")
    app, _ = make_app(workspace, environ, ask=lambda q: pytest.fail(f"asked: {q.text}"), env_file=named)
    assert app.approvals.allow_commands == ("touch",)
    app.close()


def test_yes_uses_them_and_is_remembered_per_folder_and_values(tmp_path, workspace, standin):
    environ = env_without_yolo(tmp_path, standin)
    (workspace / ".env").write_text("APPROVAL_MODE=yolo\nALLOW_COMMANDS=touch\nS08_HISTORY_FILE=/tmp/h08\n")
    questions = []
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "y")
    assert app.approvals.mode == "default" and app.settings.s08_history_file == "~/.s08_history"   # not yet
    assert app.settle_endpoint()
    [question] = questions
    for shown in ("APPROVAL_MODE=yolo", "every command and file change runs without asking", "ALLOW_COMMANDS=touch",
                  "S08_HISTORY_FILE=/tmp/h08", str(workspace)):
        assert shown in question
    assert app.approvals.mode == "yolo" and app.approvals.allow_commands == ("touch",)
    assert app.settings.s08_history_file == "/tmp/h08"
    standin.queue(TOUCH, {"text": "made"})
    assert app.turn("make it").text == "made" and (workspace / "made.txt").exists()
    app.close()
    assert agreed_values(user_settings_file(environ), workspace) == {
        "APPROVAL_MODE": "yolo", "ALLOW_COMMANDS": "touch", "S08_HISTORY_FILE": "/tmp/h08"}
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "n")
    assert app.settle_endpoint() and len(questions) == 1 and app.approvals.mode == "yolo"      # remembered
    app.close()
    (workspace / ".env").write_text("APPROVAL_MODE=yolo\nALLOW_COMMANDS=touch,sh\nS08_HISTORY_FILE=/tmp/h08\n")
    app, events = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "n")
    assert app.settle_endpoint() and len(questions) == 2                                        # a change asks
    assert "ALLOW_COMMANDS=touch,sh" in questions[1] and "APPROVAL_MODE" not in questions[1]
    assert app.approvals.allow_commands == () and app.approvals.mode == "yolo"                 # only the new no
    assert any("ignoring ALLOW_COMMANDS" in t for t in notices(events, "warning"))
    app.close()


def test_no_ignores_them_for_the_session_and_asks_again_next_time(tmp_path, workspace, standin):
    environ = env_without_yolo(tmp_path, standin)
    (workspace / ".env").write_text("APPROVAL_MODE=auto_edit\n")
    questions = []
    for _start in range(2):
        app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "n")
        assert app.settle_endpoint() and app.approvals.mode == "default"
        standin.queue(TOUCH, {"text": "asked"})
        assert app.turn("make it").text == "asked" and not (workspace / "made.txt").exists()
        app.close()
    assert len(questions) == 2 and "file changes run without asking" in questions[0]
    assert not consent_file(user_settings_file(environ)).exists()


def test_one_question_covers_the_endpoint_and_the_relaxations(tmp_path, workspace, standin):
    environ = base_env(tmp_path, None, anthropic_api_key=TEST_KEY)
    del environ["APPROVAL_MODE"]
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={standin.url}\nAPPROVAL_MODE=yolo\n")
    questions = []
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "y")
    standin.queue(TOUCH, {"text": "made"})
    assert app.turn("make it").text == "made" and (workspace / "made.txt").exists()
    [question] = questions
    assert standin.url in question and "APPROVAL_MODE=yolo" in question and question.endswith(
        "ignores the other settings for this session.")
    assert agreed_values(user_settings_file(environ), workspace) == {"ANTHROPIC_BASE_URL": standin.url,
                                                                     "APPROVAL_MODE": "yolo"}
    app.close()


def test_a_relaxation_the_model_writes_mid_session_is_not_used(tmp_path, workspace, standin):
    app, _ = make_app(workspace, env_without_yolo(tmp_path, standin), ask=lambda q: pytest.fail("asked"))
    standin.queue({"text": "one"}, TOUCH, {"text": "refused"})
    app.turn("hello")
    (workspace / ".env").write_text("APPROVAL_MODE=yolo\nALLOW_COMMANDS=touch\n")
    assert app.turn("make it").text == "refused" and not (workspace / "made.txt").exists()
    assert app.approvals.mode == "default" and app.settings.approval_mode == "default"
    app.close()


# ---- an endpoint change accepted mid-session: one question --------------------------------
def test_a_yes_to_a_changed_endpoint_is_the_consent(tmp_path, workspace, standin, other):
    environ = base_env(tmp_path, standin)              # key and endpoint from the environment... not for long
    del environ["ANTHROPIC_BASE_URL"]
    questions = []
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "y")
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={other.url}\n")     # the model writes it
    other.queue({"text": "from the new endpoint"})
    assert app.turn("hello").text == "from the new endpoint"
    [question] = questions                                                  # not asked twice
    assert "A settings file changed" in question and other.url in question and "drives this agent" in question
    assert endpoint_agreed(user_settings_file(environ), workspace, other.url)
    app.close()


def test_in_demo_mode_the_change_question_names_the_demo_model(tmp_path, workspace):
    questions = []
    app, _ = make_app(workspace, base_env(tmp_path, None), ask=lambda q: questions.append(q.text) or "n")
    assert app.demo and app.turn("hello").ok
    (workspace / ".env").write_text("MODEL_ID=claude-opus-4-5\nANTHROPIC_BASE_URL=https://example.com\n")
    app.turn("again")
    [question] = questions
    assert "MODEL_ID: s08-demo (the demo model) → claude-opus-4-5" in question
    assert "ANTHROPIC_BASE_URL: the built-in demo model (offline) → https://example.com" in question
    assert "claude-sonnet-4-6" not in question and "demo model keeps answering until a key" in question
    app.close()


def test_the_consent_file_still_reads_url_only_lines(tmp_path, workspace):
    user = user_settings_file(base_env(tmp_path))
    path = remember_endpoint(user, workspace, "http://a")
    path.write_text(f'{{"folder": "{workspace}", "url": "http://old"}}\n')          # as an earlier s08 wrote it
    assert endpoint_agreed(user, workspace, "http://old")
    remember_endpoint(user, workspace.parent, "http://b")
    assert agreed_values(user, workspace) == {"ANTHROPIC_BASE_URL": "http://old"}


def test_a_copied_env_example_asks_nothing(tmp_path, workspace, standin):
    from support.agents import ROOT
    (workspace / ".env").write_text((ROOT / ".env.example").read_text())
    app, _ = make_app(workspace, env_without_yolo(tmp_path, standin), ask=lambda q: pytest.fail(f"asked: {q.text}"))
    standin.queue({"text": "fine"})
    assert app.turn("hello").text == "fine" and app.approvals.mode == "default"
    app.close()

"""--model and /model, /resume, !command, @path, /undo and /rewind, in-process against the strict stand-in
(or its in-process twin, the scripted model): what is sent, what is logged, and what a resume and a compaction leave of it."""

from __future__ import annotations

import json
import os
import time

import pytest

from session.checkpoints import cut_before
from commands import UNUSABLE, dispatch, help_entries
from support.agents import base_env
from support.helpers import Model, make_app, user_texts
from session.log import list_sessions, load_session


def sent(standin, n: int = -1) -> dict:
    return standin.requests[n]


def notices(events) -> str:
    return "\n".join(getattr(e, "text", "") for e in events)


def resume(app, tmp_path, workspace, standin, **settings):
    """Close `app` and --continue its session in a new App."""
    path = app.messages.log.path
    app.close()
    return make_app(workspace, base_env(tmp_path, standin, **settings), resume=load_session(path))


# ---- the model -----------------------------------------------------------------------------------

@pytest.mark.scripted
def test_model_flag_and_command_are_sent_logged_and_survive_resume(tmp_path, workspace, standin):
    app, events = make_app(workspace, base_env(tmp_path, standin), model="claude-haiku-4-5")
    standin.queue({"text": "one"}, {"text": "two"}, {"text": "three"})
    assert app.turn("hello").ok
    assert sent(standin)["model"] == "claude-haiku-4-5"
    dispatch(app, "/model claude-opus-4-5")
    assert "[model: claude-opus-4-5" in notices(events) and "$5 / $25" in notices(events)
    assert app.turn("again").ok
    assert sent(standin)["model"] == "claude-opus-4-5"
    assert app.price == (5.0, 25.0)
    path = app.messages.log.path
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["model_choice"] == "claude-haiku-4-5"
    assert {"t": "model", "id": "claude-opus-4-5"} in records
    app, events = resume(app, tmp_path, workspace, standin)
    assert app.settings.model_id == "claude-opus-4-5"
    assert app.turn("after the resume").ok and sent(standin)["model"] == "claude-opus-4-5"
    app.close()
    app, _ = make_app(workspace, base_env(tmp_path, standin), model="claude-sonnet-4-5",
                      resume=load_session(path))
    assert app.settings.model_id == "claude-sonnet-4-5"       # --model given with --continue wins
    app.close()


@pytest.mark.scripted
def test_a_model_choice_lives_on_after_clear_and_a_start_with_model_leaves_no_empty_session(
        tmp_path, workspace, standin):
    app, _ = make_app(workspace, base_env(tmp_path, standin), model="claude-haiku-4-5")
    app.close()
    assert list_sessions(workspace) == []
    app, _ = make_app(workspace, base_env(tmp_path, standin), model="claude-haiku-4-5")
    dispatch(app, "/clear")
    standin.queue({"text": "ok"})
    assert app.turn("hi").ok and sent(standin)["model"] == "claude-haiku-4-5"
    path = app.messages.log.path
    app.close()
    assert load_session(path).model_choice == "claude-haiku-4-5"


@pytest.mark.scripted
def test_a_settings_file_cannot_change_the_model_the_person_chose(tmp_path, workspace, standin):
    env_file = tmp_path / "mine.env"                          # a file the person names (--env-file) is theirs
    env_file.write_text("MODEL_ID=claude-sonnet-4-5\n")
    app, events = make_app(workspace, base_env(tmp_path, standin), env_file=env_file)
    assert app.settings.model_id == "claude-sonnet-4-5"
    dispatch(app, "/model claude-haiku-4-5")
    time.sleep(0.01)
    env_file.write_text("MODEL_ID=claude-sonnet-4-5\nMAX_TOKENS=1234\n")     # another setting changes
    os.utime(env_file, (time.time() + 5, time.time() + 5))
    standin.queue({"text": "a"}, {"text": "b"})
    assert app.turn("one").ok
    assert sent(standin)["model"] == "claude-haiku-4-5" and sent(standin)["max_tokens"] == 1234
    assert "ignored a settings change" not in notices(events)    # the file's old model is no change to ask about
    env_file.write_text("MODEL_ID=claude-opus-4-1\nMAX_TOKENS=1234\n")       # now the file names a new model
    os.utime(env_file, (time.time() + 10, time.time() + 10))
    assert app.turn("two").ok
    assert sent(standin)["model"] == "claude-haiku-4-5"           # nobody to ask: ignored, and said
    assert "ignored a settings change: MODEL_ID: claude-haiku-4-5 → claude-opus-4-1" in notices(events)
    app.close()


@pytest.mark.scripted
def test_window_and_price_follow_the_model_unless_set(tmp_path, workspace, standin):
    app, events = make_app(workspace, base_env(tmp_path, standin))
    dispatch(app, "/model claude-3-5-haiku")
    assert app.price == (0.8, 4.0) and app.agent.compactor.window.tokens == 200_000
    dispatch(app, "/model my-gateway-model")
    assert app.price is None and "price unknown" in notices(events) and "does not know" in notices(events)
    dispatch(app, "/model bad name; rm")
    assert "not a model name" in notices(events) and app.settings.model_id == "my-gateway-model"
    app.close()
    app, _ = make_app(workspace, base_env(tmp_path, standin, context_window=120_000, model_price="1,2"))
    dispatch(app, "/model claude-opus-4-5")
    assert app.agent.compactor.window.tokens == 120_000          # CONTEXT_WINDOW set: it wins
    assert app.price == (5.0, 25.0)                               # MODEL_PRICE was the configured model's
    app.close()


@pytest.mark.scripted
def test_model_without_a_name_lists_the_known_models_or_asks(tmp_path, workspace, standin):
    app, events = make_app(workspace, base_env(tmp_path, standin))
    assert dispatch(app, "/model") is None
    assert "claude-opus-4-5" in notices(events) and "now: claude-sonnet-4-6" in notices(events)
    questions = []
    app.ask = lambda q: questions.append(q) or "1"
    dispatch(app, "/model")
    assert "← now" in questions[0].text and app.settings.model_id == "claude-opus-4-5"
    app.close()


# ---- /resume -------------------------------------------------------------------------------------

@pytest.mark.scripted
def test_resume_inside_switches_to_the_chosen_session_cleanly(tmp_path, workspace, standin):
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue({"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"})
    assert app.turn("first session").ok
    first = app.messages.log.path
    dispatch(app, "/clear")
    assert app.turn("second session").ok
    assert dispatch(app, "/resume") == UNUSABLE                   # nobody to ask: needs the REPL or an id
    questions = []
    app.ask = lambda q: questions.append(q) or ""                 # Enter: the newest other one
    dispatch(app, "/resume")
    assert app.messages.log.path == first and user_texts(app.messages) == ["first session"]
    assert type(events[-1]).__name__ == "SessionResumed" and "Resume which one?" in questions[0].text
    assert app.turn("back in the first").ok
    assert user_texts(sent(standin)["messages"]) == ["first session", "back in the first"]
    dispatch(app, "/resume nope")
    assert "no other session matches 'nope'" in notices(events)
    app.close()


# ---- !command ------------------------------------------------------------------------------------

@pytest.mark.scripted
def test_bang_runs_the_persons_command_and_the_model_sees_it(tmp_path, workspace, standin):
    app, events = make_app(workspace, base_env(tmp_path, standin))
    before = len(standin.requests)
    result = dispatch(app, "!echo from-you; exit 3")
    assert len(standin.requests) == before                        # no model call
    assert not result.ok and result.text.startswith("from-you")   # what -p prints, and its exit status
    finished = [e for e in events if type(e).__name__ == "ToolFinished"][-1]
    assert "from-you" in finished.content and finished.meta["exit_code"] == 3
    standin.queue({"text": "seen"})
    assert app.turn("what did I see?").ok
    texts = user_texts(sent(standin)["messages"])
    assert texts[0].startswith("[you ran] $ echo from-you; exit 3\nfrom-you") and "[exit code 3]" in texts[0]
    assert texts[1] == "what did I see?"
    assert app.continuity.ledger.commands[-1][:2] == ("echo from-you; exit 3", "exit 3 (you ran it)")
    dispatch(app, "!rm -rf /")
    assert "accident guard" in notices(events) and "rm -rf /" not in json.dumps(list(app.messages))
    app.close()


@pytest.mark.scripted
def test_a_big_output_of_bang_is_saved_and_the_context_gets_a_preview(tmp_path, workspace, standin):
    app, _ = make_app(workspace, base_env(tmp_path, standin))
    dispatch(app, "!seq 1 20000")
    text = user_texts(list(app.messages))[-1]
    assert "<persisted-output>" in text and len(text) < 5_000 and "19999" in text
    saved = text.split("Full output saved to: ")[1].split("\n")[0]
    assert (workspace / saved).read_text().count("\n") >= 20000
    assert saved in app.continuity.ledger.saved
    app.close()


@pytest.mark.scripted
def test_a_session_that_ends_on_a_bang_is_not_an_unanswered_request(tmp_path, workspace, standin):
    app, _ = make_app(workspace, base_env(tmp_path, standin))
    dispatch(app, "!echo hi")
    app, _ = resume(app, tmp_path, workspace, standin)
    assert not app.resumed.unanswered and "session stopped" not in json.dumps(list(app.messages))
    app.close()


# ---- @path -----------------------------------------------------------------------------------------

@pytest.mark.scripted
def test_mentions_attach_files_within_the_rules(tmp_path, workspace, standin):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hello')\n")
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "outside.txt").write_text("private")
    (workspace / "big.txt").write_text("line\n" * 300_000)
    (workspace / ".env").write_text("ANTHROPIC_AUTH_TOKEN=sk-ant-very-secret-token-42\n")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue({"text": "ok"})
    assert app.turn("look at @src/app.py, @blob.bin @../outside.txt @.env @big.txt and email me@host").ok
    content = sent(standin)["messages"][0]["content"]
    assert content[0]["text"].startswith("look at @src/app.py")
    attached = "\n".join(b["text"] for b in content[1:])
    assert '<attached-file path="src/app.py"' in attached and "print('hello')" in attached
    assert "private" not in attached and "\x00" not in attached
    assert "sk-ant-very-secret-token-42" not in attached and "[redacted]" in attached
    assert "too large to attach whole" in attached and len(attached) < 200_000
    said = notices(events)
    assert "@blob.bin: blob.bin is a binary file" in said and "@../outside.txt: not attached" in said
    ledger = app.continuity.ledger.files
    assert ledger["src/app.py"][0] == "attached by you" and "blob.bin" not in ledger
    assert [e.text for e in app.continuity.typed.entries] == [content[0]["text"]]    # what the person typed
    app.close()


def test_mention_completion_offers_workspace_paths_only(workspace):
    from prompt_toolkit.document import Document
    from ui.mention_complete import MentionCompleter
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("")
    (workspace / "setup.cfg").write_text("")
    (workspace / ".hidden").write_text("")
    done = MentionCompleter(workspace)

    def complete(text):
        return [c.text for c in done.get_completions(Document(text), None)]
    assert complete("see @s") == ["setup.cfg", "src/"]
    assert complete("see @src/m") == ["src/main.py"]
    assert complete("see @.h") == [".hidden"] and complete("see @") == ["setup.cfg", "src/"]
    assert complete("see @../") == [] and complete("mail a@s") == []
    (workspace / "my notes.md").write_text("")
    assert complete("see @my") == ['"my notes.md"']


def test_help_and_completion_list_the_new_commands():
    names = [name for name, _ in help_entries()]
    assert {"/model", "/resume", "/undo", "/rewind"} <= set(names)
    from events import HelpReport
    from ui.reports import help_report
    shown = help_report(HelpReport(help_entries())).plain
    assert "!cmd runs your own shell command" in shown and "@path attaches" in shown and "not shell" in shown


# ---- checkpoints: /undo and /rewind ----------------------------------------------------------------

def writes(*pairs) -> dict:
    return {"tool_calls": [{"name": "write_file", "input": {"path": p, "content": c}} for p, c in pairs]}


@pytest.mark.scripted
def test_undo_restores_the_last_turns_files_and_tells_the_model(tmp_path, workspace, standin):
    (workspace / "a.txt").write_text("A0")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(writes(("a.txt", "A1")), {"text": "one"},
                  {"tool_calls": [{"name": "edit_file", "input": {"path": "a.txt", "old_text": "A1", "new_text": "A2"}},
                                  {"name": "write_file", "input": {"path": "new/b.txt", "content": "B"}}]},
                  {"text": "two"})
    app.turn("first")
    app.turn("second")
    assert (workspace / "a.txt").read_text() == "A2" and (workspace / "new/b.txt").exists()
    dispatch(app, "/undo")
    assert (workspace / "a.txt").read_text() == "A1" and not (workspace / "new/b.txt").exists()
    assert "shell commands" in notices(events)
    app, events = resume(app, tmp_path, workspace, standin)       # --continue keeps the checkpoints
    dispatch(app, "/undo")
    assert (workspace / "a.txt").read_text() == "A0"
    dispatch(app, "/undo")
    assert "nothing to undo" in notices(events)
    standin.queue({"text": "noted"})
    assert app.turn("third").ok
    texts = user_texts(sent(standin)["messages"])
    assert any(t.startswith("[undone by you] The user ran /undo") and "message 2" in t and "new/b.txt: removed" in t
               for t in texts)
    assert any("message 1" in t and "a.txt: restored" in t for t in texts)
    assert app.continuity.ledger.files["a.txt"][0] == "restored by /undo"
    app.close()


@pytest.mark.scripted
def test_rewind_takes_files_and_the_conversation_back(tmp_path, workspace, standin):
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(writes(("f.txt", "1")), {"text": "r1 " * 400}, writes(("f.txt", "2")), {"text": "r2 " * 400},
                  writes(("f.txt", "3"), ("g.txt", "g")), {"text": "r3 " * 400})
    for text in ("one", "two", "three"):
        assert app.turn(text).ok
    dispatch(app, "/rewind 2 files")
    assert (workspace / "f.txt").read_text() == "1" and not (workspace / "g.txt").exists()
    assert user_texts(list(app.messages))[:3] == ["one", "two", "three"]      # the conversation stays
    dispatch(app, "/rewind 2 all")                                # files already there; now the conversation
    assert [t for t in user_texts(list(app.messages)) if not t.startswith("[")] == ["one"]
    standin.queue({"text": "fresh"})
    assert app.turn("two again").ok
    assert [t for t in user_texts(sent(standin)["messages"]) if not t.startswith("[")] == ["one", "two again"]
    assert "before their message 2" in json.dumps(sent(standin)["messages"])
    # a compaction later does not carry the withdrawn messages back
    standin.queue({"text": "r4 " * 400})
    assert app.turn("more").ok
    standin.brain = Model(summaries=[{"text": "SUMMARY"}])
    app.compact()
    carried = json.dumps(list(app.messages))
    assert "SUMMARY" in carried
    assert '"one"' in carried and '"two again"' in carried and '"three"' not in carried and '"two"' not in carried
    app, _ = resume(app, tmp_path, workspace, standin)
    assert [e.dropped for e in app.continuity.typed.entries] == [False, True, True, False, False]
    app.close()


@pytest.mark.scripted
def test_after_a_compaction_rewind_brings_back_files_but_not_the_compacted_conversation(tmp_path, workspace,
                                                                                          standin):
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(writes(("f.txt", "1")), {"text": "r1 " * 400}, writes(("f.txt", "2")), {"text": "r2 " * 400})
    app.turn("one")
    app.turn("two")
    standin.brain = Model(summaries=[{"text": "SUMMARY"}])
    app.compact()
    assert "SUMMARY" in json.dumps(list(app.messages))
    dispatch(app, "/rewind 2 all")
    assert "was compacted: only the files" in notices(events)
    assert (workspace / "f.txt").read_text() == "1"
    dispatch(app, "/undo")
    assert not (workspace / "f.txt").exists()
    standin.brain = None
    standin.queue({"text": "ok"})
    assert app.turn("go on").ok
    app.close()


def test_cut_before_keeps_the_tool_results_a_message_followed():
    from support.helpers import ask, call, results, say, user
    c = call("bash", command="ls")
    history = [user("one"), ask(c), results((c, "out"), text="two"), say("done")]
    assert cut_before(history, ["one", "two"], 2) == [user("one"), ask(c), {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": c["id"], "content": "out"}]}]
    assert cut_before(history, ["one", "two"], 1) == []
    assert cut_before([user("[compacted] one")], ["one"], 1) is None


@pytest.mark.scripted
def test_each_of_them_survives_a_compaction_and_a_resume(tmp_path, workspace, standin):
    (workspace / "spec.md").write_text("the spec says: be brief\n")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    dispatch(app, "/model claude-haiku-4-5")
    dispatch(app, "!echo own-output")
    standin.queue({"text": "read it " * 200}, writes(("out.txt", "made")), {"text": "wrote it " * 200})
    assert app.turn("follow @spec.md").ok
    assert app.turn("now write out.txt").ok
    standin.brain = Model(summaries=[{"text": "SUMMARY"}])
    app.compact()
    standin.brain = None
    compacted = json.dumps(list(app.messages))
    assert "SUMMARY" in compacted and "be brief" not in compacted              # the attachment was summarized …
    assert "spec.md: attached by you" in compacted                             # … the ledger keeps the file
    assert "`echo own-output`: exit 0 (you ran it)" in compacted               # … and the command
    app, events = resume(app, tmp_path, workspace, standin)
    assert app.settings.model_id == "claude-haiku-4-5"
    dispatch(app, "/undo")
    assert not (workspace / "out.txt").exists()
    standin.queue({"text": "fine"})
    assert app.turn("go on").ok
    request = sent(standin)
    assert request["model"] == "claude-haiku-4-5" and "out.txt: removed" in json.dumps(request["messages"])
    app.close()


@pytest.mark.scripted
@pytest.mark.parametrize("answer", ["y", "n"])
def test_model_flag_stays_the_persons_choice_through_the_folder_question(tmp_path, workspace, standin, answer):
    (workspace / ".env").write_text("MODEL_ID=claude-opus-4-1\n")     # a folder's model: asked about at start
    app, events = make_app(workspace, base_env(tmp_path, standin), model="claude-haiku-4-5",
                           ask=lambda q: answer)
    assert app.settle_endpoint()
    standin.queue({"text": "ok"})
    assert app.turn("hi").ok and sent(standin)["model"] == "claude-haiku-4-5"
    app.close()


@pytest.mark.scripted
def test_a_checkpoint_swapped_by_a_command_is_refused_not_followed(tmp_path, workspace, standin):
    (workspace / "a.txt").write_text("mine")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(writes(("a.txt", "theirs")), {"text": "done"})
    assert app.turn("change it").ok
    folder = app.checkpoints.folder
    (blob,) = [p for p in folder.iterdir() if not p.name.startswith(".")]
    blob.unlink()
    blob.symlink_to("/dev/zero")                      # would never end if it were read
    dispatch(app, "/undo")
    assert "a.txt: not restored: its checkpoint cannot be read" in notices(events)
    assert (workspace / "a.txt").read_text() == "theirs"
    app.close()


def test_a_log_record_cannot_name_a_blob_outside_its_folder():
    from session.checkpoints import record_ok
    good = {"t": "checkpoint", "prompt": 1, "turn": 1, "path": "a", "existed": True, "blob": "ab" * 32}
    assert record_ok(good) and record_ok({**good, "blob": ""})
    assert not record_ok({**good, "blob": "../../etc/passwd"}) and not record_ok({**good, "blob": "AB" * 32})
    assert not record_ok({"t": "checkpoints", "all": [[1, 1, "a", True, "../x", False]]})


@pytest.mark.scripted
def test_undo_keeps_what_you_changed_after_the_model_did(tmp_path, workspace, standin):
    (workspace / "a.txt").write_text("v0")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(writes(("a.txt", "v1")), {"text": "done"})
    assert app.turn("change it").ok
    (workspace / "a.txt").write_text("v1 and my own edit")       # you edit it afterwards
    dispatch(app, "/undo")
    assert (workspace / "a.txt").read_text() == "v0"
    said = notices(events)
    assert "it had changed since s08 wrote it; what it held is kept in .sessions/" in said
    kept = said.split("what it held is kept in ")[1].split(")")[0]
    assert (workspace / kept).read_text() == "v1 and my own edit"
    app, events = resume(app, tmp_path, workspace, standin)       # the "after" digest is in the log
    assert app.checkpoints.entries[0].after
    app.close()


@pytest.mark.scripted
def test_two_changes_of_a_file_in_one_turn_undo_to_before_the_first_with_no_false_alarm(tmp_path, workspace,
                                                                                         standin):
    (workspace / "a.txt").write_text("v0")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(writes(("a.txt", "v1")), writes(("a.txt", "v2")), {"text": "done"})
    assert app.turn("change it twice").ok
    app, events = resume(app, tmp_path, workspace, standin)
    dispatch(app, "/undo")
    assert (workspace / "a.txt").read_text() == "v0" and "had changed since" not in notices(events)
    app.close()


@pytest.mark.scripted
def test_clean_removes_an_old_sessions_checkpoints_with_it_and_keeps_the_current_ones(tmp_path, workspace,
                                                                                        standin):
    from session.clean import DAY
    (workspace / "a.txt").write_text("v0")
    app, _ = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(writes(("a.txt", "v1")), {"text": "done"})
    assert app.turn("change it").ok
    old_folder, old_log = app.checkpoints.folder, app.messages.log.path
    app.close()
    long_ago = time.time() - 40 * DAY
    for path in [old_log, *old_folder.iterdir()]:
        os.utime(path, (long_ago, long_ago))
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(writes(("a.txt", "v2")), {"text": "done"})
    assert app.turn("change it again").ok
    app.ask = lambda q: "y"
    dispatch(app, "/clean")
    assert not old_log.exists() and not old_folder.exists()
    assert list(app.checkpoints.folder.iterdir())                 # the current session's stay
    dispatch(app, "/undo")
    assert (workspace / "a.txt").read_text() == "v1"
    app.close()

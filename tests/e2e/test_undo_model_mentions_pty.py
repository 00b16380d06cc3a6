"""What a person does besides asking, typed at the real REPL in a pseudo-terminal: !command, @path with Tab,
/undo and /rewind (with their questions), /model and its list, /resume and its picker, --model, and
checkpoints that survive --continue."""

from __future__ import annotations

import json
import time

import pexpect
import pytest

from support.agents import base_env, spawn_agent
from support.helpers import answer_question, user_texts

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "


def writes(*pairs) -> dict:
    return {"tool_calls": [{"name": "write_file", "input": {"path": p, "content": c}} for p, c in pairs]}


def test_bang_runs_at_once_shows_like_a_tool_and_the_model_sees_it(repl, standin):
    child = repl()
    child.sendline("!echo from-the-person; echo second-line")
    child.expect_exact("bash\x1b[0m  echo from-the-person; echo second-line")      # the tool's own line
    child.expect_exact("second-line")
    child.expect_exact("exit 0")
    child.expect_exact(PROMPT)
    assert standin.requests == []                         # no model call
    standin.queue({"text": "I-SAW-IT"})
    child.sendline("what did that print?")
    child.expect_exact("I-SAW-IT")
    child.expect_exact(PROMPT)
    texts = user_texts(standin.requests[-1]["messages"])
    assert texts[0].startswith("[you ran] $ echo from-the-person; echo second-line\nfrom-the-person\nsecond-line")
    assert texts[1] == "what did that print?"


def test_at_path_completes_with_tab_and_attaches_the_file(repl, standin, workspace):
    (workspace / "notes.md").write_text("remember the milk\n")
    (workspace / "other.txt").write_text("x\n")
    standin.queue({"text": "GOT-IT"})
    child = repl()
    child.send("read @no")
    child.expect_exact("notes.md")                        # the list shows, as you type
    child.send("\t")
    child.expect_exact("tes.md")                          # Tab puts it in
    child.send("\r")
    child.expect_exact("[attached notes.md]")
    child.expect_exact("GOT-IT")
    child.expect_exact(PROMPT)
    content = standin.requests[-1]["messages"][0]["content"]
    assert content[0]["text"] == "read @notes.md"
    assert '<attached-file path="notes.md"' in content[1]["text"] and "remember the milk" in content[1]["text"]


def test_undo_puts_the_files_back_and_survives_continue(repl, standin, workspace, tmp_path):
    (workspace / "a.txt").write_text("before")
    standin.queue(writes(("a.txt", "after-one")), {"text": "ONE"}, writes(("a.txt", "after-two")), {"text": "TWO"})
    child = repl()
    for text, done in (("first change", "ONE"), ("second change", "TWO")):
        child.sendline(text)
        child.expect_exact(done)
        child.expect_exact(PROMPT)
    child.sendline("/undo")
    child.expect_exact("[undo] the file changes made in answer to your message 2")
    child.expect_exact("a.txt: restored")
    child.expect_exact(PROMPT)
    assert (workspace / "a.txt").read_text() == "after-one"
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    again = spawn_agent(base_env(tmp_path, standin), workspace, "-c", timeout=30)
    again.expect_exact(PROMPT)
    again.sendline("/undo")
    again.expect_exact("your message 1")
    again.expect_exact(PROMPT)
    assert (workspace / "a.txt").read_text() == "before"
    standin.queue({"text": "FINE"})
    again.sendline("ok")
    again.expect_exact("FINE")
    again.expect_exact(PROMPT)
    notes = [t for t in user_texts(standin.requests[-1]["messages"]) if t.startswith("[undone by you]")]
    assert len(notes) == 2 and "message 2" in notes[0] and "message 1" in notes[1]
    again.sendcontrol("d")
    again.expect(pexpect.EOF)


def test_rewind_asks_which_message_and_whether_the_conversation_goes_back(repl, standin, workspace):
    standin.queue(writes(("f.txt", "1")), {"text": "R-ONE"}, writes(("f.txt", "2")), {"text": "R-TWO"})
    child = repl()
    for text, done in (("make one", "R-ONE"), ("make two", "R-TWO")):
        child.sendline(text)
        child.expect_exact(done)
        child.expect_exact(PROMPT)
    child.sendline("/rewind")
    child.expect_exact("make two")
    child.expect_exact("rewind to before which message?")
    answer_question(child, "2\r")
    child.expect_exact("Also take the conversation back to before message 2?")
    answer_question(child, "y\r")
    child.expect_exact("[rewind] to before your message 2")
    child.expect_exact(PROMPT)
    assert (workspace / "f.txt").read_text() == "1"
    standin.queue({"text": "FRESH"})
    child.sendline("something else")
    child.expect_exact("FRESH")
    child.expect_exact(PROMPT)
    texts = [t for t in user_texts(standin.requests[-1]["messages"]) if not t.startswith("[")]
    assert texts == ["make one", "something else"]


def test_model_list_picks_a_model_and_the_flag_sets_one(repl, standin):
    child = repl(args=("--model", "claude-haiku-4-5"))
    assert "claude-haiku-4-5" in child.before               # the banner names it
    child.sendline("/model")
    child.expect_exact("← now")
    child.expect_exact("model [1-")
    answer_question(child, "1\r")
    child.expect_exact("[model: claude-opus-4-5")
    child.expect_exact(PROMPT)
    standin.queue({"text": "FROM-OPUS"})
    child.sendline("hi")
    child.expect_exact("FROM-OPUS")
    child.expect_exact(PROMPT)
    assert standin.requests[-1]["model"] == "claude-opus-4-5"


def test_resume_inside_the_repl_picks_another_session(repl, standin):
    standin.queue({"text": "FIRST-ANSWER"}, {"text": "SECOND-ANSWER"}, {"text": "BACK-AGAIN"})
    child = repl()
    child.sendline("the first session")
    child.expect_exact("FIRST-ANSWER")
    child.expect_exact(PROMPT)
    child.sendline("/clear")
    child.expect_exact("history cleared")                   # (typed before the new prompt, it would wait in the input)
    child.expect_exact(PROMPT)
    child.sendline("the second session")
    child.expect_exact("SECOND-ANSWER")
    child.expect_exact(PROMPT)
    child.send("/resu")
    child.expect_exact("/resume")
    child.send("\t")
    child.expect_exact("me")
    child.send("\r")
    child.expect_exact("the first session")
    child.expect_exact("Resume which one?")
    answer_question(child, "1\r")
    child.expect_exact("resumed session")
    child.expect_exact(PROMPT)
    child.sendline("where were we")
    child.expect_exact("BACK-AGAIN")
    child.expect_exact(PROMPT)
    assert user_texts(standin.requests[-1]["messages"]) == ["the first session", "where were we"]
    assert "the second session" not in json.dumps(standin.requests[-1])


def test_esc_stops_a_bang_command_and_the_model_is_told(repl, standin, workspace):
    child = repl()
    child.sendline("!echo started; sleep 20; touch never.txt")
    child.expect_exact("running bash")
    time.sleep(0.5)                                      # a person sees it run, then presses Esc
    child.send("\x1b")
    child.expect_exact("[interrupted by you]")
    child.expect_exact(PROMPT)
    assert not (workspace / "never.txt").exists()
    standin.queue({"text": "OK-STOPPED"})
    child.sendline("why did it stop?")
    child.expect_exact("OK-STOPPED")
    child.expect_exact(PROMPT)
    first = user_texts(standin.requests[-1]["messages"])[0]
    assert first.startswith("[you ran] $ echo started; sleep 20") and "[interrupted by you]" in first


@pytest.mark.parametrize("first", ["!touch pwned.txt", "/quit"])
def test_a_folded_paste_that_starts_with_bang_or_slash_is_text_for_the_model(repl, standin, workspace, first):
    standin.queue({"text": "READ-YOUR-PASTE"})
    child = repl()
    pasted = "\n".join([first] + [f"touch pwned-{n}.txt" for n in range(8)])
    child.send("\x1b[200~" + pasted + "\x1b[201~")
    child.expect_exact("[pasted 9 lines #1]")
    child.send("\r")
    child.expect_exact("READ-YOUR-PASTE")
    child.expect_exact(PROMPT)
    assert user_texts(standin.requests[-1]["messages"]) == [pasted]
    assert not list(workspace.glob("pwned*")) and child.isalive()

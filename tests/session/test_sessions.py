"""Sessions: the append-only log, replay, repair, and resuming after kill -9 at awkward moments.

The kill tests run `python agent.py` in a pseudo-terminal against the strict
stand-in, SIGKILL it mid-stream, mid-command or mid-summary, then start
`--continue` and check that the resumed history is exactly what the log
holds and that the next request is one the API accepts.
"""

from __future__ import annotations

import json
import os

import pytest

from support.helpers import ask, call, results, say, user
from session.log import (SessionBusy, LoggedHistory, SessionLog, list_sessions, load_session, open_session,
                     replay)

PROMPT = "s08 >> "


# ---- the log itself ---------------------------------------------------------------------------

def test_every_change_is_logged_and_replays_to_the_same_history(workspace):
    history = LoggedHistory([], SessionLog(workspace, header={"model": "m"}))
    c = call("bash", command="ls")
    history.append(user("hi"))
    history.append(ask(c))
    history.append(results((c, "a.txt")))
    history[-1] = {"role": "user", "content": history[-1]["content"] + [{"type": "text", "text": "and then?"}]}
    history[:] = [user("[compacted] summary")] + list(history)[1:]
    history.append(say("done"))
    loaded = load_session(history.log.path)
    assert loaded.messages == list(history) and not loaded.notices
    kinds = [json.loads(line)["t"] for line in history.log.path.read_text().splitlines()]
    assert kinds == ["session", "append", "append", "append", "extend", "replace", "append"]
    history.log.close()


def test_a_message_that_grows_logs_only_what_it_gained(workspace):
    """Results of a big batch of tool calls arrive one by one in one message: the log grows linearly."""
    history = LoggedHistory([], SessionLog(workspace))
    calls = [call("read_file", path=f"f{i}.py") for i in range(300)]
    history.append(user("read them all"))
    history.append(ask(*calls))
    done = []
    for c in calls:
        done.append({"type": "tool_result", "tool_use_id": c["id"], "content": "x" * 200})
        message = {"role": "user", "content": list(done)}
        if len(done) == 1:
            history.append(message)
        else:
            history[-1] = message
    history[0] = user("a different first message")            # not an extension: logged whole
    history.log.close()
    size = history.log.path.stat().st_size
    assert size < 300 * 600 + 50_000, size                      # linear, not 300 copies of a growing message
    kinds = [json.loads(line)["t"] for line in history.log.path.read_text().splitlines()]
    assert kinds.count("extend") == 299 and kinds[-1] == "set"
    assert load_session(history.log.path).messages == list(history)


def test_no_file_until_something_happens_and_two_sessions_never_share_one(workspace):
    a = LoggedHistory([], SessionLog(workspace))
    b = LoggedHistory([], SessionLog(workspace))
    assert list_sessions(workspace) == []
    a.append(user("from a"))
    b.append(user("from b"))
    assert a.log.path != b.log.path and len(list_sessions(workspace)) == 2
    with pytest.raises(SessionBusy):
        open_session(workspace, load_session(a.log.path))     # a still holds its lock


def test_torn_last_line_is_dropped_with_a_notice_and_cut_before_appending(workspace):
    history = LoggedHistory([], SessionLog(workspace))
    history.append(user("hi"))
    history.append(say("hello"))
    history.log.close()
    with open(history.log.path, "a") as f:
        f.write('{"t": "append", "m": {"role": "us')             # kill -9 in the middle of a write
    loaded = load_session(history.log.path)
    assert loaded.messages == [user("hi"), say("hello")]
    assert loaded.notices == ["dropped a half-written last line of the session log"]
    resumed = open_session(workspace, loaded)
    resumed.append(user("again"))
    resumed.log.close()
    again = load_session(history.log.path)
    assert again.messages == [user("hi"), say("hello"), user("again")] and not again.notices


def test_unanswered_tool_calls_are_repaired_on_resume_and_the_repair_is_logged(workspace):
    history = LoggedHistory([], SessionLog(workspace))
    c = call("bash", command="sleep 30")
    history.append(user("go"))
    history.append(ask(c))
    history.log.close()
    loaded = load_session(history.log.path)
    resumed = open_session(workspace, loaded)
    assert resumed[-1]["content"][0]["tool_use_id"] == c["id"] and resumed[-1]["content"][0]["is_error"]
    assert any("marked as interrupted" in n for n in loaded.notices)
    resumed.log.close()
    assert load_session(history.log.path).messages == list(resumed)


def test_replay_after_two_compactions_has_only_the_current_state():
    lines = [json.dumps(r) for r in [
        {"t": "session", "id": "x"}, {"t": "append", "m": user("one")}, {"t": "append", "m": say("a1")},
        {"t": "replace", "keep": 0, "tail": [user("SUMMARY 1")]}, {"t": "append", "m": say("a2")},
        {"t": "append", "m": user("two")},
        {"t": "replace", "keep": 0, "tail": [user("SUMMARY 2"), user("two")]}, {"t": "append", "m": say("a3")}]]
    loaded = replay(lines)
    assert loaded.messages == [user("SUMMARY 2"), user("two"), say("a3")] and not loaded.notices


def test_a_damaged_record_stops_the_replay_until_the_next_snapshot():
    good = [{"t": "session", "id": "x"}, {"t": "append", "m": user("one")}, {"t": "append", "m": say("a1")}]
    later = [{"t": "append", "m": user("two")}, {"t": "set", "i": 3, "m": user("two, edited")}]
    snapshot = [{"t": "replace", "keep": 0, "tail": [user("SUMMARY"), user("three")]}, {"t": "append", "m": say("a3")}]
    for bad in ['{"t": "append", "m": {"role": "us GARBAGE', "12345", "[1, 2]", '{"t": "append"}',
                '{"t": "set", "i": 99, "m": {"role": "user", "content": "x"}}']:
        lines = [json.dumps(r) for r in good] + [bad] + [json.dumps(r) for r in later]
        loaded = replay(lines)
        assert loaded.messages == [user("one"), say("a1")], bad        # the state before the damage
        assert "damaged at line 4" in loaded.notices[0]
        healed = replay(lines + [json.dumps(r) for r in snapshot])
        assert healed.messages == [user("SUMMARY"), user("three"), say("a3")]


def test_a_failed_write_is_rolled_back_reported_once_and_caught_up(workspace):
    problems = []
    history = LoggedHistory([], SessionLog(workspace), problems.append)
    history.append(user("hi"))
    good_fd = history.log.fd
    history.log.fd = os.open(history.log.path, os.O_RDONLY)           # every write now fails (EBADF)
    history.append(say("hello"))
    history.append(user("still here"))
    assert len(problems) == 1 and "cannot write" in problems[0] and history[-1] == user("still here")
    os.close(history.log.fd)
    history.log.fd = good_fd                                          # writing works again
    history.append(say("back"))
    assert "caught up" in problems[-1]
    assert load_session(history.log.path).messages == list(history)
    history.log.close()


def test_no_log_folder_no_crash(workspace):
    (workspace / ".sessions").write_text("not a folder")
    problems = []
    history = LoggedHistory([], SessionLog(workspace), problems.append)
    history.append(user("hi"))
    assert history == [user("hi")] and len(problems) == 1


def test_resume_marks_an_unanswered_request_and_restores_usage(workspace):
    history = LoggedHistory([], SessionLog(workspace))
    history.append(user("first"))
    history.append(say("answer"))
    history.note_usage({"input_tokens": 100, "cache_read_input_tokens": 2000, "output_tokens": 50}, "answer")
    history.append(user("second, never answered"))
    history.log.close()
    loaded = load_session(history.log.path)
    assert loaded.anchor == (2, 2150) and len(loaded.usages) == 1
    resumed = open_session(workspace, loaded)
    assert resumed[-1]["content"][-1]["text"].startswith("[The session stopped before")
    assert loaded.unanswered and any("/retry" in n for n in loaded.notices)
    resumed.log.close()


# ---- kill -9 and --continue, in a pseudo-terminal ----------------------------------------------

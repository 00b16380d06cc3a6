"""`s08 clean` / `/clean`: sessions older than KEEP_DAYS go with their files; the current and every
running session (its log locked by a live s08) never do — over random folder states."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session.clean import DAY, plan, remove, survey
from storage import LEGACY_OUTPUTS_DIR, SESSIONS_DIR, TASK_OUTPUTS_DIR, TRANSCRIPTS_DIR

NOW = time.time()

session_state = st.fixed_dictionaries({
    "age": st.integers(0, 90),                       # days since last used
    "running": st.booleans(),
    "transcripts": st.integers(0, 3),
    "outputs": st.integers(0, 3),
    "log": st.booleans(),                            # a session whose log is gone leaves only files
    "names_old_file": st.booleans(),                 # its log names an older-format transcript
})


def build(root: Path, states: list[dict], keep_days: int) -> tuple[Path, dict, list[int]]:
    """A workspace holding these sessions; returns (workspace, {id: state}, fds of the running sessions' locks)."""
    ws = root / f"ws{len(list(root.iterdir()))}"
    for folder in (SESSIONS_DIR, TRANSCRIPTS_DIR, LEGACY_OUTPUTS_DIR):
        (ws / folder).mkdir(parents=True)
    sessions, locks = {}, []
    for i, state in enumerate(states):
        sid = f"20261101-1010{i:02d}-{i:06x}"
        when = NOW - state["age"] * DAY - 60
        paths = [ws / TRANSCRIPTS_DIR / f"{sid}-{n + 1:03d}-snip.jsonl" for n in range(state["transcripts"])]
        paths += [ws / TASK_OUTPUTS_DIR / f"{sid}-{n + 10:03d}-bash.txt" for n in range(state["outputs"])]
        old = ws / TRANSCRIPTS_DIR / f"snipped_20261001_10101{i % 10}_{i:06x}.jsonl"
        old.write_text("{}\n")
        os.utime(old, (NOW - 100 * DAY, NOW - 100 * DAY))
        if state["log"] or state["running"]:
            log = ws / SESSIONS_DIR / f"{sid}.jsonl"
            named = f"[snipped 3 messages → .transcripts/{old.name}]" if state["names_old_file"] else "hi"
            log.write_text(json.dumps({"t": "session", "id": sid}) + "\n" + json.dumps({"t": "typed", "text": named}) + "\n")
            paths.append(log)
            if state["running"]:
                fd = os.open(log, os.O_WRONLY | os.O_APPEND)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)      # as a live s08 holds it (session/file.py)
                locks.append(fd)
        for p in paths:
            if not p.exists():
                p.write_text("x" * 100)
            os.utime(p, (when, when))
        sessions[sid] = {**state, "paths": paths, "old": old}
    (ws / LEGACY_OUTPUTS_DIR / "toolu_01ABC.txt").write_text("old output")
    return ws, sessions, locks


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(states=st.lists(session_state, min_size=1, max_size=6), keep_days=st.integers(0, 60),
       current=st.integers(0, 5))
def test_clean_never_removes_a_running_or_the_current_session(tmp_path, states, keep_days, current):
    ws, sessions, locks = build(tmp_path, states, keep_days)
    ids = list(sessions)
    current_id = ids[current % len(ids)]
    try:
        chosen = plan(survey(ws, current_id), keep_days, NOW)
        remove(chosen)
    finally:
        for fd in locks:
            os.close(fd)
    for sid, state in sessions.items():
        kept = state["running"] or sid == current_id or state["age"] < keep_days
        for p in state["paths"]:
            assert p.exists() == kept, (sid, state, p.name)
        has_log = state["log"] or state["running"]
        # an older-format file goes once it is older than KEEP_DAYS, unless a kept log names it
        assert state["old"].exists() == (state["names_old_file"] and kept and has_log), (sid, state)
    assert (ws / TRANSCRIPTS_DIR).is_dir() and (ws / SESSIONS_DIR).is_dir()


def test_a_session_resumed_while_clean_runs_is_left_whole(tmp_path):
    ws, sessions, locks = build(tmp_path, [{"age": 60, "running": False, "transcripts": 2, "outputs": 1, "log": True,
                                            "names_old_file": False}], 30)
    chosen = plan(survey(ws), 30, NOW)
    assert len(chosen.sessions) == 1
    [state] = sessions.values()
    log = next(p for p in state["paths"] if p.parent.name == SESSIONS_DIR)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)          # another s08 resumed it after the plan was made
    try:
        count, _ = remove(chosen)
    finally:
        os.close(fd)
    assert all(p.exists() for p in state["paths"]) and count == 1     # only the unnamed old file went


def test_slash_clean_shows_each_session_and_removes_old_ones_after_asking(app_for, standin, workspace):
    old = workspace / SESSIONS_DIR / "20250101-101010-aaaaaa.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps({"t": "session", "id": old.stem}) + "\n")
    snip = workspace / TRANSCRIPTS_DIR / f"{old.stem}-001-snip.jsonl"
    snip.parent.mkdir()
    snip.write_text("{}\n")
    for p in (old, snip):
        os.utime(p, (NOW - 40 * DAY, NOW - 40 * DAY))
    standin.queue({"text": "hello"})
    app, events = app_for()
    assert app.turn("hi").ok
    from commands import UNUSABLE, dispatch
    from events import CleanReport, Question
    assert dispatch(app, "/clean") == UNUSABLE and old.exists()          # nobody to ask: nothing removed
    asked = []
    app.ask = lambda q: asked.append(q) or "n"
    dispatch(app, "/clean")
    assert isinstance(asked[0], Question) and "Remove 2 file(s)?" in asked[0].text and old.exists()
    app.ask = lambda q: "y"
    dispatch(app, "/clean")
    assert not old.exists() and not snip.exists() and app.messages.log.path.exists()
    reports = [e for e in events if isinstance(e, CleanReport)]
    assert reports[-1].removed[0] == 2 and [s.current for s in reports[0].plan.survey.sessions.values()].count(True) == 1

"""s08's own files (storage/): a workspace that ships links, FIFOs, devices, hard links and huge files
in .sessions/, .transcripts/ and .task_outputs/ cannot make s08 change anything outside the workspace,
hang, or read without bound — proved over random trees, and shown for each attack of issue 28."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import signal
import stat
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ui.session_commands import session_rows, write_html
from config import load_settings
from session import clean
from session.checkpoints import Checkpoints
from session.file import SessionLog, list_sessions, session_origin
from session.replay import load_session
from session.timeline import event_detail, read_timeline
from storage import (LOG_LIMIT, SESSIONS_DIR, TASK_OUTPUTS_DIR, TRANSCRIPTS_DIR, append_transcript, bind_session,
                     finish_transcript, read_transcript, reserve_transcript, safe, write_output, write_transcript)

SID = "20250101-101010-aaaaaa"
OLD = time.time() - 400 * 86_400
FOLDERS = (SESSIONS_DIR, TRANSCRIPTS_DIR, TASK_OUTPUTS_DIR, f"{TASK_OUTPUTS_DIR}/tool-results",
           f"{SESSIONS_DIR}/{SID}.checkpoints")
NAMES = (f"{SID}.jsonl", "20250202-101010-bbbbbb.jsonl", f"{SID}-001-summary.jsonl", f"{SID}-002-bash.txt",
         "transcript_1_ab.jsonl", "a" * 64)
LOG_TEXT = (json.dumps({"t": "session", "id": SID}) + "\n" + json.dumps({"t": "typed", "text": "hi"}) + "\n"
            + json.dumps({"t": "append", "m": {"role": "user", "content": "hi"}}) + "\n"
            + "".join(json.dumps({"t": "compaction", "layer": "snip_compact", "path": path}) + "\n"
                      for path in (f".transcripts/{SID}-001-summary.jsonl", f".task_outputs/{SID}-002-bash.txt",
                                   "../outside/thesis.tex", "/etc/passwd"))
            + '{"t": "app')  # torn


# ---- the sentinel: what lies outside the workspace ---------------------------------------------------

def make_outside(root: Path) -> Path:
    out = root / "outside"
    (out / "photos").mkdir(parents=True)
    (out / "thesis.tex").write_text("\\chapter{years of work}\n")
    (out / "photos" / "a.jpg").write_bytes(b"\xff\xd8 photo")
    (out / "victim.jsonl").write_text(LOG_TEXT)            # parses as a log, and ends with a torn line
    (out / "x.jsonl").write_text(LOG_TEXT)
    os.mkfifo(out / "pipe")
    return out


def snapshot(root: Path) -> dict:
    """Every entry under `root` (not following links): its kind, mode, size, mtime and content hash."""
    found = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            p = Path(folder) / name
            s = os.lstat(p)
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(s.st_mode) else os.readlink(p) \
                if stat.S_ISLNK(s.st_mode) else ""
            found[str(p.relative_to(root))] = (stat.S_IFMT(s.st_mode), stat.S_IMODE(s.st_mode), s.st_size,
                                               s.st_mtime_ns, digest)
    return found


# ---- random workspaces -------------------------------------------------------------------------------

FOLDER_KINDS = st.sampled_from(["real", "real", "real", "absent", "link_out", "link_in", "loop", "file", "fifo"])
ENTRY_KINDS = st.sampled_from(["log", "torn", "link_out_file", "link_out_log", "link_out_dir", "dev_zero", "dev_null",
                               "fifo", "link_fifo", "hard_out", "hard_out_log", "loop", "dangling", "huge", "folder"])


@st.composite
def trees(draw):
    folders = {f: draw(FOLDER_KINDS) for f in FOLDERS}
    entries = {f: draw(st.dictionaries(st.sampled_from(NAMES), ENTRY_KINDS, max_size=4)) for f in FOLDERS}
    entries["."] = {".env": draw(ENTRY_KINDS), "timeline.html": draw(ENTRY_KINDS), ".timeline.html.tmp": draw(ENTRY_KINDS)}
    return folders, entries


def build(ws: Path, out: Path, tree) -> None:
    folders, entries = tree
    for name, what in entries["."].items():
        make_entry(ws / name, out, what)
    for folder in FOLDERS:
        p = ws / folder
        if not p.parent.is_dir() or os.path.lexists(p):
            continue
        kind = folders[folder]
        if kind == "absent":
            continue
        if kind == "link_out":
            p.symlink_to(out)
        elif kind == "link_in":
            (ws / "inside").mkdir(exist_ok=True)
            p.symlink_to(ws / "inside")
        elif kind == "loop":
            p.symlink_to(p.name)
        elif kind == "file":
            p.write_text("not a folder")
        elif kind == "fifo":
            os.mkfifo(p)
        else:
            p.mkdir()
            for name, what in entries[folder].items():
                make_entry(p / name, out, what)


def make_entry(p: Path, out: Path, what: str) -> None:
    if what in ("log", "torn"):
        p.write_text(LOG_TEXT if what == "torn" else LOG_TEXT.rsplit("\n", 1)[0] + "\n")
        os.utime(p, (OLD, OLD))
    elif what == "link_out_file":
        p.symlink_to(out / "thesis.tex")
    elif what == "link_out_log":
        p.symlink_to(out / "victim.jsonl")
    elif what == "link_out_dir":
        p.symlink_to(out / "photos")
    elif what == "dev_zero":
        p.symlink_to("/dev/zero")
    elif what == "dev_null":
        p.symlink_to("/dev/null")
    elif what == "fifo":
        os.mkfifo(p)
    elif what == "link_fifo":
        p.symlink_to(out / "pipe")
    elif what == "hard_out":
        os.link(out / "thesis.tex", p)
    elif what == "hard_out_log":
        os.link(out / "x.jsonl", p)
    elif what == "loop":
        p.symlink_to(p.name)
    elif what == "dangling":
        p.symlink_to(out / "nowhere")
    elif what == "huge":
        with open(p, "wb") as f:
            f.truncate(LOG_LIMIT + 1)          # sparse: no disk, but reading it whole would take 256 MB
    elif what == "folder":
        p.mkdir()


@contextlib.contextmanager
def watchdog(seconds: int = 120):
    """Fail (instead of hanging the run) if something waits on a FIFO; not a timing assertion."""
    def hung(*_):
        raise AssertionError("an operation on s08's own files blocked (a FIFO was waited on?)")
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def every_reader_and_writer(ws: Path) -> None:
    """Each reader and writer of the layer, each allowed to refuse (OSError) but not to do harm."""
    def attempt(fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except OSError:
            return None
    bind_session(ws, SID)
    skipped: list[str] = []
    logs = attempt(list_sessions, ws, skipped) or []
    names = [ws / f / n for f in FOLDERS for n in NAMES]
    for path in names:
        attempt(load_session, path)
        attempt(read_timeline, path)
        attempt(session_origin, path)
        attempt(read_transcript, path)
        attempt(finish_transcript, path, tokens_after=1)
        attempt(append_transcript, ws, [{"role": "user", "content": "x"}], path)
        attempt(safe.read_head, path, 100)
    for path in logs:
        attempt(load_session, path)
        log = attempt(SessionLog, ws, path.stem, existing=True)     # cuts a torn tail, appends
        if log is not None:
            attempt(log.write, {"t": "typed", "text": "more"})
            attempt(log.rewrite, [])
            log.close()
    attempt(session_rows, ws, [])
    fresh = SessionLog(ws)
    attempt(fresh.write, {"t": "typed", "text": "new"})
    fresh.close()
    attempt(write_output, ws, "bash", "output")
    attempt(write_transcript, ws, [{"role": "user", "content": "x"}])
    attempt(reserve_transcript, ws, "snip")
    cp = Checkpoints(ws)
    cp.use_log(ws / SESSIONS_DIR / f"{SID}.jsonl")
    attempt(cp._store, b"kept")
    for name in NAMES:
        attempt(cp._blob, name)
    timeline = attempt(read_timeline, ws / SESSIONS_DIR / f"{SID}.jsonl") or read_timeline_of_nothing(ws)
    for e in timeline.events:
        event_detail(timeline, ws, e.n)
    attempt(write_html, timeline, ws, ws / ".timeline.html")
    attempt(write_html, timeline, ws, ws / "timeline.html")
    load_settings(ws, environ={"HOME": str(ws.parent / "home")})
    found = clean.survey(ws)
    clean.remove(clean.plan(found, 0, now=time.time() + 10 * 86_400))


def read_timeline_of_nothing(ws: Path):
    """A timeline to draw when the tree left no readable log: the page is written all the same."""
    from session.timeline import Timeline
    return Timeline("none", ws / "none.jsonl")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=trees())
def test_no_tree_of_links_fifos_or_devices_changes_anything_outside_hangs_or_reads_without_bound(tmp_path_factory,
                                                                                                 tree):
    root = tmp_path_factory.mktemp("t")
    out = make_outside(root)
    ws = root / "ws"
    ws.mkdir()
    build(ws, out, tree)
    before = snapshot(out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with watchdog():
        every_reader_and_writer(ws)
    assert snapshot(out) == before
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024
    assert grown_mb < 100, f"reading s08's files grew the process by {grown_mb:.0f} MB"


# ---- the examples of issue 28 ------------------------------------------------------------------------

def test_a_linked_task_outputs_folder_is_refused_by_clean_and_its_files_stay(tmp_path, workspace):
    out = make_outside(tmp_path)
    (out / f"{SID}-001-bash.txt").write_text("the person's file")
    os.utime(out / f"{SID}-001-bash.txt", (OLD, OLD))
    (workspace / TASK_OUTPUTS_DIR).symlink_to(out)
    (workspace / TRANSCRIPTS_DIR).symlink_to(out / "photos")
    found = clean.survey(workspace)
    assert clean.remove(clean.plan(found, 0)) == (0, 0)
    assert (out / f"{SID}-001-bash.txt").exists() and (out / "photos" / "a.jpg").exists()
    assert any(".task_outputs is a link" in line and "not follow" in line for line in found.refused)


def test_a_folder_swapped_for_a_link_between_survey_and_removal_is_not_followed(tmp_path, workspace):
    """The race: `clean` surveyed a real folder; something swaps it for a link before the removal."""
    out = make_outside(tmp_path)
    real = workspace / TASK_OUTPUTS_DIR
    real.mkdir()
    (real / f"{SID}-001-bash.txt").write_text("old output")
    os.utime(real / f"{SID}-001-bash.txt", (OLD, OLD))
    (out / f"{SID}-001-bash.txt").write_text("the person's file")
    chosen = clean.plan(clean.survey(workspace), 0)
    assert chosen.count == 1
    real.rename(workspace / "moved")
    real.symlink_to(out)                                          # swapped after the check
    assert clean.remove(chosen) == (0, 0)
    assert (out / f"{SID}-001-bash.txt").read_text() == "the person's file"


def test_a_hard_link_to_an_outside_file_is_never_written_into_and_removing_it_keeps_the_original(tmp_path,
                                                                                                 workspace):
    out = make_outside(tmp_path)
    (workspace / SESSIONS_DIR).mkdir()
    log = workspace / SESSIONS_DIR / f"{SID}.jsonl"
    os.link(out / "x.jsonl", log)                                 # a log with a torn tail, and a second name
    with pytest.raises(safe.Refused, match="2 names"):
        SessionLog(workspace, SID, existing=True)
    assert (out / "x.jsonl").read_text() == LOG_TEXT            # not cut, nothing appended
    with pytest.raises(safe.Refused, match="2 names"):
        append_transcript(workspace, [{"role": "user", "content": "x"}], log)
    os.utime(log, (OLD, OLD))
    clean.remove(clean.plan(clean.survey(workspace), 0))
    assert not log.exists() and (out / "x.jsonl").read_text() == LOG_TEXT


def test_a_log_linked_to_dev_zero_or_a_fifo_is_skipped_with_one_line(workspace):
    (workspace / SESSIONS_DIR).mkdir()
    (workspace / SESSIONS_DIR / "20250101-101010-aaaaaa.jsonl").symlink_to("/dev/zero")
    os.mkfifo(workspace / SESSIONS_DIR / "20250101-101010-bbbbbb.jsonl")
    skipped: list[str] = []
    with watchdog():
        assert list_sessions(workspace, skipped) == []
        assert session_rows(workspace) == []
        with pytest.raises(safe.Refused, match="is a link"):
            load_session(workspace / SESSIONS_DIR / "20250101-101010-aaaaaa.jsonl")
        with pytest.raises(safe.Refused, match="a FIFO"):
            load_session(workspace / SESSIONS_DIR / "20250101-101010-bbbbbb.jsonl")
    assert sorted(skipped) == [".sessions/20250101-101010-aaaaaa.jsonl is a link, not a session log s08 wrote; skipped",
                               ".sessions/20250101-101010-bbbbbb.jsonl is a FIFO, not a session log s08 wrote; skipped"]


def test_a_huge_log_is_refused_before_it_is_read(workspace):
    (workspace / SESSIONS_DIR).mkdir()
    huge = workspace / SESSIONS_DIR / f"{SID}.jsonl"
    with open(huge, "wb") as f:
        f.truncate(LOG_LIMIT + 1)
    with pytest.raises(safe.TooLarge, match="larger than 256 MB"):
        load_session(huge)


def test_the_html_page_never_writes_through_a_shipped_temporary_link(tmp_path, workspace):
    out = make_outside(tmp_path)
    (workspace / SESSIONS_DIR).mkdir()
    log = workspace / SESSIONS_DIR / f"{SID}.jsonl"
    log.write_text(LOG_TEXT.rsplit("\n", 1)[0] + "\n")
    (workspace / ".timeline.html.tmp").symlink_to(out / "thesis.tex")
    (workspace / "timeline.html").symlink_to(out / "photos" / "a.jpg")    # the page's own name, a link too
    before = snapshot(out)
    write_html(read_timeline(log), workspace, workspace / "timeline.html")
    assert snapshot(out) == before
    page = workspace / "timeline.html"
    assert not page.is_symlink() and page.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in workspace.iterdir() if p.name.endswith(".tmp")] == [".timeline.html.tmp"]


def test_a_transcript_a_log_names_outside_s08s_folders_is_not_rewritten(tmp_path, workspace):
    out = make_outside(tmp_path)
    (out / "t.jsonl").write_text(json.dumps({"t": "header", "kind": "summary"}) + "\n")
    with pytest.raises(safe.Refused, match="not in one of s08's folders"):
        finish_transcript(workspace / ".." / "outside" / "t.jsonl", tokens_after=1)
    with pytest.raises(safe.Refused):
        finish_transcript(workspace / TRANSCRIPTS_DIR / ".." / ".." / "outside" / "t.jsonl", tokens_after=1)
    assert json.loads((out / "t.jsonl").read_text()) == {"t": "header", "kind": "summary"}


def test_a_folder_owned_by_someone_else_is_refused(workspace):
    if os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    (workspace / TASK_OUTPUTS_DIR).mkdir()
    os.chown(workspace / TASK_OUTPUTS_DIR, 4242, 4242)
    with pytest.raises(safe.Refused, match="owned by someone else"):
        write_output(workspace, "bash", "text")
    assert list((workspace / TASK_OUTPUTS_DIR).iterdir()) == []


# ---- /undo and /rewind -------------------------------------------------------------------------------

def _writes(*pairs) -> dict:
    return {"tool_calls": [{"name": "write_file", "input": {"path": p, "content": c}} for p, c in pairs]}


def _said(events) -> str:
    return "\n".join(getattr(e, "text", "") for e in events)


@pytest.mark.scripted
def test_undo_through_a_link_never_writes_the_workspace_settings_file(tmp_path, workspace, standin):
    from commands import dispatch
    from support.agents import base_env
    from support.helpers import make_app
    (workspace / ".env").write_text("# the person's settings\n")
    (workspace / "a.txt").write_text("A0")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(_writes(("a.txt", "the model's text")), {"text": "done"})
    assert app.turn("change it").ok
    (workspace / "a.txt").unlink()
    (workspace / "a.txt").symlink_to(".env")                 # a command swapped the file for a link
    dispatch(app, "/undo")
    assert (workspace / ".env").read_text() == "# the person's settings\n"
    assert "a.txt: not restored (.env is s08's own settings file" in _said(events)
    app.close()


@pytest.mark.scripted
def test_undo_leaves_a_file_that_changed_since_and_is_too_large_to_keep(tmp_path, workspace, standin):
    from commands import dispatch
    from session.checkpoints import MAX_KEPT_BYTES
    from support.agents import base_env
    from support.helpers import make_app
    (workspace / "big.txt").write_text("v0")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(_writes(("big.txt", "v1"), ("new.txt", "made by the model")), {"text": "done"})
    assert app.turn("change it").ok
    later = b"v1" + b"eleven megabytes of later work\n" * (MAX_KEPT_BYTES // 30)
    (workspace / "big.txt").write_bytes(later)              # the person's work after the model's write
    (workspace / "new.txt").write_bytes(later)
    dispatch(app, "/undo")
    assert (workspace / "big.txt").read_bytes() == later and (workspace / "new.txt").read_bytes() == later
    said = _said(events)
    assert "big.txt: left as it is: it changed since s08 wrote it and is larger than 10 MB" in said
    assert "new.txt: left as it is: it changed since s08 wrote it and is larger than 10 MB" in said
    app.close()



@pytest.mark.scripted
def test_undo_never_puts_back_or_removes_through_a_link_to_another_file_inside(tmp_path, workspace, standin):
    from commands import dispatch
    from support.agents import base_env
    from support.helpers import make_app
    (workspace / "a.txt").write_text("A0")
    (workspace / "keep.py").write_text("the person's code")
    app, events = make_app(workspace, base_env(tmp_path, standin))
    standin.queue(_writes(("a.txt", "A1"), ("new.txt", "made by the model")), {"text": "done"})
    assert app.turn("change it").ok
    for name in ("a.txt", "new.txt"):
        (workspace / name).unlink()
        (workspace / name).symlink_to("keep.py")
    dispatch(app, "/undo")
    assert (workspace / "keep.py").read_text() == "the person's code"
    said = _said(events)
    assert "a.txt: not restored (a.txt is now a link (to keep.py); not following it)" in said
    assert "new.txt: not restored (new.txt is now a link (to keep.py); not following it)" in said
    app.close()


def test_a_log_swapped_for_a_link_after_it_was_listed_is_not_followed(tmp_path, workspace):
    out = make_outside(tmp_path)
    (workspace / SESSIONS_DIR).mkdir()
    log = workspace / SESSIONS_DIR / f"{SID}.jsonl"
    log.write_text(LOG_TEXT)
    [listed] = list_sessions(workspace)
    log.unlink()
    log.symlink_to(out / "x.jsonl")                               # swapped between the listing and the use
    with pytest.raises(OSError, match="is a link"):
        load_session(listed)
    with pytest.raises(OSError, match="is a link"):
        SessionLog(workspace, SID, existing=True)
    assert (out / "x.jsonl").read_text() == LOG_TEXT


def test_a_log_path_names_only_files_in_s08s_own_folders(workspace):
    assert safe.own_path(".transcripts/a.jsonl", workspace) == workspace / ".transcripts" / "a.jsonl"
    for bad in ("../outside/.transcripts/a.jsonl", "/etc/.transcripts/a.jsonl", "notes/a.jsonl",
                ".transcripts/../../a.jsonl", ".transcripts"):
        with pytest.raises(safe.Refused):
            safe.own_path(bad, workspace)


def test_no_other_way_in_modules_that_handle_s08s_files_use_storage_for_every_file_call():
    """The modules that read or write .sessions/, .transcripts/, .task_outputs/, the page or the settings
    files open, list, replace and remove files only through storage/ (the workspace's own files go
    through tools/safe_fs.py: checkpoints' dir_fd unlink)."""
    import re
    root = Path(__file__).resolve().parents[2]
    direct = re.compile(r"(?<![\w.])open\(|(?<!safe)\.(?:read_bytes|read_text|write_text|write_bytes|iterdir|glob)\("
                        r"|os\.(?:replace|rename|remove|truncate|listdir)\(|shutil\.rmtree|(?<!os)\.unlink\(")
    modules = [*sorted((root / "session").glob("*.py")), *sorted((root / "compaction").glob("*.py")),
               *(root / name for name in ("cli.py", "ui/session_commands.py", "app.py", "loop/model_choice.py", "loop/hook_events.py", "config.py",
                                          "tools/output_sink.py", "access/credentials.py", "access/user_file_guard.py",
                                          "ui/render.py", "ui/sessions_view.py", "ui/timeline_view.py"))]
    found = [f"{p.relative_to(root)}:{n}: {line.strip()}" for p in modules
             for n, line in enumerate(p.read_text().splitlines(), 1) if direct.search(line)]
    assert found == []


def test_clean_removes_only_what_s08_could_have_written_in_its_folders(workspace):
    folder = workspace / TASK_OUTPUTS_DIR
    folder.mkdir()
    for name in ("thesis.tex", "photo.jpg", "tool-output-old.txt"):
        (folder / name).write_text("x")
        os.utime(folder / name, (OLD, OLD))
    clean.remove(clean.plan(clean.survey(workspace), 30))
    assert sorted(p.name for p in folder.iterdir()) == ["photo.jpg", "thesis.tex"]


def test_a_sessions_folder_swapped_for_a_link_while_a_session_runs_gets_nothing_written_outside(tmp_path, workspace):
    out = make_outside(tmp_path)
    before = snapshot(out)
    log = SessionLog(workspace, SID)
    log.write({"t": "typed", "text": "one"})
    (workspace / SESSIONS_DIR).rename(workspace / "moved")
    (workspace / SESSIONS_DIR).symlink_to(out)                    # swapped under the running session
    assert log.tampered()
    with pytest.raises(OSError, match="is a link"):
        log.rewrite([{"t": "typed", "text": "two"}])
    log.close()
    assert snapshot(out) == before

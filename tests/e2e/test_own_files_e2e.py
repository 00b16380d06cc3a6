"""A cloned repository that ships links, FIFOs and devices where s08 keeps its own files, against a new
agent.py: `s08 clean --yes`, `s08 inspect --html`, `s08 sessions` and `-c` refuse with one line and
change nothing outside the workspace (issue 28, class 2). Each child runs with its address space capped,
so a reader without a bound fails instead of taking the machine's memory."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time

from support.agents import base_env, run_agent

OLD = time.time() - 400 * 86_400
SID = "20250101-101010-aaaaaa"


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def s08(*args, env, cwd, timeout=60):
    return run_agent(*args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                     stdin=subprocess.DEVNULL, preexec_fn=capped)


def outside_files(tmp_path):
    out = tmp_path / "home-files"
    (out / "photos").mkdir(parents=True)
    (out / "thesis.tex").write_text("\\chapter{years of work}\n")
    (out / "photos" / "holiday.jpg").write_bytes(b"\xff\xd8 photo")
    for p in (out / "thesis.tex", out / "photos" / "holiday.jpg"):
        os.utime(p, (OLD, OLD))
    return out


def test_clean_yes_never_deletes_through_shipped_folder_links(tmp_path, workspace):
    out = outside_files(tmp_path)
    (workspace / ".task_outputs").symlink_to(out)
    (workspace / ".transcripts").symlink_to(out / "photos")
    done = s08("clean", "--yes", "-w", str(workspace), env={**base_env(tmp_path), "COLUMNS": "200"}, cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert (out / "thesis.tex").read_text() == "\\chapter{years of work}\n"
    assert (out / "photos" / "holiday.jpg").exists()
    assert ".task_outputs is a link" in done.stdout and ".transcripts is a link" in done.stdout
    assert "Traceback" not in done.stderr


def test_inspect_html_never_writes_through_a_shipped_temporary_link(tmp_path, workspace):
    out = outside_files(tmp_path)
    (workspace / ".sessions").mkdir()
    (workspace / ".sessions" / f"{SID}.jsonl").write_text(json.dumps({"t": "session", "id": SID}) + "\n")
    (workspace / ".timeline.html.tmp").symlink_to(out / "thesis.tex")
    done = s08("inspect", "--html", "timeline.html", env=base_env(tmp_path), cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert (out / "thesis.tex").read_text() == "\\chapter{years of work}\n"
    page = workspace / "timeline.html"
    assert not page.is_symlink() and page.read_text().startswith("<!DOCTYPE html>")


def test_sessions_and_inspect_skip_a_log_linked_to_dev_zero_and_a_fifo_with_one_line(tmp_path, workspace):
    sessions = workspace / ".sessions"
    sessions.mkdir()
    (sessions / f"{SID}.jsonl").write_text(json.dumps({"t": "session", "id": SID}) + "\n"
                                           + json.dumps({"t": "typed", "text": "the real one"}) + "\n")
    os.utime(sessions / f"{SID}.jsonl", (OLD, OLD))
    (sessions / "20991231-235959-zzzzzz.jsonl").symlink_to("/dev/zero")
    os.mkfifo(sessions / "20991231-235959-yyyyyy.jsonl")
    env = {**base_env(tmp_path), "COLUMNS": "200"}
    listed = s08("sessions", env=env, cwd=workspace)
    assert listed.returncode == 0, listed.stderr
    assert SID in listed.stdout and "the real one" in listed.stdout
    skipped = [line for line in listed.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 2 and any("is a link" in s for s in skipped) and any("is a FIFO" in s for s in skipped)
    shown = s08("inspect", env=env, cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    assert SID in shown.stdout


def test_continue_skips_a_fifo_and_a_dev_zero_log_and_resumes_the_real_session(tmp_path, workspace, standin):
    env = base_env(tmp_path, standin)
    standin.queue({"text": "FIRST"}, {"text": "SECOND"})
    first = s08("-p", "remember the word kiwi", env=env, cwd=workspace)
    assert first.returncode == 0, first.stderr
    sessions = workspace / ".sessions"
    (sessions / "20991231-235959-zzzzzz.jsonl").symlink_to("/dev/zero")
    os.mkfifo(sessions / "20991231-235959-yyyyyy.jsonl")
    again = s08("-c", "-p", "what was the word?", env=env, cwd=workspace)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "SECOND\n"
    assert "remember the word kiwi" in json.dumps(standin.requests[-1]["messages"])
    assert sum("skipped" in line for line in again.stderr.splitlines()) == 2


def test_a_run_with_shipped_folder_links_writes_nothing_outside_and_says_so_once(tmp_path, workspace, standin):
    out = outside_files(tmp_path)
    for name in (".sessions", ".transcripts", ".task_outputs"):
        (workspace / name).symlink_to(out)
    before = sorted(p.name for p in out.rglob("*"))
    standin.queue({"text": "Looking.", "tool_calls": [{"name": "bash", "input": {"command": "seq 1 200000"}}]},
                  {"text": "DONE"})
    done = s08("-p", "count", env=base_env(tmp_path, standin, persist_threshold=1000), cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "DONE\n"
    assert sorted(p.name for p in out.rglob("*")) == before           # no log, no output written there
    assert ".sessions is a link" in done.stderr and "Traceback" not in done.stderr

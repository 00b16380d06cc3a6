"""The bash tool under pressure: redaction of its streamed output (spill file included), a disk that
refuses the spill file, processes a command leaves running, and timeout messages that claim only
what was checked."""

from __future__ import annotations

import os
import re
import time
from types import SimpleNamespace

import pytest

from tools import ToolContext, run_tool
from tools.background import Jobs, alive
from tools.output_sink import MEMORY_CAP

KEY = "sk-ant-api03-bash-hardening-key-0123456789abcdef"


@pytest.fixture
def jobs():
    tracker = Jobs()
    yield tracker
    tracker.end_all()


@pytest.fixture
def ctx(workspace, jobs):
    return ToolContext(workspace=workspace, settings=SimpleNamespace(bash_timeout=3.0), secrets=(KEY,), jobs=jobs)


def bash(ctx, command):
    return run_tool("bash", {"command": command}, ctx)


def spill_file(workspace, content: str):
    path = re.search(r"Full output saved to: (\S+)", content).group(1)
    return (workspace / path).read_bytes()


def test_a_key_in_a_small_output_is_redacted(ctx, monkeypatch):
    monkeypatch.setenv("PLANTED", KEY)
    r = bash(ctx, "echo $PLANTED; printf %s \"$PLANTED\" | rev | rev")
    assert KEY not in r.content and r.content.count("[redacted]") == 2


@pytest.mark.parametrize("split", [1, 7, 4095, 65535, 65536])
def test_a_key_split_across_chunks_of_a_huge_output_is_redacted_in_the_spill_file(ctx, workspace, split):
    # the key straddles a read boundary at `split` bytes into a chunk, and sits in the middle and at the end
    script = (f"head -c {MEMORY_CAP + split - 10} /dev/zero | tr '\\0' x; printf %s {KEY}; "
              f"head -c {MEMORY_CAP} /dev/zero | tr '\\0' y; printf '%s' {KEY}")
    r = bash(ctx, script)
    saved = spill_file(workspace, r.content)
    assert KEY.encode() not in saved and saved.count(b"[redacted]") == 2
    assert KEY not in r.content and saved.endswith(b"y[redacted]")


def test_a_full_disk_keeps_the_head_and_the_tail_with_a_note(ctx, workspace, monkeypatch):
    import tools.output_sink as sink

    def full_disk(_workspace, folder, kind, suffix):
        path = folder / f"{kind}{suffix}"
        return path, os.open("/dev/full", os.O_WRONLY)       # every write: ENOSPC
    monkeypatch.setattr(sink, "create_session_file", full_disk)
    r = bash(ctx, f"echo FIRST; seq 1 {MEMORY_CAP // 2}; echo LAST")
    assert not r.is_error and "could not be saved" in r.content and "No space left on device" in r.content
    assert r.content.startswith("FIRST\n1\n2\n") and r.content.rstrip().endswith("LAST\n[exit code 0]")
    assert len(r.content) < 40_000


def test_a_workspace_that_refuses_the_spill_folder_still_returns_head_and_tail(ctx, workspace):
    (workspace / ".task_outputs").write_text("not a folder")       # mkdir fails, as on a read-only disk
    r = bash(ctx, f"echo FIRST; seq 1 {MEMORY_CAP // 2}; echo LAST")
    assert not r.is_error and "could not be saved" in r.content
    assert "FIRST" in r.content and "LAST" in r.content and "[exit code 0]" in r.content


@pytest.mark.parametrize("how", ["sleep 60 &", "nohup sleep 60 >/dev/null 2>&1 &", "setsid sleep 60 &",
                                 "(setsid sh -c 'sleep 60 & exit' &);"])
def test_processes_left_running_are_listed_and_ended_at_exit(ctx, jobs, how):
    r = bash(ctx, f"{how} echo started")
    assert "still running in the background" in r.content and "sleep 60" in r.content
    left = list(jobs.known)
    assert left and all(alive(p) for p in left)
    ended = jobs.end_all()
    assert {p.pid for p in left} <= {p.pid for p in ended}
    assert not any(alive(p) for p in left)


@pytest.fixture
def quick(workspace, jobs):
    return ToolContext(workspace=workspace, settings=SimpleNamespace(bash_timeout=1.0), secrets=(KEY,), jobs=jobs)


def test_a_timeout_kills_what_the_command_moved_to_another_session_and_says_so(quick, workspace, jobs):
    r = bash(quick, "setsid sleep 60 & echo $! > bg.pid; sleep 60")
    assert r.is_error and "timed out after 1s" in r.content
    assert "killed the command's process group and 1 process it had moved out of it" in r.content
    pid = int((workspace / "bg.pid").read_text())
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z" \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    assert not jobs.known


def test_a_plain_timeout_claims_only_the_group(quick):
    r = bash(quick, "sleep 60")
    assert r.content.endswith("[timed out after 1s; killed the command's process group]")

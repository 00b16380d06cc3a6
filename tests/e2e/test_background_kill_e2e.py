"""kill -9 while a summary is prepared in the background, or applied, then --continue.

`python agent.py -p "read every Python file one by one"` runs against the strict stand-in with a
slow summary (its replies fast), with a small CONTEXT_LIMIT so summaries are prepared and applied
several times. It is killed (SIGKILL) at a moment read from its own session log: while a summary
is being prepared, once one is ready but not applied, right as one is applied, or at a random time
once summaries are being prepared.
Then the log is checked record by record, and `--continue` runs another request that reads more
files (so the resumed session compacts too):
  - the replayed history is one the API accepts (the stand-in's validator; the stand-in also
    refuses any invalid request the resumed s08 sends — the fixture fails the test then);
  - every "prepare" record names the prefix of the history at that point (its hash);
  - every "applied" record follows a "prepared" one for the same prefix, and the prefix it replaces is
    still that one (only block contents rewritten by a cheap layer): never a stale summary; the
    "replace" that follows begins with that summary (or with a summary that topped it up);
  - the resumed s08 ends its request normally (exit 0).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from compaction.background import covers, history_hash
from compaction.markers import COMPACTED_PREFIX, SUMMARY_PREFIX
from support.agents import base_env, popen_agent, run_agent
from session.log import list_sessions, load_session
from session.replay import _record_ok, apply_record
from standin import Brain, validate_request

pytestmark = pytest.mark.slow
FILES = 30


def make_project(workspace: Path) -> None:
    rng = random.Random(21)
    for i in range(FILES):
        lines = [f'"""module {i} of the project."""']
        lines += [f"def handler_{i}_{n}(x):\n    return x * {rng.randint(1, 99)} + {rng.random():.6f}" for n in range(60)]
        (workspace / f"mod_{i:02d}.py").write_text("\n".join(lines) + "\n")


def records(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def check_log(path: Path) -> dict[str, int]:
    """Replay the log record by record and check every background record against the history."""
    messages: list[dict] = []
    started: dict[int, list[dict]] = {}          # n → the prefix when the summary was started
    prepared: dict | None = None
    expect_summary: str | None = None
    topped_up = False
    seen = {"prepare": 0, "prepared": 0, "applied": 0, "dropped": 0}
    for r in records(path):
        if not _record_ok(r, len(messages)):
            continue
        kind = r["t"]
        if kind in seen:
            seen[kind] += 1
        if kind == "prepare":
            assert history_hash(messages[:r["n"]]) == r["hash"], "a summary was started of a history that was not"
            started = {r["n"]: messages[:r["n"]]}
            prepared = None
        elif kind == "prepared":
            prepared = r
        elif kind == "dropped":
            prepared = None
        elif kind == "applied":
            assert prepared is not None and prepared["n"] == r["n"], "applied a summary that was not prepared"
            snapshot = started.get(r["n"])
            if snapshot is not None:       # started in this process (a resumed one is checked by its hash)
                assert covers(snapshot, messages), "applied a stale summary"
            assert history_hash(messages[:r["n"]]) == prepared["hash"] or snapshot is not None
            expect_summary, prepared, topped_up = SUMMARY_PREFIX + prepared["text"], None, False
        elif kind == "compaction" and expect_summary is not None and str(r.get("text", "")).startswith("[compacted]"):
            topped_up = True                   # still over the limit: a blocking summary topped it up
        elif kind == "replace" and expect_summary is not None:
            first = r["tail"][0]["content"]           # the prepared summary, or a top-up summary of it
            assert r["keep"] == 0 and first[0]["text"].startswith(COMPACTED_PREFIX)
            assert topped_up or first[1]["text"] == expect_summary
            expect_summary = None
        messages = apply_record(messages, r)
    return seen


def wait_for(path_of, kind: str, timeout: float = 60) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        path = path_of()
        if path is not None and any(r.get("t") == kind for r in records(path)):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("moment,seed", [("prepare", 1), ("prepare", 2), ("prepared", 3), ("applied", 4),
                                         ("random", 5), ("random", 6)])
def test_kill_9_around_a_background_summary_then_continue(tmp_path, workspace, standin, moment, seed):
    make_project(workspace)
    standin.brain = Brain()
    standin.reply_latency, standin.summary_latency = 0.3, 0.8
    env = base_env(tmp_path, standin, context_limit=9000, prepare_at=0.5, background_compact="on")
    proc = popen_agent("-p", "read every Python file one by one", env=env, cwd=workspace,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def log_path():
        found = list_sessions(workspace)
        return found[0] if found else None
    rng = random.Random(seed)
    try:
        if moment == "random":           # any moment once summaries are prepared
            assert wait_for(log_path, "prepare"), "no summary was prepared"
            time.sleep(rng.uniform(0, 3.0))
        else:
            assert wait_for(log_path, moment), f"no {moment!r} record appeared"
            time.sleep(rng.uniform(0, 0.3) if moment == "prepare" else 0)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    path = log_path()
    assert path is not None
    check_log(path)
    loaded = load_session(path)
    validate_request({"model": "m", "max_tokens": 10, "messages": loaded.messages})
    standin.brain = Brain()
    done = run_agent("-c", "-p", "read mod_00.py and mod_01.py and mod_02.py and mod_03.py", env=env,
                     cwd=workspace, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = check_log(path)
    assert seen["prepare"] >= 1
    final = load_session(path)
    validate_request({"model": "m", "max_tokens": 10, "messages": final.messages})

"""Issue 32's stuck session resumed: every message its own `s08 -p` process, each but the first resuming
the last (`-c`) — or, from some message on, the REPL resuming it (`s08 -c`, on pipes) — at a 4,096-token
window that answers an overflow with silence (standin/local_window.py) and a summarizer whose summary is
not smaller (Brain(summary="restate")). Three parts of a build log, then short questions.

A new process has answered nothing yet, so a first silence had nothing in this process to be larger than:
before the fix, the first resumed run to meet the overflow failed with "The endpoint answered with
nothing", and so did every later one (1,100-token parts). With 1,200-token parts the window first cut an
answer, at ~4,093 tokens in s08's estimate: below the smallest accepted window, so it was ignored and the
next run overflowed the same way. Every message must get its answer, and once the window has shown itself
(an overflow or a cut answer, in whichever run) no request may overflow again."""

from __future__ import annotations

import json

import pytest

from standin import Brain
from standin.local_window import LocalWindow
from support.agents import base_env, run_agent
from support.build_log import build_log_part

N_CTX = 4_096
QUESTIONS = ["what failed?", "which module warned first?", "how many warnings?", "thanks, anything else?"]


@pytest.mark.parametrize("part_tokens, repl_from", [(1_100, None), (1_200, None), (1_100, 2)])
def test_resumed_runs_at_a_small_window_never_get_stuck(tmp_path, workspace, standin, part_tokens, repl_from):
    """`repl_from`: the message from which the rest is typed into one resumed REPL (None: all `-p`)."""
    server = standin.brain = LocalWindow(N_CTX, Brain(summary="restate"), overflow="empty")
    typed = [build_log_part(n, part_tokens, sep=" ; ") for n in (1, 2, 3)] + QUESTIONS
    env = base_env(tmp_path, standin)
    runs = [[text] for text in typed[:repl_from]] + ([typed[repl_from:]] if repl_from is not None else [])
    outcomes = []
    for i, run in enumerate(runs):
        resume = ["-c"] if i else []
        if len(run) == 1 and (repl_from is None or i < repl_from):
            done = run_agent(*resume, "-p", run[0], env=env, cwd=workspace, capture_output=True, text=True,
                             timeout=300)
        else:
            done = run_agent(*resume, env=env, cwd=workspace, input="".join(t + "\n" for t in run),
                             capture_output=True, text=True, timeout=300)
        outcomes.append((done.returncode, done.stdout[:60], done.stderr[-800:]))
        report = f"run {i}: {outcomes}\nevery request (prompt tokens, what the server did): {server.seen}"
        assert done.returncode == 0, report
        answers = [a for a in done.stdout.split("You said: ") if a.strip()]
        assert len(answers) == len(run), report
    met = next(i for i, (_size, what) in enumerate(server.seen) if what != "answered")
    assert [what for _size, what in server.seen[met + 1:] if what == "over"] == [], server.seen
    records = [json.loads(line) for log in (workspace / ".sessions").glob("*.jsonl")
               for line in log.read_text().splitlines()]
    assert [r for r in records if r.get("t") == "window"], "the window learned is in the session log"

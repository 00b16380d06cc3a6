"""Issue 32's 30-turn session at the smallest window s08 accepts (compaction/window.py's MIN_WINDOW), in
a real terminal: pastes (one larger than half the window), reads and commands, CONTEXT_WINDOW told,
everything else default, against a server with exactly that window (standin/local_window.py: silence
past it, as llama.cpp behind a gateway) and a summarizer whose summary is not smaller than the history
(Brain(summary="restate")).

s08 must never send a request that does not fit — the stand-in records every prompt's size — nor one
that leaves no room for the answer (the window would cut it short), and every turn must come back
with its answer. The test waits for each turn's answer (or the status line that ends a turn without one) and
the prompt, never for time.
"""

from __future__ import annotations

import re

import pexpect
import pytest

from compaction.window import MIN_WINDOW
from standin import Brain, count_request_tokens
from standin.local_window import LocalWindow
from support.agents import base_env, spawn_agent
from support.build_log import build_log_part

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
PARTS = 8
TURN_MOST = 120          # seconds one turn may take at most on a busy machine (a bound, not a measure)
TOOL_ANSWER = "Tool results:"
TURN_ENDED = r"context [\d,]+/[\d,]+ · "      # the status line after every turn (ui/reports.py)


def paste(n: int, tokens: int) -> tuple[str, str]:
    return "paste", build_log_part(n, tokens, of=PARTS)


def said(text: str) -> tuple[str, str]:
    return "say", text


def tool(text: str) -> tuple[str, str]:
    return "tool", text


SESSION = [
    paste(1, 1_200), said("what failed?"), tool("read src/engine.py"), tool("run ls"),
    paste(2, 1_200), said("which module warned first?"), tool("read notes.md"), tool("run seq 1 500"),
    paste(3, 1_200), said("how many warnings?"), tool("read data.csv"), tool("run wc -l data.csv"),
    paste(4, 2_600), said("what is in the saved part?"), tool("read src/engine.py and notes.md"),
    tool("run cat data.csv"), paste(5, 600), said("any errors?"), tool("read build_notes.txt"),
    tool("run false"), paste(6, 1_200), said("next step?"), tool("read data.csv"), tool("run seq 1 2000"),
    paste(7, 1_200), said("ok"), tool("read notes.md"), tool("run echo done"), paste(8, 1_200), said("thanks"),
]


def make_workspace(workspace) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "engine.py").write_text("".join(f"def step_{i}(x):\n    return x + {i}\n\n"
                                                         for i in range(60)))
    (workspace / "notes.md").write_text("".join(f"- note {i}: the engine module warned about tmp{i}\n"
                                                for i in range(40)))
    (workspace / "data.csv").write_text("module,warnings,seconds\n" + "".join(f"module_{i:05d},{i % 7},{i / 10}\n"
                                                                          for i in range(400)))


def test_thirty_turns_at_the_minimum_window_always_fit_and_always_answer(tmp_path, workspace, standin):
    assert len(SESSION) == 30
    make_workspace(workspace)
    server = standin.brain = LocalWindow(MIN_WINDOW, Brain(summary="restate"), overflow="empty")
    child = spawn_agent(base_env(tmp_path, standin, context_window=MIN_WINDOW), workspace, timeout=TURN_MOST)
    child.expect_exact(PROMPT)
    for number, (kind, text) in enumerate(SESSION, 1):
        if kind == "paste":
            child.send("\x1b[200~" + text + "\x1b[201~")
            child.expect_exact("[pasted ")
            child.send("\r")
            # the answer echoes the paste, or the preview s08 sent of one too large for the window
            marker = rf"You said: [^\n]{{0,40}}?(?:{re.escape(text.splitlines()[0])}|input was too large to send whole)"
        else:
            child.sendline(text)
            marker = re.escape(f"You said: {text}" if kind == "say" else TOOL_ANSWER)
        got = child.expect([marker, TURN_ENDED])
        assert got == 0, f"turn {number} ({text[:40]!r}) came back without its answer:\n" \
                         f"{child.logfile_read.getvalue()[-3000:]}"
        child.expect_exact(PROMPT)
        assert not server.overflows and not server.cut, (
            f"turn {number}: prompts over the window of {MIN_WINDOW:,} tokens {server.overflows}, answers the "
            f"window cut short {server.cut}; every prompt {server.sizes}")
    sent = [count_request_tokens(r) for r in standin.requests]          # what the stand-in recorded
    assert len(sent) >= len(SESSION) and max(sent) <= MIN_WINDOW and sent == server.sizes
    child.sendcontrol("d")
    child.expect(pexpect.EOF)

"""How sub-agents look: the question says which one asks, and what a child or a definition wrote
(descriptions, steps) reaches the terminal only made safe."""

from __future__ import annotations

import io
import time

from rich.console import Console

from approvals.policy import Request
from events import TaskFinished, TaskProgress
from ui.approve import question_lines
from ui.render import Renderer

HOSTILE = "look\x1b]0;pwned\x07\x1b[2J here"


def test_the_question_names_the_sub_agent_that_asks():
    lines = question_lines(Request("bash", "command", "touch x", asker="task 2 (general: fix it)"), 100)
    assert lines[0].plain == "[task 2 (general: fix it) asks]"
    assert lines[1].plain.startswith("? run this command?")
    assert question_lines(Request("bash", "command", "touch x"), 100)[0].plain.startswith("? run this command?")


def test_live_lines_and_the_end_line_are_made_safe():
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True)
    renderer = Renderer(console)
    renderer(TaskProgress([(1, "explore", HOSTILE, "bash grep \x1b[31m -rn x", time.monotonic())]))
    renderer.activity.live.refresh() if renderer.activity.live is not None else None
    renderer(TaskFinished(1, "explore", HOSTILE, "done", 1234, 0.01, 2.5, ".transcripts/x-001-task.jsonl", 3))
    renderer.finish()
    text = out.getvalue()
    assert "task 1 explore" in text and "done · 3 calls · 1,234 tokens · $0.0100 · 2.5s" in text
    assert "\x1b]0;" not in text and "\x1b[2J" not in text and "\x07" not in text

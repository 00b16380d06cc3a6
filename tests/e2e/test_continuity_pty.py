"""Continuity end to end, as a person meets it: ten turns in a real terminal, each giving one standing
instruction and touching files, a small CONTEXT_LIMIT so the agent compacts again and again, and a
summary that mentions nothing. The last request still holds every instruction and every file — and
so does the first request after `kill -9` and `--continue`."""

from __future__ import annotations

import json
import signal

import pexpect
import pytest

from support.agents import base_env, spawn_agent
from support.helpers import Model, is_summary_request

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
INSTRUCTIONS = ["never touch legacy/", "keep tabs in the Makefile", "所有新注释都用中文写", "run pytest -q before you finish",
                "no new dependencies", "keep functions under 60 lines", "use pathlib, not os.path",
                "answer in one short paragraph", "do not rename public functions", "log errors, never print them"]


def files_of(turn: int) -> list[str]:
    return [f"pkg{turn % 3}/mod_{turn}.py", f"docs/notes_{turn}.md"]


def check(request: dict) -> None:
    text = json.dumps(request["messages"], ensure_ascii=False)
    missing = [i for i in INSTRUCTIONS if i not in text] + [p for t in range(10) for p in files_of(t) if p not in text]
    assert not missing, f"the request no longer holds: {missing}"


def test_every_instruction_and_file_survives_compactions_and_a_kill(tmp_path, workspace, standin):
    replies = []
    for turn in range(10):
        source, notes = files_of(turn)
        (workspace / source).parent.mkdir(exist_ok=True)
        (workspace / source).write_text(f"# module {turn}\n" + "def f(x):\n    return x + 1\n" * 400)
        replies += [{"tool_calls": [{"name": "read_file", "input": {"path": source}},
                                    {"name": "write_file", "input": {"path": notes, "content": f"notes {turn}\n"}}]},
                    {"text": f"done with turn {turn}"}]
    model = standin.brain = Model(*replies, summaries=[{"text": "The work continued."}])
    env = base_env(tmp_path, standin, CONTEXT_LIMIT=8000)
    child = spawn_agent(env, workspace, timeout=30)
    child.expect_exact(PROMPT)
    for turn, instruction in enumerate(INSTRUCTIONS):
        child.sendline(f"from now on: {instruction}")
        child.expect_exact(f"done with turn {turn}")
        child.expect_exact(PROMPT)
    assert model.summary_calls >= 3
    check([r for r in standin.requests if not is_summary_request(r)][-1])

    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)
    standin.brain = Model({"text": "RESUMED-OK"})
    again = spawn_agent(env, workspace, "--continue", timeout=30)
    again.expect_exact(PROMPT)
    again.sendline("what are my rules?")
    again.expect_exact("RESUMED-OK")
    again.expect_exact(PROMPT)
    check(standin.requests[-1])
    again.sendcontrol("d")
    again.expect(pexpect.EOF)

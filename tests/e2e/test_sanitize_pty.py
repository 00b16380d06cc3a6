"""Injected control sequences through every path to a real pseudo-terminal: none comes out raw.

A scripted model (the stand-in) puts hypothesis' hostile strings in its text, in a tool's name and
arguments, in a command's output (live tail and result), in a file it writes (the approval question's
diff), in a server error message; a planted session log puts them in the --resume picker and the
resumed view; -p and piped runs put them on stderr. Everything the terminal received is checked by
tests/attacks.py: s08's own styling is there, no injected byte is.
"""

from __future__ import annotations

import base64
import itertools
import json

import pexpect
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from support.attacks import injected, raw_injections
from support.agents import base_env, run_agent, spawn_agent
from support.helpers import answer_question

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
FEW = settings(suppress_health_check=list(HealthCheck),
               phases=(Phase.explicit, Phase.reuse, Phase.generate))     # a failure is shown as found: shrinking
                                                                          # through a terminal would take minutes


def _printf(text: str) -> str:
    return f"printf '%s' '{base64.b64encode(text.encode()).decode()}' | base64 -d"


def test_the_live_repl(repl, standin, workspace):
    child = repl(approval_mode="default")
    numbers = itertools.count()

    # two hostile strings in each place per example (each approval costs a person's pause, about a
    # second): 3 examples put as many strings through every path as 6 examples of one each
    @settings(FEW, max_examples=3)
    @given(st.lists(injected, min_size=16, max_size=16).map(lambda s: [a + b for a, b in zip(s[:8], s[8:])]))
    def check(s):
        n = next(numbers)
        start = len(child.logfile_read.getvalue())
        standin.queue({"text": s[0], "tool_calls": [
            {"name": "t" + s[1], "input": {"command": s[2], "k" + s[3]: s[4]}},
            {"name": "bash", "input": {"command": _printf(s[5])}},
            {"name": "write_file", "input": {"path": f"planted_{n}.txt", "content": s[6]}}]},
            {"text": f"END-{n}\n\n{s[7]}"}, {"error": 400, "message": f"ERR-{n} {s[7]}"})
        child.sendline(f"go {n}")
        child.expect_exact("? run this command?")
        child.expect_exact("every command this session")
        answer_question(child, "y")
        child.expect_exact(f"? create planted_{n}.txt?")
        child.expect_exact("every file change this session")
        answer_question(child, "y")
        child.expect_exact(f"END-{n}")
        child.expect_exact(PROMPT)
        child.sendline(f"again {n}")
        child.expect_exact(f"ERR-{n}")
        child.expect_exact(PROMPT)
        output = child.logfile_read.getvalue()[start:]
        assert not raw_injections(output), (raw_injections(output), s)

    check()


def _plant_session(workspace, strings: list[str], name: str) -> None:
    folder = workspace / ".sessions"
    folder.mkdir(exist_ok=True)
    messages = []
    for i, s in enumerate(strings):
        messages += [{"role": "user", "content": f"q{i} {s}"},
                     {"role": "assistant", "content": [{"type": "text", "text": s},
                                                       {"type": "tool_use", "id": f"toolu_{i}", "name": "n" + s,
                                                        "input": {"command": s, "path": s}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": s}]},
                     {"role": "assistant", "content": [{"type": "text", "text": s + " done"}]}]
    records = [{"t": "session", "id": name, "origin": "print", "model": strings[0]}] + \
        [{"t": "append", "m": m} for m in messages] + ["not json " + strings[-1]] + \
        [{"t": "replace", "keep": 0, "tail": messages}]
    (folder / f"{name}.jsonl").write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                                                  for r in records))


def test_the_picker_and_the_resumed_view(tmp_path, workspace, standin):
    numbers = itertools.count()

    @settings(FEW, max_examples=2)
    @given(st.lists(injected, min_size=3, max_size=3))
    def check(s):
        name = f"20260101-00000{next(numbers)}-planted"
        _plant_session(workspace, s, name)
        child = spawn_agent(base_env(tmp_path, standin), workspace, "--resume", timeout=30)
        child.expect_exact("Resume which one?")
        child.sendline("1")
        if child.expect_exact(["resumed session", "Resume it?"]) == 1:    # a planted log: asked about first
            child.sendline("y")
            child.expect_exact("resumed session")
        child.expect_exact(PROMPT)
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        output = child.logfile_read.getvalue()
        assert not raw_injections(output), (raw_injections(output), s)
        for path in (workspace / ".sessions").glob("*.jsonl"):
            path.unlink()

    check()


def test_stderr_of_print_and_piped_runs(tmp_path, workspace, standin):
    def script(s: list[str]) -> list[dict]:
        return [{"text": s[0], "tool_calls": [{"name": "t" + s[1], "input": {"command": s[2]}},
                                              {"name": "bash", "input": {"command": _printf(s[3])}},
                                              {"name": "bash", "input": {"command": "rm -f x " + s[2]}}]},
                {"error": 400, "message": s[4]}]

    @settings(FEW, max_examples=2)
    @given(st.lists(st.lists(injected, min_size=5, max_size=5), min_size=3, max_size=3))
    def check(runs):
        env = base_env(tmp_path, standin, approval_mode="default")
        standin.queue(*script(runs[0]))
        once = run_agent("-p", "go", env=env, cwd=workspace, capture_output=True,
                              text=True, timeout=60)
        standin.queue(*script(runs[1]), *script(runs[2]))
        piped = run_agent(env=env, cwd=workspace, input="go\nagain\n",
                               capture_output=True, text=True, timeout=60)
        for proc in (once, piped):
            assert proc.returncode == 1
            assert not raw_injections(proc.stderr), (raw_injections(proc.stderr), runs)

    check()

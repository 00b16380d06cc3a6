"""In a real terminal: while a slow summary is prepared in the background, the prompt and the agent's
work go on; what the person types is never broken up; at the limit the prepared summary is applied.

The stand-in answers fast and summarizes slowly (its `summary_latency`); CONTEXT_LIMIT is small so a
few file reads pass PREPARE_AT. Order, not time, is asserted: the stand-in's brain logs the requests
as they arrive, and the summary request is still unanswered while the agent answers the next turns.
"""

from __future__ import annotations

import time

import pexpect
import pytest

from support.helpers import is_summary_request
from support.screen import Screen
from standin import Brain

PROMPT = "s08 >> "
pytestmark = pytest.mark.slow


def make_project(workspace) -> None:
    for i in range(8):
        body = "\n".join(f"def f_{i}_{n}(x):\n    return x + {n * 7919 % 1000}" for n in range(60))
        (workspace / f"mod_{i}.py").write_text(body + "\n")


def arrives(condition, timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while not condition() and time.monotonic() < end:
        time.sleep(0.02)
    return condition()


class Logged(Brain):
    """The demo brain, logging what it is asked: ("summary", n) or ("answer", last text)."""

    def __init__(self):
        super().__init__()
        self.log: list[tuple[str, str]] = []

    def __call__(self, body):
        last = body["messages"][-1]["content"]
        text = last if isinstance(last, str) else " ".join(b.get("text", "") for b in last if b.get("type") == "text")
        self.log.append(("summary", "") if is_summary_request(body) else ("answer", text))
        return super().__call__(body)


def test_the_prompt_and_the_agent_go_on_while_a_slow_summary_is_prepared(repl, standin, workspace):
    make_project(workspace)
    brain = Logged()
    standin.summary_latency = 60           # never ready during this test: only the background waits for it
    child = repl(brain=brain, context_limit=6000, prepare_at=0.3, background_compact="on")
    child.sendline("read mod_0.py and mod_1.py and mod_2.py")
    child.expect_exact("Tool results")
    child.expect_exact(PROMPT)             # the turn ended: nobody waited for the summary being prepared
    child.expect_exact("preparing summary")        # the prompt's status says so
    assert arrives(lambda: ("summary", "") in brain.log)
    child.send("run echo hel")                     # typing while the job runs (its seconds tick on the right)
    time.sleep(2.5)
    child.sendline("lo")
    child.expect_exact("Tool results")
    child.expect_exact(PROMPT)
    child.sendline("run echo again")
    child.expect_exact("Tool results")
    child.expect_exact(PROMPT)
    answers = [text for kind, text in brain.log if kind == "answer"]
    assert "run echo hello" in answers and "run echo again" in answers    # typed whole, and answered
    assert [kind for kind, _ in brain.log].count("summary") == 1          # one preparation at a time
    assert brain.log.index(("summary", "")) < brain.log.index(("answer", "run echo hello"))
    screen = Screen(200).feed(child.logfile_read.getvalue())
    assert any(row.startswith(PROMPT + "run echo hello") for row in screen.rows())
    child.sendline("/context")
    child.expect_exact("summary prepared in the background: being prepared for")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")                  # s08 leaves at once, the summary still in flight
    child.expect(pexpect.EOF, timeout=15)


def ready(child, timeout: float = 15) -> None:
    """Ask /context until it says the summary prepared in the background is ready."""
    end = time.monotonic() + timeout
    while True:
        child.sendline("/context")
        child.expect_exact("summary prepared in the background: ")
        if child.expect([r"ready \(", r"being prepared"]) == 0 or time.monotonic() > end:
            child.expect_exact(PROMPT)
            return
        child.expect_exact(PROMPT)
        time.sleep(0.3)


def test_at_the_limit_while_the_summary_is_prepared_the_agent_clears_results_and_goes_on(repl, standin, workspace):
    make_project(workspace)
    brain = Logged()
    standin.summary_latency = 60           # not ready during this test
    child = repl(brain=brain, context_limit=6000, prepare_at=0.3, background_compact="on")
    child.sendline("read mod_0.py and mod_1.py and mod_2.py")
    child.expect_exact("Tool results")
    child.expect_exact(PROMPT)
    assert arrives(lambda: ("summary", "") in brain.log)
    child.sendline("read mod_3.py and mod_4.py and mod_5.py and mod_6.py and mod_7.py")
    child.expect(r"cleared \d+ tool results while the summary is prepared")
    child.expect_exact(PROMPT)
    shown = Screen(200).feed(child.logfile_read.getvalue()).text()
    assert "waiting for the summary" not in shown and "[compacted]" not in shown    # nobody waited
    assert [kind for kind, _ in brain.log].count("summary") == 1
    after = brain.log[brain.log.index(("summary", "")) + 1:]
    assert len(after) >= 2 and all(kind == "answer" for kind, _ in after)     # the turn went on, to its end
    child.sendline("/context")
    child.expect_exact("the limit was reached, so the results the model had seen were cleared meanwhile")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF, timeout=15)


def test_at_the_limit_the_prepared_summary_is_applied(repl, standin, workspace):
    make_project(workspace)
    brain = Logged()
    standin.summary_latency = 1.5
    child = repl(brain=brain, context_limit=6000, prepare_at=0.3, background_compact="on")
    child.sendline("read mod_0.py and mod_1.py and mod_2.py")
    child.expect_exact("Tool results")
    child.expect_exact(PROMPT)
    ready(child)                                # the person reads the answer for as long as the summary takes
    child.sendline("read mod_3.py and mod_4.py and mod_5.py and mod_6.py")
    child.expect_exact("[auto_compact applied: ")
    child.expect(r"prepared in \d+\.\d s")
    child.expect_exact(PROMPT)
    shown = Screen(200).feed(child.logfile_read.getvalue()).text()
    assert "[compacted]" not in shown           # no blocking summary: the prepared one was used
    assert "waiting for the summary" not in shown or "waited" in shown
    child.sendline("/context")
    child.expect_exact("summary prepared in the background: ")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF, timeout=15)

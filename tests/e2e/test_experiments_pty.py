"""The tutorial's compaction experiments, run as a person would: the REPL in a pseudo-terminal,
the stand-in's demo model answering, strict validation on, results checked on screen and on disk."""

from __future__ import annotations

import json
import re

import pexpect
import pytest

from support.helpers import Model
from standin import Brain, count_request_tokens, validate_request
from storage import read_transcript

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "


@pytest.fixture
def run(repl):
    """The REPL with the stand-in's demo model answering (unless a test brings its own)."""
    return lambda brain=None, **settings: repl(brain or Brain(), **{"background_compact": "on", **settings})


def screen_after(child, text):
    child.expect_exact(text)
    return child.before + child.after


def test_read_every_python_file_until_auto_compact(run, workspace, standin):
    for i in range(16):
        body = "".join(f"def function_{i}_{n}(x):\n    return x * {n}  # step {n}\n" for n in range(45))
        (workspace / f"module_{i:02d}.py").write_text(f'"""Module {i}."""\n' + body)
    child = run(context_limit=12000)
    child.sendline("read every Python file one by one")
    seen = screen_after(child, "I read all 16 Python files one by one.")
    child.expect_exact(PROMPT)
    assert re.search(r"\[auto_compact triggered\] [\d,]+ > 12,000 tokens", seen)
    # blocking, or prepared in the background (BACKGROUND_COMPACT, the default) and applied at the limit
    assert re.search(r"\[compacted\] [\d,]+ → [\d,]+ tokens|\[auto_compact applied: [\d,]+ → [\d,]+ tokens",
                     seen)
    saved = re.findall(r"\[transcript saved: (\.transcripts/\d{8}-\d{6}-\w+-\d{3}-summary\.jsonl)\]", seen)
    assert saved
    for path in saved:
        header, history = read_transcript(workspace / path)
        assert header["kind"] == "summary" and ("> 12,000 tokens" in header["trigger"]
                                                or "prepared in the background" in header["trigger"])
        assert history[0] == {"role": "user", "content": "read every Python file one by one"} or \
            history[0]["content"][0]["text"].startswith("[compacted]")
        validate_request({"model": "m", "max_tokens": 1, "messages": history})
    read = {c["input"]["path"] for r in standin.requests for m in r["messages"] if m["role"] == "assistant"
            for c in m["content"] if c.get("type") == "tool_use" and c["name"] == "read_file"}
    assert len(read) == 16                      # it carried on to the end after compacting


def test_huge_command_output_is_persisted(run, workspace, standin):
    child = run()
    child.sendline("run seq 1 30000")
    seen = screen_after(child, "Tool results:")
    child.expect_exact(PROMPT)
    found = re.search(r"\[tool_result_budget\] persisted 1 output \(([\d,]+) chars\) → (\S+\.txt)", seen)
    assert found, seen[-2000:]
    saved = (workspace / found.group(2)).read_text()
    assert saved.startswith("1\n2\n3\n") and "\n30000\n[exit code 0]" in saved
    assert int(found.group(1).replace(",", "")) == len(saved)
    sent = standin.requests[-1]["messages"][-1]["content"][0]["content"]
    assert sent.startswith("<persisted-output>") and found.group(2) in sent and len(sent) < 3000


def test_compact_tool_with_a_focus(run, workspace, standin):
    (workspace / "parser.py").write_text("def parse(line):\n    return line.split(',')\n" * 200)
    child = run()
    child.sendline("read parser.py")
    child.expect_exact("Tool results:")
    child.expect_exact(PROMPT)
    child.sendline("use the compact tool, focus: the parser bug")
    seen = screen_after(child, "Tool results:")
    child.expect_exact(PROMPT)
    assert "[manual compact] focus: the parser bug" in seen
    # blocking, or prepared in the background (BACKGROUND_COMPACT, the default) and applied at the limit
    assert re.search(r"\[compacted\] [\d,]+ → [\d,]+ tokens|\[auto_compact applied: [\d,]+ → [\d,]+ tokens",
                     seen)
    summary_call = next(r for r in standin.requests if "<summary-request>" in json.dumps(r["messages"][-1]))
    assert "Pay special attention to: the parser bug" in json.dumps(summary_call["messages"][-1])
    after = standin.requests[-1]["messages"]
    assert after[0]["content"][0]["text"].startswith("[compacted]")
    assert "def parse(line)" not in json.dumps(after)          # the file's text is summarized away


def test_prompt_too_long_is_recovered_by_reactive_compaction(run, standin, workspace):
    for name in ("a.py", "b.py"):
        (workspace / name).write_text("def step(x):\n    return x + 1\n" * 120)
    child = run()
    for name in ("a.py", "b.py"):
        child.sendline(f"read {name}")
        child.expect_exact("Tool results:")
        child.expect_exact(PROMPT)
    standin.context_window = count_request_tokens(standin.requests[-1]) + 5    # the next prompt won't fit
    child.sendline("hello again")
    seen = screen_after(child, "You said: hello again")
    child.expect_exact(PROMPT)
    assert "[reactive_compact] the API says the prompt is too long (" in seen
    assert re.search(r"\[reactive_compact\] [\d,]+ → [\d,]+ tokens", seen)
    assert any(a.startswith("400 prompt is too long") for a in standin.answers)


def test_slash_compact_and_ctrl_c_during_the_summary(run, standin):
    model = Model({"text": "first answer " * 200}, {"text": "second answer"},
                  summaries=[{"text": "SLOW SUMMARY " * 100, "delay": 0.05, "chunk": 4},
                             {"text": "SUMMARY: one question about the code."}])
    child = run(brain=model)
    child.sendline("explain the code")
    child.expect_exact("first answer")
    child.expect_exact(PROMPT)
    child.sendline("/compact error handling")
    child.expect_exact("[manual compact] focus: error handling")
    child.expect_exact("summarizing")
    child.sendcontrol("c")
    child.expect_exact("[interrupted]")
    child.expect_exact(PROMPT)
    child.sendline("/compact")
    seen = screen_after(child, "tokens")
    child.expect_exact(PROMPT)
    assert "[compacted]" in seen
    child.sendline("and now?")
    child.expect_exact("second answer")
    child.expect_exact(PROMPT)
    sent = standin.requests[-1]["messages"]
    assert "SUMMARY: one question about the code." in json.dumps(sent) and "first answer" not in json.dumps(sent)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)

"""The demo model's reread mode: asked about a file it no longer sees whole, it reads it again first."""

from __future__ import annotations

from standin import Brain
from support.helpers import ask, call, results, say, user

FILE = "def f():\n    return 1\n"


def history(result_text: str) -> list[dict]:
    c = call("read_file", path="a.py")
    return [user("read a.py"), ask(c), results((c, result_text)), say("read it"), user("about a.py")]


def test_it_answers_from_a_file_it_sees_whole():
    reply = Brain(reread=True)({"messages": history(FILE)})
    assert "tool_calls" not in reply and "a.py: 2 lines" in reply["text"]


def test_it_reads_a_pointer_again_and_then_answers():
    brain, messages = Brain(reread=True), history("[Previous: used read_file] — full output saved at .task_outputs/x.txt")
    reply = brain({"messages": messages})
    assert reply["tool_calls"] == [{"name": "read_file", "input": {"path": "a.py"}}]
    again = call("read_file", path="a.py")
    messages += [ask(again), results((again, FILE))]
    assert "a.py: 2 lines" in brain({"messages": messages})["text"]


def test_without_the_mode_it_says_what_it_no_longer_sees():
    reply = Brain()({"messages": history("[Previous: used read_file]")})
    assert "tool_calls" not in reply and "no longer see it whole" in reply["text"]

"""What small models send (issue 32), through the gateway lane: s08 → a real LiteLLM proxy's `/v1/messages`
→ the stand-in speaking `/v1/chat/completions` with a 4,096-token window, as a small local model served
behind LiteLLM would answer: arguments that are not JSON, an unknown tool, a tool call written as text
(the server's parser missed it), a looping answer cut by the limit (finish_reason length) or streaming on.
The same through the Messages API directly: tests/e2e/test_broken_replies_e2e.py, tests/loop/."""

from __future__ import annotations

import pytest

from events import TextDelta, ToolFinished
from messages import text_of
from support.replies import PARAGRAPH, results_of, text, warnings

pytestmark = pytest.mark.gateway







def test_arguments_that_are_not_json_through_litellm_are_one_error(app_via, backend, workspace):
    backend.queue({"tool_calls": [{"name": "bash", "raw_input": '{"command": "touch ran'}]}, {"text": "ok then"})
    app, events = app_via()
    result = app.turn("make a file")
    assert result.ok and result.text == "ok then", result.error
    assert not (workspace / "ran").exists() and not [e for e in events if isinstance(e, ToolFinished)]
    [answer] = results_of(app)
    assert answer["is_error"] and "not a valid JSON object" in text(answer)
    assert len([w for w in warnings(events) if "bash call had input that is not a JSON object" in w]) == 1


def test_an_unknown_tool_through_litellm_is_an_error_naming_the_closest(app_via, backend, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    backend.queue({"tool_calls": [{"name": "Read", "input": {"path": "a.py"}}]}, {"text": "ok"})
    app, events = app_via()
    assert app.turn("read a.py").ok
    [answer] = results_of(app)
    assert answer["is_error"] and text(answer).startswith("Unknown tool 'Read'") and "Did you mean" in text(answer)


def test_a_call_written_as_text_through_litellm_is_not_run_and_told_once(app_via, backend, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    backend.queue({"text": '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'},
                  {"tool_calls": [{"name": "read_file", "input": {"path": "a.py"}}]}, {"text": "x is 1"})
    app, events = app_via()
    result = app.turn("what is x?")
    assert result.ok and result.text == "x is 1", result.error
    assert len([w for w in warnings(events) if "wrote a call to read_file as text" in w]) == 1
    told = backend.requests[1]["messages"][-1]
    assert told["role"] == "user" and "[s08: your last answer wrote a call to read_file" in text_of(told)
    assert [e.name for e in events if isinstance(e, ToolFinished)] == ["read_file"]


def test_a_loop_cut_by_the_length_limit_through_litellm_keeps_one_copy(app_via, backend):
    backend.queue({"text": "Here is my plan. " + PARAGRAPH * 8, "finish_reason": "length"}, {"text": "fine"})
    app, events = app_via()
    assert app.turn("fix it").ok
    kept = text_of([m for m in app.messages if m["role"] == "assistant"][0])
    assert kept.count("Let me check the configuration") == 1
    assert len([w for w in warnings(events) if "repeated the same" in w and "until the output limit" in w]) == 1
    assert app.turn("go on").text == "fine"


def test_a_loop_still_streaming_through_litellm_is_stopped_early(app_via, backend):
    backend.queue({"text": "Intro. " + "I will fix the bug now. " * 4000}, {"text": "fine"})
    app, events = app_via(max_tokens=4000)
    assert app.turn("fix it").ok
    assert len("".join(e.text for e in events if isinstance(e, TextDelta))) < 20_000
    assert text_of([m for m in app.messages if m["role"] == "assistant"][0]) == "Intro. I will fix the bug now."
    assert len([w for w in warnings(events) if "s08 stopped it early" in w]) == 1
    assert app.turn("go on").text == "fine"

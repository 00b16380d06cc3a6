"""What small models send that a model behind Anthropic's API does not (issue 32): a tool call whose
input is not JSON, a tool that does not exist, a tool call written as text, an answer that loops on one
sentence until the output limit. Each gets one clear tool error or notice, the history stays valid (the
stand-in and the scripted model refuse any request the real API would), and the session goes on.

Every test runs twice: against the stand-in over real HTTP through the SDK, and against the in-process
scripted model (marker `scripted`). The same through the CLI: tests/e2e/test_broken_replies_e2e.py;
through a real LiteLLM gateway: tests/e2e/test_gateway_broken.py."""

from __future__ import annotations

import pytest

from approvals.policy import Answer
from events import ResponseDone, TextDelta, ToolFinished
from messages import text_of
from support.replies import PARAGRAPH, results_of, text, warnings

LOOP = "I will fix the bug now. "


@pytest.fixture(params=["http", pytest.param("scripted", marks=pytest.mark.scripted)])
def model(request):
    return request.param





def test_a_tool_call_whose_input_is_not_json_is_answered_with_an_error_and_not_run(model, app_for, standin,
                                                                                     workspace):
    (workspace / "a.py").write_text("SECRET_CONTENT = 1\n")
    standin.queue({"tool_calls": [{"name": "read_file", "raw_input": '{"path": "a.py", "limit": '}]},
                  {"text": "Sorry, I will try again."})
    app, events = app_for()
    result = app.turn("read a.py")
    assert result.ok and result.text == "Sorry, I will try again."
    [answer] = results_of(app)
    assert answer["is_error"] and "not a valid JSON object" in text(answer) and "SECRET_CONTENT" not in text(answer)
    said = [w for w in warnings(events) if "read_file call had input that is not a JSON object" in w]
    assert len(said) == 1 and "\n" not in said[0]
    assert not [e for e in events if isinstance(e, ToolFinished)]           # nothing ran
    standin.queue({"text": "fine"})
    assert app.turn("go on").text == "fine"                                  # the history is still sendable


def test_a_tool_that_does_not_exist_gets_an_error_naming_the_closest_one(model, app_for, standin, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    standin.queue({"tool_calls": [{"name": "Read_File", "input": {"path": "a.py"}}]},
                  {"tool_calls": [{"name": "read_file", "input": {"path": "a.py"}}]}, {"text": "x is 1"})
    app, events = app_for()
    assert app.turn("what is x in a.py?").text == "x is 1"
    first, second = results_of(app)
    assert first["is_error"] and text(first).startswith("Unknown tool 'Read_File'")
    assert "Did you mean read_file?" in text(first) and "read_file" in text(first).split("The tools are:")[1]
    assert not second.get("is_error") and "x = 1" in text(second)


def test_an_invented_mcp_tool_asks_nobody_and_is_unknown(model, app_for, standin):
    """Without the check the approval policy asked the person to approve a call to a server that is not
    there (mcp__ names need approval), or refused it as needing approval."""
    asked = []
    standin.queue({"tool_calls": [{"name": "mcp__github__search", "input": {"q": "x"}}]}, {"text": "ok"})
    app, events = app_for(approval_mode="default")
    app.agent.ask = lambda request: asked.append(request) or Answer(False)
    assert app.turn("search github").ok
    [answer] = results_of(app)
    assert answer["is_error"] and text(answer).startswith("Unknown tool 'mcp__github__search'") and not asked


@pytest.mark.parametrize("written", [
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>',
    '{"name": "read_file", "arguments": {"path": "a.py"}}',
    'I will read it.\n```json\n{"name": "read_file", "parameters": {"path": "a.py"}}\n```',
])
def test_a_tool_call_written_as_text_is_not_run_and_the_model_is_told_once(model, written, app_for, standin,
                                                                           workspace):
    (workspace / "a.py").write_text("x = 1\n")
    standin.queue({"text": written}, {"tool_calls": [{"name": "read_file", "input": {"path": "a.py"}}]},
                  {"text": "x is 1"})
    app, events = app_for()
    assert app.turn("what is in a.py?").text == "x is 1"
    said = [w for w in warnings(events) if "wrote a call to read_file as text" in w]
    assert len(said) == 1 and "did not run it" in said[0]
    second = standin.requests[1]["messages"]
    assert second[-2]["role"] == "assistant" and second[-1]["role"] == "user"
    assert "[s08: your last answer wrote a call to read_file as text" in text_of(second[-1])
    assert [e.name for e in events if isinstance(e, ToolFinished)] == ["read_file"]    # only the real call ran
    assert len(standin.requests) == 3


def test_a_call_written_as_text_twice_in_a_turn_ends_it_with_one_line_and_runs_nothing(model, app_for, standin,
                                                                                       workspace):
    written = '<tool_call>{"name": "bash", "arguments": {"command": "touch ran"}}</tool_call>'
    standin.queue({"text": written}, {"text": written})
    app, events = app_for()
    result = app.turn("make a file")
    assert result.ok and len(standin.requests) == 2
    assert any("as text again; s08 did not run it" in w for w in warnings(events))
    assert not (workspace / "ran").exists() and not [e for e in events if isinstance(e, ToolFinished)]
    standin.queue({"text": written}, {"text": "ok"})          # the next turn may be told once more
    assert app.turn("again").text == "ok"


def test_json_the_person_asked_for_is_an_answer(model, app_for, standin):
    standin.queue({"text": '{"name": "Alice", "arguments": ["a", "b"]}'})
    app, events = app_for()
    assert app.turn("an example object please").text == '{"name": "Alice", "arguments": ["a", "b"]}'
    assert len(standin.requests) == 1 and not warnings(events)


def test_an_answer_that_loops_until_max_tokens_keeps_one_copy(model, app_for, standin):
    standin.queue({"text": "Here is my plan. " + PARAGRAPH * 40})
    app, events = app_for(max_tokens=600)
    result = app.turn("fix it")
    assert result.ok
    [answer] = [m for m in app.messages if m["role"] == "assistant"]
    kept = text_of(answer)
    assert kept.count("Let me check the configuration") == 1 and kept.startswith("Here is my plan. Let me check")
    said = [w for w in warnings(events) if "repeated the same" in w]
    assert len(said) == 1 and "one copy was kept" in said[0] and "until the output limit" in said[0]
    assert not any("MAX_TOKENS" in w for w in warnings(events))     # no "say continue": it would loop on
    standin.queue({"text": "fine"})
    assert app.turn("go on").text == "fine"


def test_an_answer_that_loops_is_stopped_while_it_streams(model, app_for, standin):
    standin.queue({"text": "Intro. " + LOOP * 4000})                 # 96,000 characters; abandoned after about 8,000
    app, events = app_for(max_tokens=4000)
    result = app.turn("fix it")
    assert result.ok
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert len(shown) < 20_000                                        # abandoned early, not streamed whole
    [answer] = [m for m in app.messages if m["role"] == "assistant"]
    assert text_of(answer) == "Intro. I will fix the bug now."
    said = [w for w in warnings(events) if "repeated the same" in w]
    assert len(said) == 1 and "s08 stopped it early" in said[0]
    [done] = [e for e in events if isinstance(e, ResponseDone)]
    assert done.stop_reason is None and done.usage["output_tokens"] >= len(shown) // 5     # what it cost, roughly
    standin.queue({"text": "fine"})
    assert app.turn("go on").text == "fine"                           # the connection and history are fine


def test_a_long_answer_that_is_not_a_loop_is_kept_whole(model, app_for, standin):
    listing = "".join(f"{i}. step number {i} of the plan\n" for i in range(1, 400))
    standin.queue({"text": listing})
    app, events = app_for()
    assert app.turn("a long plan").text.strip() == listing.strip()
    assert not [w for w in warnings(events) if "repeated" in w]

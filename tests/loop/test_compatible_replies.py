"""What a compatible endpoint (a gateway in front of another API) answers that Anthropic's never does, end
to end in-process against the stand-in over real HTTP: an empty 200, usage far below the prompt, one tool
call in pieces, a 5xx for the system prompt as blocks, an answer cut by a window s08 did not know.
The same shapes through a real LiteLLM proxy: tests/e2e/test_gateway.py."""

from __future__ import annotations

import json

from access.credentials import consent_file, endpoint_adaptations
from commands import dispatch
from events import Compaction, ContextReport, Notice, ToolFinished
from messages import tool_uses
from standin import validate_request

EMPTY = {"usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0,
                   "cache_creation_input_tokens": 0}}
SUMMARY = {"text": "Summary: the person asked to read big.txt; it was read. Next: answer the question."}


def notices(events, kind=None):
    return [e.text for e in events if isinstance(e, Notice) and (kind is None or e.kind == kind)]


def compactions(events):
    return [e.message for e in events if isinstance(e, Compaction)]


def assistant_texts(app):
    return [m for m in app.messages if m["role"] == "assistant"]


def a_long_first_turn(standin, workspace, app):
    """A turn that reads a big file: a history worth summarizing, and a prompt the endpoint answered."""
    (workspace / "big.txt").write_text("".join(f"line {i}: some words of the file\n" for i in range(400)))
    standin.queue({"tool_calls": [{"name": "read_file", "input": {"path": "big.txt"}}]}, {"text": "I read it."})
    assert app.turn("read big.txt").ok


def test_an_empty_answer_is_a_failure_in_one_line_and_leaves_no_empty_message(app_for, standin):
    standin.queue(EMPTY)
    app, events = app_for()
    result = app.turn("hello")
    assert not result.ok
    errors = notices(events, "error")
    assert len(errors) == 1 and "answered with nothing" in errors[0] and "\n" not in errors[0]
    assert [m["role"] for m in app.messages] == ["user"]         # no empty assistant message
    standin.queue({"text": "hi"})
    assert app.turn("hello again").text == "hi"                 # and the history is still sendable


def test_an_empty_answer_to_a_prompt_larger_than_any_answered_is_an_overflow_compact_and_retry(
        app_for, standin, workspace):
    app, events = app_for()
    a_long_first_turn(standin, workspace, app)
    standin.queue(EMPTY, SUMMARY, {"text": "Here is the answer."})
    result = app.turn("now tell me what is in it, at length")
    assert result.ok and result.text == "Here is the answer."
    said = [c for c in compactions(events) if "answered with nothing" in c]
    assert len(said) == 1 and "compacting and retrying once" in said[0]
    assert len(standin.requests) == 5          # 2 of the first turn, the empty one, the summary, the retry
    assert all(m["content"] for m in assistant_texts(app))


def test_silence_twice_in_a_row_is_taken_as_an_overflow_even_with_nothing_answered_before(app_for, standin):
    standin.queue(EMPTY)
    app, events = app_for()
    assert not app.turn("hello").ok
    standin.queue(EMPTY, {"text": "back"})
    result = app.turn("hello?")
    assert result.ok and result.text == "back"
    assert any("answered with nothing" in c for c in compactions(events))


def test_silence_again_after_compacting_ends_the_turn_with_one_line(app_for, standin, workspace):
    app, events = app_for()
    a_long_first_turn(standin, workspace, app)
    standin.queue(EMPTY, SUMMARY, EMPTY)
    result = app.turn("now tell me what is in it")
    assert not result.ok
    assert any("again after compacting" in e for e in notices(events, "error"))
    assert app.messages[-1]["role"] == "user"


def test_an_empty_answer_to_a_tool_round_does_not_end_the_turn_silently(app_for, standin, workspace):
    (workspace / "a.txt").write_text("A\n")
    standin.queue({"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}]}, EMPTY, EMPTY)
    app, events = app_for()
    result = app.turn("read a.txt")
    assert not result.ok and notices(events, "error")


def test_one_tool_call_in_pieces_is_joined_and_runs(app_for, standin, workspace):
    (workspace / "a.txt").write_text("content of a\n")
    standin.queue({"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}], "split": 3}, {"text": "ok"})
    app, events = app_for()
    assert app.turn("read a.txt").ok
    calls = tool_uses(app.messages[1])
    assert len(calls) == 1 and calls[0]["input"] == {"path": "a.txt"}
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == 1 and not finished[0].is_error and finished[0].content == "content of a\n"
    assert not any("renamed" in n for n in notices(events))


def test_a_true_duplicate_id_across_two_calls_is_still_made_unique(app_for, standin, workspace):
    (workspace / "a.txt").write_text("A\n")
    (workspace / "b.txt").write_text("B\n")
    standin.queue({"tool_calls": [{"id": "toolu_same", "name": "read_file", "input": {"path": "a.txt"}},
                                  {"id": "toolu_same", "name": "read_file", "input": {"path": "b.txt"}}]},
                  {"text": "ok"})
    app, events = app_for()
    assert app.turn("read both").ok
    calls = tool_uses(app.messages[1])
    assert [c["input"]["path"] for c in calls] == ["a.txt", "b.txt"] and len({c["id"] for c in calls}) == 2
    assert any("renamed" in n for n in notices(events))


def test_a_5xx_for_the_system_prompt_as_blocks_is_retried_plain_once_and_remembered(
        app_for, standin, tmp_path):
    standin.plain_only = 500
    standin.queue({"text": "hello"}, {"text": "again"})
    app, events = app_for()
    result = app.turn("hi")
    assert result.ok and result.text == "hello"
    assert [a.split()[0] for a in standin.answers] == ["500", "200"]       # no retries of the refusal
    first, second = standin.requests
    assert isinstance(first["system"], list) and isinstance(second["system"], str)
    assert "cache_control" not in json.dumps(second)
    said = [n for n in notices(events) if "system prompt as blocks" in n]
    assert len(said) == 1 and "remembered in" in said[0] and "\n" not in said[0]
    assert endpoint_adaptations(app.access.user_file, standin.url) == {"plain_system"}
    assert oct(consent_file(app.access.user_file).stat().st_mode & 0o777) == "0o600"
    assert app.turn("more").ok and isinstance(standin.requests[-1]["system"], str)

    app2, events2 = app_for()            # the next session does not pay the error again
    standin.queue({"text": "plain from the start"})
    assert app2.turn("hi").ok
    assert isinstance(standin.requests[-1]["system"], str) and [a.split()[0] for a in standin.answers].count("500") == 1
    assert not [n for n in notices(events2) if "system prompt as blocks" in n]


def test_a_refusal_the_plain_form_does_not_cure_is_not_remembered(app_for, standin):
    refusal = {"error": 500, "message": "messages.0.content: Input should be a valid string"}
    standin.queue(refusal, refusal)
    app, events = app_for()
    result = app.turn("hi")
    assert not result.ok and len(standin.requests) == 2
    assert any("which failed too" in n for n in notices(events))
    assert result.error.endswith("(in the plain form too)") and "PROMPT_CACHE" not in result.error
    assert not app.agent.plain_form and endpoint_adaptations(app.access.user_file, standin.url) == set()
    standin.queue({"text": "ok"})
    assert app.turn("again").ok and isinstance(standin.requests[-1]["system"], list)


def test_prompt_cache_off_still_sends_the_plain_form_without_asking(app_for, standin):
    standin.plain_only = 500
    standin.queue({"text": "hello"})
    app, events = app_for(prompt_cache="off")
    assert app.turn("hi").ok and [a.split()[0] for a in standin.answers] == ["200"]


def test_a_usage_far_below_the_estimate_is_not_trusted_and_said_once(app_for, standin, workspace):
    low = {"usage": {"input_tokens": 17, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}
    app, events = app_for()
    (workspace / "big.txt").write_text("".join(f"line {i}: some words of the file\n" for i in range(400)))
    standin.queue({"tool_calls": [{"name": "read_file", "input": {"path": "big.txt"}}], **low},
                  {"text": "read", **low}, {"text": "again", **low})
    assert app.turn("read big.txt").ok and app.turn("and?").ok
    doubts = [n for n in notices(events) if "usage looks incomplete" in n]
    assert len(doubts) == 1 and "tokens reported where s08 estimates" in doubts[0]
    compactor = app.agent.compactor
    assert compactor.measure(app.messages) == compactor.meter.estimate(app.messages, compactor.system, compactor.tools)
    assert compactor.measure(app.messages) > 3_000
    dispatch(app, "/context")
    report = [e for e in events if isinstance(e, ContextReport)][-1]
    assert "usage looks incomplete" in report.usage_doubt


def test_an_answer_with_usage_0_0_is_kept_and_the_usage_said_to_be_missing(app_for, standin):
    standin.queue({"text": "an answer", **EMPTY}, {"text": "another", **EMPTY})
    app, events = app_for()
    assert app.turn("hello").text == "an answer" and app.turn("more").ok
    doubts = [n for n in notices(events) if "usage looks incomplete" in n]
    assert len(doubts) == 1 and "no tokens reported" in doubts[0]


def test_a_usage_that_covers_the_prompt_is_trusted(app_for, standin):
    standin.queue({"text": "hi"})
    app, events = app_for()
    assert app.turn("hello").ok
    assert not app.agent.compactor.endpoint.usage_doubt
    assert app.agent.compactor.meter.covered == len(app.messages)


def test_max_tokens_far_below_the_limit_is_named_a_window_cut_and_compacted_before_continue(
        app_for, standin, workspace):
    app, events = app_for()
    a_long_first_turn(standin, workspace, app)
    standin.queue({"text": "The file holds many lines, and", "stop_reason": "max_tokens",
                   "usage": {"output_tokens": 296}}, SUMMARY)
    app.turn("tell me what is in it")
    texts = [e.message if isinstance(e, Compaction) else e.text for e in events if isinstance(e, (Notice, Compaction))]
    cut = [i for i, t in enumerate(texts) if "cut off by the model's context window after 296" in t]
    assert cut and not any("reached MAX_TOKENS" in t for t in texts)
    compacted = [i for i, t in enumerate(texts) if "[compacted]" in t or "compacting, so that" in t]
    go_on = [i for i, t in enumerate(texts) if 'say "continue"' in t]
    assert compacted and go_on and cut[0] < compacted[0] < go_on[-1]
    assert len(standin.requests) == 4


def test_an_answer_the_window_cut_before_it_said_anything_is_asked_again_once_on_the_compacted_history(
        app_for, standin, workspace):
    """Cut after a token or two (the prompt filled a window s08 did not know): nothing to continue, so the
    cut answer is dropped and the question asked again after compacting — the turn ends with an answer,
    not with "say continue". Once a turn: cut again, it is the one line."""
    app, events = app_for()
    a_long_first_turn(standin, workspace, app)
    standin.queue({"text": "The", "stop_reason": "max_tokens", "usage": {"output_tokens": 1}}, SUMMARY,
                  {"text": "It holds 400 numbered lines."})
    result = app.turn("tell me what is in it")
    assert result.ok and result.text == "It holds 400 numbered lines."
    texts = notices(events)
    assert any("cut off by the model's context window after 1 output" in t for t in texts)
    assert not any('say "continue"' in t for t in texts)
    assert not any(m["role"] == "assistant" and "The" == (m["content"][0].get("text") if isinstance(m["content"], list)
                   else m["content"]) for m in app.messages)          # the cut answer is not in the history
    validate_request({"model": "m", "max_tokens": 10, "messages": list(app.messages)})
    cut = {"text": "A", "stop_reason": "max_tokens", "usage": {"output_tokens": 1}}
    standin.queue(*[cut] * 4)            # every answer (and summary) cut: asked again once, then said
    app.turn("and the last line?")
    assert any('say "continue"' in t for t in notices(events))     # asked again once, then said


def test_max_tokens_at_the_limit_is_still_the_output_limit(app_for, standin):
    standin.queue({"text": "a long answer that goes on", "stop_reason": "max_tokens", "usage": {"output_tokens": 100}})
    app, events = app_for(max_tokens=100)
    app.turn("go")
    assert any("reached MAX_TOKENS=100" in n for n in notices(events))
    assert not any("context window" in n for n in notices(events))

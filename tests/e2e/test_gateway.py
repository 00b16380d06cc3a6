"""The gateway lane: s08 with default settings through a real LiteLLM proxy (its `/v1/messages`, pinned in
.ci/gateway-requirements.txt) in front of the stand-in speaking `/v1/chat/completions` with a 4,096-token
window (standin/openai_chat.py) — every behaviour of issue 20 through the real translation layer.

What LiteLLM 1.80.0 did here (the tests assert on it, so a new version that changes it shows):
- a system message made of parts refused by the backend with a 500 → LiteLLM retries the backend, then
  answers 500 "litellm.InternalServerError: … Input should be a valid string" (the wording on line 3);
- an over-window streamed request the backend answers with an empty stream → HTTP 200: message_start,
  an empty text block, stop_reason end_turn, output_tokens 0 (input_tokens is LiteLLM's own count);
- OpenAI's overflow wording (400, context_length_exceeded) → 400 "litellm.ContextWindowExceededError: …
  This model's maximum context length is 4096 tokens. However, you requested …";
- a tool call whose chunks repeat its id → one tool_use block per chunk, all with that id;
- the backend's prompt_tokens → input_tokens as they are (17 stays 17); finish_reason length → max_tokens.
"""

from __future__ import annotations

import pytest

from access.credentials import endpoint_adaptations
from support.agents import base_env, run_agent
from events import Compaction, Notice, ToolFinished
from support.gateway import MODEL, WINDOW
from messages import tool_uses

pytestmark = pytest.mark.gateway




def notices(events):
    return [e.text for e in events if isinstance(e, Notice)]


def said(events):
    return [e.message if isinstance(e, Compaction) else e.text for e in events if isinstance(e, (Notice, Compaction))]


def write_lines(path, count):
    path.write_text("".join(f"line {i}: words in the file\n" for i in range(count)))


def first_turn(app, backend, workspace):
    """A turn that reads a file: a history worth summarizing, a prompt the endpoint answered (~2,000 tokens)."""
    write_lines(workspace / "a.txt", 150)
    backend.queue({"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}]}, {"text": "I read a.txt."})
    result = app.turn("read a.txt")
    assert result.ok, result.error


def test_default_settings_work_through_the_gateway(app_via, backend, workspace):
    backend.plain_only = 500
    backend.queue({"text": "hello through the gateway"})
    app, events = app_via()
    result = app.turn("hi")
    assert result.ok and result.text == "hello through the gateway"
    systems = [type(r["messages"][0]["content"]).__name__ for r in backend.requests]
    assert systems[-1] == "str" and set(systems[:-1]) == {"list"}      # LiteLLM retried the refusal itself
    assert len([n for n in notices(events) if "system prompt as blocks" in n]) == 1
    assert endpoint_adaptations(app.access.user_file, app.settings.base_url) == {"plain_system"}

    before = len(backend.requests)
    backend.queue({"text": "plain from the first request"})
    app2, events2 = app_via()                                             # the next session
    assert app2.turn("hi").ok
    assert len(backend.requests) == before + 1 and isinstance(backend.requests[-1]["messages"][0]["content"], str)
    assert not [n for n in notices(events2) if "system prompt as blocks" in n]


def test_a_streamed_overflow_comes_back_empty_and_is_compacted_and_retried(app_via, backend, workspace):
    app, events = app_via()
    first_turn(app, backend, workspace)
    write_lines(workspace / "b.txt", 260)
    backend.queue({"tool_calls": [{"name": "read_file", "input": {"path": "b.txt"}}]},
                  {"text": "Summary: a.txt was read (lines of words); b.txt is being read."},
                  {"text": "Done: both read."})
    result = app.turn("now read b.txt")
    assert result.ok and result.text == "Done: both read.", result.error
    assert any(a.endswith("empty") for a in backend.answers)              # the backend's empty 200 stream
    assert any("answered with nothing" in t for t in said(events))
    assert app.agent.compactor.window.learned is not None
    assert all(m["content"] for m in app.messages if m["role"] == "assistant")


def test_openai_overflow_wording_through_litellm_is_an_overflow_whose_window_is_learned(app_via, backend, workspace):
    backend.chat_overflow = "error"             # over the window, streamed or not: OpenAI's 400
    app, events = app_via()
    first_turn(app, backend, workspace)
    write_lines(workspace / "b.txt", 260)
    backend.queue({"tool_calls": [{"name": "read_file", "input": {"path": "b.txt"}}]},
                  {"text": "Summary: a.txt was read; b.txt is being read."}, {"text": "Answer after compacting."})
    result = app.turn("now read b.txt")
    assert result.ok and result.text == "Answer after compacting.", result.error
    assert any(a.startswith("400") and "maximum context length" in a for a in backend.answers)
    assert app.agent.compactor.window.learned == WINDOW
    assert any("context window is 4,096 tokens" in n for n in notices(events))
    assert any(" > 4,096 tokens)" in t and "too long" in t for t in said(events))


def test_a_tool_call_in_pieces_runs_once(app_via, backend, workspace):
    (workspace / "notes.txt").write_text("the notes\n")
    backend.queue({"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}], "pieces": 4,
                   "repeat_tool_id": True}, {"text": "Read."})
    app, events = app_via()
    assert app.turn("read notes.txt").ok
    calls = tool_uses(app.messages[1])
    assert len(calls) == 1 and calls[0]["input"] == {"path": "notes.txt"}
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == 1 and finished[0].content == "the notes\n" and not finished[0].is_error
    results = [m for m in backend.requests[-1]["messages"] if m.get("role") == "tool"]
    assert len(results) == 1 and "the notes" in str(results[0]["content"])


def test_usage_under_reported_by_the_endpoint_is_not_trusted(app_via, backend, workspace):
    app, events = app_via()
    write_lines(workspace / "a.txt", 150)
    backend.queue({"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}],
                   "usage": {"prompt_tokens": 17}}, {"text": "ok", "usage": {"prompt_tokens": 17}},
                  {"text": "ok again", "usage": {"prompt_tokens": 17}})
    assert app.turn("read a.txt").ok and app.turn("and?").ok
    assert len([n for n in notices(events) if "usage looks incomplete" in n]) == 1
    compactor = app.agent.compactor
    assert compactor.measure(app.messages) == compactor.meter.estimate(app.messages, compactor.system,
                                                                       compactor.tools) > 1_500


def test_an_answer_cut_by_the_window_is_named_so_and_compacted(app_via, backend, workspace):
    app, events = app_via()
    first_turn(app, backend, workspace)
    backend.queue({"text": "The file has many lines and", "finish_reason": "length",
                   "usage": {"completion_tokens": 296}}, {"text": "Summary: a.txt was read."})
    app.turn("describe it at length")
    texts = said(events)
    assert any("cut off by the model's context window after 296" in t for t in texts)
    assert not any("reached MAX_TOKENS" in t for t in texts)
    assert any('say "continue"' in t for t in texts)


def test_silence_in_print_mode_exits_non_zero_with_one_line(tmp_path, workspace, gw, backend):
    backend.queue({"empty": True})
    env = base_env(tmp_path, None, anthropic_base_url=gw.url, anthropic_api_key="sk-gateway-key", model_id=MODEL,
                   prompt_cache="off")
    done = run_agent("-p", "hello", env=env, cwd=workspace, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "answered with nothing" in done.stderr + done.stdout


def test_a_window_that_counts_the_answer_is_learned_and_the_answer_made_to_fit(app_via, backend):
    from standin.openai_chat import count_chat_tokens
    backend.chat_overflow = "vllm"          # prompt + max_tokens must fit, as OpenAI, vLLM and DeepSeek count
    backend.queue({"text": "fits now"})
    app, events = app_via()                  # MAX_TOKENS=8000 (the default) alone is more than the window
    result = app.turn("hi")
    assert result.ok and result.text == "fits now", result.error
    assert app.agent.compactor.window.learned == WINDOW
    last = backend.requests[-1]
    assert count_chat_tokens(last) + last["max_tokens"] <= WINDOW

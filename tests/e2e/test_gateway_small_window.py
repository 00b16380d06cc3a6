"""Issue 32's stuck session through the gateway lane's real stack: s08 with default settings → a real
LiteLLM proxy (tests/support/gateway.py) → the stand-in's `/v1/chat/completions` with a 4,096-token
window, which answers a streamed prompt past it with an empty 200 (what llama.cpp's server behind
LiteLLM did), and whose summaries restate everything they were given (Brain(summary="restate"): not
smaller than the history). The person pastes three parts of a build log (~1,200 tokens each), then asks
short questions: every one gets its answer, and after the first overflow (the window is not known
before it) no request overflows again. Before issue 32's fixes every question after the third part was
answered with silence ("the summary … is not smaller than the history", "[fallback] nothing more to cut
without the model"), and the session was dead until /clear.
"""

from __future__ import annotations

import pytest

from events import Compaction, Notice

from standin import Brain, StandIn
from standin.openai_chat import count_chat_tokens
from support.agents import base_env
from support.build_log import build_log_part
from support.gateway import MODEL

pytestmark = pytest.mark.gateway

WINDOW = 4096
QUESTIONS = ["what failed?", "which module warned first?", "how many warnings?", "ok, and the last part?",
             "thanks, anything else?"]
WHOLE_ANSWER_END = "tell me a long story."          # the last words of every answer the demo brain gives here


@pytest.fixture(scope="module")
def backend():
    server = StandIn(context_window=WINDOW, brain=Brain(summary="restate")).start()
    yield server
    server.stop()
    assert not server.rejections, server.rejections


@pytest.mark.parametrize("overflow", ["empty", "error"])
def test_the_stuck_session_through_litellm_recovers_and_stays_inside_the_window(tmp_path, workspace, backend,
                                                                                gateway, overflow):
    """`empty`: the backend answers a streamed prompt past the window with an empty 200 (llama.cpp's server
    did, and LiteLLM passed it on as a silent answer); `error`: with OpenAI's 400 wording, which LiteLLM
    turns into its ContextWindowExceededError."""
    with backend.lock:
        backend.requests.clear()
        backend.answers.clear()
    backend.chat_overflow = overflow
    from agent import App
    app = App(workspace, environ=base_env(tmp_path, None, anthropic_base_url=gateway.url,
                                          anthropic_api_key="sk-gateway-key", model_id=MODEL))
    events: list = []
    app.set_emit(events.append)
    typed = [build_log_part(n, 1_200) for n in (1, 2, 3)] + QUESTIONS
    outcomes = []
    for text in typed:
        result = app.turn(text)
        whole = result.ok and result.text.startswith("You said: " + text[:80]) and result.text.endswith(WHOLE_ANSWER_END)
        outcomes.append("answered" if whole else result.error or f"answered {result.text[:60]!r}")
    sent = [r for i, r in enumerate(backend.requests) if i == 0 or r != backend.requests[i - 1]]   # not LiteLLM's
    sizes = [count_chat_tokens(r) for r in sent]                                                   # own retries
    said = [e.message if isinstance(e, Compaction) else e.text for e in events if isinstance(e, (Notice, Compaction))]
    report = f"turns: {outcomes}\nprompts: {sizes}\nanswers: {backend.answers}\ns08 said: {said}"
    assert outcomes == ["answered"] * len(typed), report
    assert len([s for s in sizes if s > WINDOW]) <= 1, report

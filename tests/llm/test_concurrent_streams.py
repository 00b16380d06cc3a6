"""Model calls in flight at once share one client and its connection pool (a summary prepared in the
background beside the loop's own call, later parallel sub-agents). A call that stops reading once its
answer is complete must never cut a connection the pool has already handed to another call."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from config import Settings
from llm import AnthropicProvider, LLMError, Request
from standin import StandIn
from support.agents import TEST_KEY
from support.helpers import user

CALLS, ROUNDS = 8, 6


def test_many_streams_finishing_at_the_same_moment_all_succeed():
    barrier = threading.Barrier(CALLS)

    def brain(body):
        barrier.wait(timeout=60)        # every answer is released at the same moment
        return {"text": "done " + body["messages"][-1]["content"]}
    server = StandIn(brain=brain, api_key=TEST_KEY).start()
    try:
        provider = AnthropicProvider(Settings(anthropic_api_key=TEST_KEY, anthropic_base_url=server.url,
                                              api_max_retries=0, model_id="claude-sonnet-4-6"))

        def calls(n: int) -> list[str]:
            out = []
            for r in range(ROUNDS):
                question = f"call {n} round {r}"
                try:
                    reply = provider.stream(Request(model="claude-sonnet-4-6", system="You are a test.",
                                                    messages=[user(question)], max_tokens=100))
                    out.append(reply.content[0]["text"])
                except LLMError as exc:
                    out.append(f"failed: {exc}")
                    barrier.abort()     # the others' answers would wait for this one forever
                    break
            return out
        with ThreadPoolExecutor(CALLS) as pool:
            answers = list(pool.map(calls, range(CALLS)))
        assert answers == [[f"done call {n} round {r}" for r in range(ROUNDS)] for n in range(CALLS)]
    finally:
        server.stop()

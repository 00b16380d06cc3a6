"""Prompt caching: the stand-in's simulation, the agent's breakpoints, and compaction that keeps the
cache warm (batched clearing, summary requests that share the conversation's prefix)."""

from __future__ import annotations

import json

from support.helpers import Model, is_summary_request, plain
from standin import count_request_tokens
from standin.cache import LOOKBACK, MIN_CACHEABLE, PromptCache, shared_prefix

EPH = {"type": "ephemeral"}


def body(*texts, marks=(), tool_choice=None):
    messages = []
    for i, t in enumerate(texts):
        block = {"type": "text", "text": t, **({"cache_control": EPH} if i in marks else {})}
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": [block]})
    out = {"model": "m", "max_tokens": 10, "system": "sys", "messages": messages}
    if tool_choice:
        out["tool_choice"] = tool_choice
    return out


def test_simulated_cache_reads_writes_and_minimum():
    cache, big = PromptCache(), "word " * 1500
    first = cache.usage(body(big, marks=[0]))
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > MIN_CACHEABLE
    second = cache.usage(body(big, "answer", "more", marks=[2]))
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    small = PromptCache().usage(body("tiny", marks=[0]))
    assert small["cache_creation_input_tokens"] == 0 and small["cache_read_input_tokens"] == 0


def test_simulated_look_back_is_twenty_blocks_and_tool_choice_invalidates_messages():
    cache, big = PromptCache(), "word " * 1500
    cache.usage(body(big, marks=[0]))
    far = [big] + [f"filler {i}" for i in range(LOOKBACK + 2)]
    assert cache.usage(body(*far, marks=[len(far) - 1]))["cache_read_input_tokens"] == 0
    assert cache.usage(body(*far, marks=[0, len(far) - 1]))["cache_read_input_tokens"] > 0
    fresh = PromptCache()
    fresh.usage(body(big, marks=[0]))
    changed = fresh.usage(body(big, "x", "y", marks=[2], tool_choice={"type": "none"}))
    assert changed["cache_read_input_tokens"] == 0


def test_ideal_prefix_walk():
    seen = set()
    assert shared_prefix(body("a " * 100), seen)[0] == 0
    shared, total = shared_prefix(body("a " * 100, "b", "c"), seen)
    assert 0 < shared < total


def marks(request):
    found = [("system", b) for b in request["system"] if isinstance(request["system"], list) and b.get("cache_control")]
    for i, m in enumerate(request["messages"]):
        if isinstance(m["content"], list):
            found += [(i, b) for b in m["content"] if b.get("cache_control")]
    return [where for where, _ in found]


def test_breakpoints_on_system_previous_and_newest_message(app_for, standin, workspace):
    (workspace / "a.py").write_text("print('a')\n" * 400)
    standin.brain = Model(*[{"tool_calls": [{"name": "read_file", "input": {"path": "a.py"}},
                                            {"name": "bash", "input": {"command": f"echo {i}"}}]} for i in range(3)],
                          {"text": "done"})
    app, _ = app_for()
    app.turn("look around")
    for n, request in enumerate(standin.requests):
        where = marks(request)
        last = len(request["messages"]) - 1
        assert len(where) <= 4 and where[0] == "system" and where[-1] == last
        if n:
            assert len(where) == 3 and where[1] == len(standin.requests[n - 1]["messages"]) - 1
    reads = [u["cache_read_input_tokens"] for u in standin.usages]
    assert reads[0] == 0 and all(r > 0 for r in reads[2:])   # (the first prompt is below the cacheable minimum)
    assert standin.usages[-1]["cache_creation_input_tokens"] < standin.usages[-1]["cache_read_input_tokens"]


def test_prompt_cache_off_sends_no_breakpoints(app_for, standin):
    standin.queue({"text": "hi"})
    app, _ = app_for(prompt_cache="off")
    app.turn("hello")
    assert "cache_control" not in json.dumps(standin.requests[-1])


def test_batched_clearing_leaves_the_sent_prefix_identical_until_it_fires(app_for, standin):
    rounds = [{"tool_calls": [{"name": "bash", "input": {"command": f"seq {i} 1200"}}]} for i in range(8)]
    standin.brain = Model(*rounds, {"text": "done"})
    app, events = app_for(micro_clear_at_least=8_000, keep_recent=2, recent_work=0)   # batching alone
    app.turn("run the sequence commands")
    requests = [plain(r["messages"]) for r in standin.requests]
    fired = [n for n in range(1, len(requests)) if requests[n][:len(requests[n - 1])] != requests[n - 1]]
    assert len(fired) == 1                                  # one batch, not a rewrite on every turn
    cleared = json.dumps(requests[fired[0]]).count("[Previous: used bash]")
    assert cleared >= 3                                     # ...that cleared several results at once
    assert any(e.layer == "micro_compact" for e in events if hasattr(e, "layer"))


def test_summary_request_shares_the_conversation_prefix(app_for, standin):
    standin.brain = Model({"text": "a long answer " * 600}, {"text": "second answer " * 600}, {"text": "after"},
                          summaries=[{"text": "SUMMARY"}])
    app, _ = app_for()
    app.turn("first question")
    app.turn("second question")
    app.compact("")
    summary = next(n for n, r in enumerate(standin.requests) if is_summary_request(r))
    before = plain(standin.requests[summary - 1]["messages"])
    sent = plain(standin.requests[summary]["messages"])
    assert sent[:len(before)] == before                     # the history as sent, then the instruction
    usage = next(u for u in standin.usages if u["request"] == summary)
    previous = count_request_tokens(standin.requests[summary - 1])
    assert usage["cache_read_input_tokens"] >= 0.95 * previous    # all that was sent before comes from cache
    assert usage["cache_creation_input_tokens"] == 0        # nothing is written that nobody will read


def test_price_table_and_override():
    from session.costs import TokenTally, price_of
    assert price_of("claude-sonnet-4-6") == (3.0, 15.0) and price_of("claude-opus-4-5-20251101") == (5.0, 25.0)
    assert price_of("some-other-model") is None and price_of("some-other-model", "2,8") == (2.0, 8.0)
    t = TokenTally()
    t.add({"input_tokens": 1_000_000, "cache_creation_input_tokens": 1_000_000, "cache_read_input_tokens": 1_000_000,
           "output_tokens": 100_000})
    assert t.billed_input == 2_350_000 and abs(t.dollars((3.0, 15.0)) - (2.35 * 3 + 1.5)) < 1e-9
    assert t.dollars(None) is None and abs(t.hit_rate - 1 / 3) < 1e-9


def test_the_summary_request_is_the_history_as_sent_even_when_micro_cleared_first(workspace):
    """micro_compact clears in the same prepare() that then summarizes: the summary request must be the
    history as it was sent (what the prompt cache holds), not the rewritten one (which it never saw)."""
    from compaction import Compactor
    from config import Settings
    from support.helpers import round_trip, user
    messages = [user("go")]
    for i in range(6):
        messages += round_trip("bash", f"old output {i} " * 300, command=f"c{i}")
    requests = []
    compactor = Compactor(Settings(context_limit=1_000, micro_clear_at_least=0), workspace,
                          lambda request: (requests.append(request), ("SUMMARY", "end_turn"))[1])
    events = []
    compactor.emit = events.append
    out = compactor.prepare(messages)
    assert [e.layer for e in events][:2] == ["micro_compact", "auto_compact"]
    assert requests[0][:-1] == messages[:-2]               # as sent: nothing cleared, up to the unseen round
    assert "[Previous: used bash]" not in json.dumps(requests[0])
    assert out[0]["content"][0]["text"].startswith("[compacted]")


def test_prices_match_exact_or_dated_ids_only():
    from session.costs import price_of
    assert price_of("claude-opus-4-5-20251101") == (5.0, 25.0)
    assert price_of("claude-opus-4-6") is None and price_of("claude-sonnet-4-7") is None


def test_an_interrupted_answer_is_still_counted(app_for, standin):
    standin.queue({"drop": "mid", "text": "partial " * 100}, {"text": "fine"})
    app, events = app_for(api_max_retries=0)
    app.turn("first")
    app.turn("second")
    assert app.ledger.session.calls == 2 and app.ledger.session.uncached > 0


def test_simulated_cache_entries_expire_after_five_idle_minutes():
    now = [0.0]
    cache, big = PromptCache(clock=lambda: now[0]), "word " * 1500
    cache.usage(body(big, marks=[0]))
    now[0] += 299
    assert cache.usage(body(big, "a", "b", marks=[0, 2]))["cache_read_input_tokens"] > 0    # read: refreshed
    now[0] += 299
    assert cache.usage(body(big, "a", "b", marks=[2]))["cache_read_input_tokens"] > 0
    now[0] += 301
    assert cache.usage(body(big, "a", "b", marks=[2]))["cache_read_input_tokens"] == 0      # expired

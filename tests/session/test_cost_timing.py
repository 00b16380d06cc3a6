"""Cost that holds for real sessions: a window learned from the API, compaction timed by the prompt
cache, the 1-hour cache for the stable prefix, and per-call work that does not grow with the history
(the index's decisions are exactly the uncached ones)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from compaction import Compactor, estimate_tokens, micro_compact, tool_result_budget
from config import Settings
from session.costs import TokenTally
from events import Compaction, Notice
from support.helpers import Model, is_summary_request
from loop.prompt_cache import cache_breakpoints
from session.log import LoggedHistory, load_session
from standin import InvalidRequest, validate_request
from standin.cache import PromptCache
from support.strategies import histories

_SAVED = re.compile(r"\.task_outputs/[^\s\"]+")


@pytest.fixture(scope="module")
def index_workspace(tmp_path_factory) -> Path:
    """One folder for the outputs the index test persists (module-scoped: hypothesis reruns the test)."""
    return tmp_path_factory.mktemp("s08-index")


def same(a, b) -> bool:
    """Equal, but for the (unique) names of files persisted outputs were written to."""
    return _SAVED.sub("<file>", json.dumps(list(a))) == _SAVED.sub("<file>", json.dumps(list(b)))


# ---- the index: computed once per message, never a different answer ---------------------------------

@settings(max_examples=50)
@given(histories(), st.integers(0, 4), st.sampled_from([0, 500, 5_000]), st.booleans(), st.data())
def test_the_index_decides_exactly_what_the_uncached_layers_decide(index_workspace, history, keep_recent,
                                                                    clear_at_least, logged, data):
    folder = index_workspace
    s = Settings(snip_max_messages=10 ** 6, persist_threshold=8_000, round_budget=20_000, keep_recent=keep_recent,
                 micro_clear_at_least=clear_at_least, context_limit=10 ** 6, recent_work=0)
    compactor = Compactor(s, folder, lambda r: ("", None))
    messages = LoggedHistory() if logged else []

    def check():
        before = copy.deepcopy(list(messages))
        expected = micro_compact(tool_result_budget(list(messages), 8_000, 20_000, workspace=folder),
                                 keep_recent, s.preserved_tools, clear_at_least=clear_at_least)
        out = compactor.cheap_layers(messages)
        assert same(out, expected) and list(messages) == before
        if out is not messages:
            messages[:] = out
        assert compactor.measure(messages) == estimate_tokens(messages)       # nothing anchored here

    for message in history:     # grows as in a session: results arrive one by one into one message
        content = message["content"] if isinstance(message["content"], list) else []
        if message["role"] == "user" and len(content) > 1 and data.draw(st.booleans()):
            messages.append({**message, "content": content[:1]})
            if data.draw(st.booleans()):
                check()
            messages[-1] = message
        else:
            messages.append(message)
        if message["role"] == "user" and data.draw(st.booleans()):     # not every message is followed by a call
            check()
    total = max(1000, estimate_tokens(messages))      # a usage far below the estimate is not trusted (pipeline.py)
    compactor.observe(messages, {"input_tokens": 5, "cache_read_input_tokens": total - 5, "output_tokens": 0})
    assert compactor.measure(messages) == total


def test_a_session_history_says_what_changed_since_a_version():
    h = LoggedHistory([{"role": "user", "content": "a"}])
    v = h.version
    h.append({"role": "assistant", "content": [{"type": "text", "text": "b"}]})
    assert h.lowest_change_since(v) == 1
    h[0] = {"role": "user", "content": "c"}
    assert h.lowest_change_since(v) == 0 and h.lowest_change_since(h.version) == len(h)
    for bypass in (lambda: h.sort(), lambda: h.reverse(), lambda: h.remove(h[0])):
        with pytest.raises(TypeError):
            bypass()
    h += [{"role": "user", "content": "d"}]                  # += goes through the log like append
    assert h.lowest_change_since(v) == 0 and len(h) == 3


# ---- a window learned from the API ------------------------------------------------------------------

def reads(workspace, n, lines=900):
    replies = []
    for i in range(n):
        (workspace / f"m{i}.py").write_text("".join(f"def f{i}_{k}(x): return x * {k}\n" for k in range(lines)))
        replies += [{"tool_calls": [{"name": "read_file", "input": {"path": f"m{i}.py"}}]}, {"text": f"read {i}"}]
    return replies


def test_the_window_the_api_states_is_used_for_the_session_and_its_resume(app_for, standin, workspace):
    standin.context_window = 12_000
    standin.brain = Model(*reads(workspace, 6, 400), summaries=[{"text": "Summary: modules read."}])
    app, events = app_for()
    for i in range(6):
        assert app.turn(f"read module {i}").ok
    refused = [a for a in standin.answers if a.startswith("400 prompt is too long")]
    assert len(refused) == 1                                             # at most one overflow for a fixed window
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices.count("[context window is 12,000 tokens for this model; compacting at 9,000]") == 1
    app.close()
    resumed = load_session(app.messages.log.path)
    assert resumed.window == 12_000
    from agent import App
    from support.agents import base_env
    again = App(workspace, environ=base_env(workspace.parent, standin), resume=resumed)
    assert again.agent.compactor.limit == 9_000 and again.agent.compactor.window.source == "learned from the API"
    again.close()


# ---- compaction timed by the prompt cache -----------------------------------------------------------

def history_at(app_for, standin, workspace, share: float, **settings):
    """An app whose history is about `share` of CONTEXT_LIMIT (10,000), on a clock the test moves."""
    now = [1000.0]
    standin.brain = Model(*reads(workspace, 2, 300), {"text": "later"}, summaries=[{"text": "Summary: read two."}])
    app, events = app_for(context_limit=10_000, micro_clear_at_least=10 ** 6, **settings)
    app.agent.compactor.cache.clock = lambda: now[0]
    for i in range(2):
        app.turn(f"read module {i}")
    size = app.agent.compactor.measure(app.messages)
    assert 0.5 * 10_000 < size < 10_000, size                     # past COLD_COMPACT_AT (0.5), under the limit
    return app, events, now


def test_a_turn_on_a_cold_cache_compacts_past_the_threshold(app_for, standin, workspace):
    app, events, now = history_at(app_for, standin, workspace, 0.6)
    now[0] += 6 * 60                                              # the person paused: the cache expired
    app.turn("and now?")
    triggered = [e.message for e in events if isinstance(e, Compaction) and e.layer == "auto_compact"]
    assert triggered and "the prompt cache has expired" in triggered[-1]
    assert any(is_summary_request(r) for r in standin.requests)


def test_a_first_message_alone_on_a_cold_cache_is_not_summarized(app_for, standin, workspace):
    """A new session (or one just cleared) starts cold, but its first message is all there is: a big paste
    is sent as it is, not summarized before the model ever saw it."""
    standin.brain = Model({"text": "read it"}, summaries=[{"text": "Summary: a paste."}])
    app, events = app_for(context_limit=10_000)
    assert app.turn("here is the log: " + "gcc -c src/mod.c -o build/mod.o ok; " * 700).ok
    assert app.agent.compactor.measure(app.messages) > 0.5 * 10_000          # past COLD_COMPACT_AT
    assert not [e for e in events if isinstance(e, Compaction) and e.layer == "auto_compact"]
    assert not any(is_summary_request(r) for r in standin.requests)


def test_a_turn_on_a_warm_cache_does_not(app_for, standin, workspace):
    app, events, now = history_at(app_for, standin, workspace, 0.6, background_compact="off")   # none prepared
    now[0] += 60
    app.turn("and now?")
    assert not [e for e in events if isinstance(e, Compaction) and e.layer == "auto_compact"]
    assert not any(is_summary_request(r) for r in standin.requests)


# ---- the 1-hour cache for the stable prefix ---------------------------------------------------------

def test_one_hour_breakpoints_come_first_and_outlive_a_pause():
    system, messages = "s" * 6000, [{"role": "user", "content": "first " * 800},
                                    {"role": "assistant", "content": [{"type": "text", "text": "ok " * 300}]},
                                    {"role": "user", "content": "again"}]
    sys_blocks, marked, _ = cache_breakpoints(system, messages, messages[1], True, "prefix")
    body = {"model": "m", "max_tokens": 10, "system": sys_blocks, "messages": marked}
    validate_request(body)
    controls = [b["cache_control"] for m in marked if isinstance(m["content"], list) for b in m["content"]
                if "cache_control" in b]
    assert sys_blocks[0]["cache_control"]["ttl"] == "1h" and controls[0] == {"type": "ephemeral", "ttl": "1h"}
    assert all("ttl" not in c for c in controls[1:]) and len(controls) == 3
    now = [0.0]
    cache = PromptCache(clock=lambda: now[0])
    first = cache.usage(body)
    assert first["cache_creation"]["ephemeral_1h_input_tokens"] > 0
    now[0] += 20 * 60                                             # the 5-minute entries are gone, not the prefix
    later = cache.usage(body)
    assert later["cache_read_input_tokens"] == first["cache_creation"]["ephemeral_1h_input_tokens"]
    tally = TokenTally()
    tally.add(first)
    assert tally.billed_input == pytest.approx(first["input_tokens"] + first["cache_creation"]["ephemeral_5m_input_tokens"]
                                               * 1.25 + first["cache_creation"]["ephemeral_1h_input_tokens"] * 2)


def test_the_stand_in_refuses_a_one_hour_breakpoint_after_a_five_minute_one():
    body = {"model": "m", "max_tokens": 10, "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi",
                                                        "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]}
    with pytest.raises(InvalidRequest, match=r"messages.0.content.0.cache_control.ttl: a ttl='1h' cache_control block "
                                             r"must not come after a ttl='5m'"):
        validate_request(body)


def test_a_five_minute_entry_read_through_an_hour_breakpoint_is_not_upgraded():
    now, cache = [0.0], None
    body = {"model": "m", "max_tokens": 10, "system": [{"type": "text", "text": "s " * 1500,
                                                         "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": "hi"}]}
    cache = PromptCache(clock=lambda: now[0])
    cache.usage(body)
    body["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    assert cache.usage(body)["cache_read_input_tokens"] > 0
    now[0] += 6 * 60
    assert cache.usage(body)["cache_read_input_tokens"] == 0        # it lived 5 minutes, as written


@settings(max_examples=40)
@given(histories(), st.sampled_from(["5m", "prefix", "1h"]), st.integers(0, 30), st.booleans())
def test_breakpoints_are_always_a_request_the_api_accepts(history, ttl, anchor_at, tail):
    anchor = history[min(anchor_at, len(history) - 1)]
    system, marked, _ = cache_breakpoints("system prompt", history, anchor, tail, ttl)
    validate_request({"model": "m", "max_tokens": 10, "system": system, "messages": marked})


def test_auto_uses_the_hour_once_the_person_pauses(app_for, standin):
    now = [0.0]
    standin.brain = Model({"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "four"})
    app, _ = app_for()
    app.agent.compactor.cache.clock = lambda: now[0]
    app.turn("hello")
    app.turn("again")
    assert "1h" not in json.dumps(standin.requests[-1]["system"])
    now[0] += 10 * 60
    app.turn("after a pause")                    # this call notices the pause; the next ones use the hour
    assert app.agent.cache_ttl() == "1h"
    now[0] += 90 * 60
    app.turn("after a long pause")               # nothing outlives 90 minutes: only the stable prefix
    assert app.agent.cache_ttl() == "prefix"


def test_an_absurd_window_in_an_error_is_not_believed():
    from compaction.window import MIN_WINDOW, Window
    window = Window(50_000, 200_000)
    assert not window.learn(1) and not window.learn(MIN_WINDOW - 1) and window.limit == 50_000
    assert window.learn(12_000) and window.limit == 9_000

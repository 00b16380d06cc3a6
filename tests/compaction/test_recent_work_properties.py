"""The recent work survives every compaction path whole, as a property.

A random session (typed messages, tool rounds of 1–3 calls with small to large outputs, answers) grows
past the limit; `recent_start` (recent.py) names where the newest work the model has seen begins, for
RECENT_WORK of the limit. Then one path compacts it: the blocking summary (BACKGROUND_COMPACT=off), a
summary prepared in the background from an earlier snapshot and applied, micro_compact clearing every
old result it may, or cut.py cutting to a target that clearing the older work alone can reach. For any
session and path: every tool result in the recent work is in the result, whole (the same block), and
the result is a request the real API accepts.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from compaction import Compactor, Continuity
from compaction.boundaries import unseen_start
from compaction.cut import cut_to_target
from compaction.micro import clear_saving, clearable_results
from compaction.recent import recent_budget, recent_start
from compaction.tokens import estimate_tokens
from config import Settings
from messages import add_user_text, blocks
from standin import validate_request
from support.helpers import ask, call, results, say
from test_background_properties import model, play, steps, words


def results_in(messages: list[dict]) -> dict[str, dict]:
    return {b["tool_use_id"]: b for m in messages for b in blocks(m) if b.get("type") == "tool_result"}


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return tmp_path_factory.mktemp("recent")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_recent_work_survives_every_compaction_path_whole(shared, data):
    path = data.draw(st.sampled_from(["blocking", "background", "micro", "cut"]))
    share = data.draw(st.sampled_from([0.1, 0.2, 0.35]))
    keep, history = Continuity(workspace=shared), []
    first = data.draw(words)
    keep.typed_message(first)
    add_user_text(history, first)
    play(steps(data.draw, data.draw(st.integers(2, 10))), history, keep, [])
    if history[-1]["role"] != "user":
        add_user_text(history, "go on")
        keep.typed_message("go on")
    snapshot = list(history)
    reply_call = call("bash", command="ls")
    history += [ask(reply_call), results((reply_call, "a.py\nb.py\n"))]
    keep.tool_done(reply_call, "a.py\nb.py\n", False)
    play(steps(data.draw, data.draw(st.integers(1, 10))), history, keep, [])
    if history[-1]["role"] != "user":
        add_user_text(history, "go on")
    limit = max(1_000, estimate_tokens(history) - 1)
    recent = recent_start(history, recent_budget(share, limit))
    newest = results_in(history[recent:unseen_start(history)])
    s = Settings(context_limit=limit, context_window=200_000, snip_max_messages=10_000, persist_threshold=10 ** 7,
                 round_budget=10 ** 8, micro_clear_at_least=10 ** 8, prepare_at=0.05, recent_work=share,
                 background_compact="on" if path == "background" else "off", cold_compact_at=1.0)
    compactor = Compactor(s, shared, model([]), continuity=keep)
    compactor.background_summarize = model([])
    if path == "blocking":
        out = compactor.prepare(history)
    elif path == "background":
        compactor.after_reply(snapshot[:1], snapshot[:1] + [say("on it")], final=False)
        compactor.after_reply(snapshot, snapshot + [history[len(snapshot)]], final=False)
        prep = compactor.background.current
        if prep is not None:
            assert prep.done.wait(120)
        out = compactor.prepare(history)
    elif path == "micro":
        compactor.use_settings(Settings(**{**s.__dict__, "micro_clear_at_least": 0, "keep_recent": 0,
                                           "preserve_result_tools": ""}))
        out = compactor.cheap_layers(history)
    else:
        older = {(i, j) for i, j, _n, _t in clearable_results(history, 0, frozenset()) if i < recent}
        target = estimate_tokens(clear_saving(history, shared, older)[0])   # reachable by the older work alone
        out, _count, _outputs = cut_to_target(history, target, estimate_tokens, shared, recent)
        assert estimate_tokens(out) <= target
    event(f"{path}: {'changed' if out is not history else 'unchanged'}")
    event(f"recent results: {min(len(newest), 3)}{'+' if len(newest) > 3 else ''}")
    validate_request({"model": "m", "max_tokens": 10, "messages": out})
    kept = results_in(out)
    for tool_use_id, block in newest.items():
        assert kept.get(tool_use_id) == block, f"{path} did not keep a result of the recent work whole"

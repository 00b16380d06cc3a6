"""Invariants every compaction layer and the whole pipeline must keep, on random valid histories.

Histories mix parallel tool calls, text beside tool_use, huge results, CJK
text, interruptions (text after tool results) and tool rounds right at the
start. For each layer and for the pipeline:
  - the output is a request the real API accepts (checked by the stand-in's validator),
  - the input is not mutated,
  - every message the person typed stays visible, verbatim (continuity.py),
  - the size (estimated tokens) never grows, but for what rides along in the message that
    replaces a cut (the person's messages and the ledger, each within its budget).
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings, strategies as st

from compaction import (Compactor, Continuity, SummaryJob, compact_history, estimate_tokens, micro_compact,
                        reactive_compact, snip_compact, tool_result_budget, unseen_start)
from compaction.tokens import estimate_text
from config import Settings
from standin import validate_request
from support.helpers import counted
from support.strategies import histories


def check(before: list[dict], snapshot: list[dict], after: list[dict], keeps_unseen: bool = True,
          keep: Continuity | None = None) -> None:
    validate_request({"model": "m", "max_tokens": 10, "messages": after})
    unseen = before[unseen_start(before):]
    if keeps_unseen and unseen:
        assert after[-len(unseen):] == unseen, "the round the model has not seen was changed"
    assert before == snapshot, "the input was mutated"
    keep = keep or Continuity.from_history(before)
    shown, numbers = keep.typed.visible(after), counted(after)     # whole or shortened, or (a budget scaled to a
    assert all(i in shown or i + 1 in numbers for i in range(len(keep.typed))), \
        "a message the person typed was lost"                      # small limit) counted where it is whole
    rides = sum(estimate_text(e.text) + 3 for e in keep.typed.entries) + \
        estimate_text(keep.ledger.render(keep.ledger_budget, [".transcripts/snipped_x.jsonl"])) + 60
    assert estimate_tokens(after) <= estimate_tokens(before) + rides, "it grew by more than what rides along"


def summarize(request):
    return "Summary: the user asked for work on the parser; tests were run.", "end_turn"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One workspace for all the examples of this module (a function-scoped one would be shared by
    hypothesis's examples anyway), removed by pytest like any tmp_path."""
    return tmp_path_factory.mktemp("props")


@settings(max_examples=60)
@given(histories())
def test_tool_result_budget_invariants(shared, messages):
    snapshot = copy.deepcopy(messages)
    check(messages, snapshot, tool_result_budget(messages, 8_000, 20_000, workspace=shared), False)


@settings(max_examples=60)
@given(histories(), st.integers(4, 20), st.integers(3, 10))
def test_snip_compact_invariants(shared, messages, max_messages, target):
    snapshot = copy.deepcopy(messages)
    check(messages, snapshot, snip_compact(messages, max_messages, target, workspace=shared))


@settings(max_examples=60)
@given(histories(), st.integers(0, 4), st.sampled_from([0, 0, 2_000, 20_000]))
def test_micro_compact_invariants(messages, keep_recent, clear_at_least):
    snapshot = copy.deepcopy(messages)
    check(messages, snapshot, micro_compact(messages, keep_recent, clear_at_least=clear_at_least))


@settings(max_examples=60)
@given(histories(), st.booleans())
def test_compact_history_invariants(shared, messages, reactive):
    snapshot = copy.deepcopy(messages)
    try:
        if reactive:
            out = reactive_compact(messages, SummaryJob(summarize, window=6_000, workspace=shared))
        else:
            out = compact_history(messages, SummaryJob(summarize, workspace=shared))
    except Exception as exc:       # a refused summary must leave the input exactly as it was
        assert type(exc).__name__ == "SummaryFailed" and messages == snapshot
        return
    check(messages, snapshot, out)


@settings(max_examples=60)
@given(histories(), st.integers(1_000, 20_000), st.booleans())
def test_whole_pipeline_invariants(shared, messages, limit, summary_works):
    config = Settings(context_limit=limit, snip_max_messages=14, snip_target_messages=8,
                      persist_threshold=8_000, round_budget=20_000, micro_clear_at_least=limit // 4)

    def maybe_broken(request):
        if not summary_works:
            raise RuntimeError("overloaded")
        return summarize(request)
    keep = Continuity.from_history(messages)
    compactor = Compactor(config, shared, maybe_broken, continuity=keep)
    snapshot = copy.deepcopy(messages)
    out = compactor.prepare(messages)
    check(messages, snapshot, out, False, keep)
    again = compactor.prepare(out)                     # a second pass never breaks anything either
    check(out, copy.deepcopy(out), again, False, keep)


@settings(max_examples=60)
@given(histories(), st.integers(300, 6_000))
def test_a_shortened_summary_request_is_always_valid(messages, budget):
    from compaction.summary import summary_request
    request = summary_request(messages, "<summary-request>sum</summary-request>", budget,
                              transcript=".transcripts/t.jsonl")
    validate_request({"model": "m", "max_tokens": 10, "messages": request})
    assert request[-1]["content"].startswith("<summary-request>")

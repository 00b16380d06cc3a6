"""The identity contract (compaction/__init__.py) and the layer interface (compaction/layer.py).

On random valid histories, for every layer in pipeline.LAYERS and for Compactor.prepare:
  - the input is not mutated (compared with a deep copy taken before),
  - a message the layer did not change is the very same object in the output,
  - a message it changed or wrote is a new dict, never one of the input's objects changed in place,
  - the output keeps every tool_use/tool_result pair (the stand-in's validator).
And: each layer's settings default to config.py's defaults, adding a layer is one entry in LAYERS,
and a layer that cannot write to disk is skipped for that call without ending the turn.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings, strategies as st

import compaction.budget
from compaction import (LAYERS, BudgetSettings, CompactionKind, Compactor, Continuity, MessageIndex, LayerContext,
                        MicroSettings, SnipSettings, SummaryJob)
from compaction.continuity import LEDGER_BUDGET, USER_MESSAGES_BUDGET
from compaction.summary import CONTEXT_WINDOW, SUMMARY_MAX_TOKENS
from compaction.window import Window
from config import Settings
from events import Compaction, Notice
from support.helpers import ask, call, results, say, user
from standin import validate_request
from support.strategies import histories

SMALL = Settings(snip_max_messages=14, snip_target_messages=8, persist_threshold=8_000, round_budget=20_000,
                 micro_clear_at_least=500, keep_recent=2)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return tmp_path_factory.mktemp("identity")


def keeps_identity(before: list[dict], snapshot: list[dict], after: list[dict]) -> None:
    assert before == snapshot, "the input was mutated"
    validate_request({"model": "m", "max_tokens": 10, "messages": after})
    originals = {id(m) for m in before}
    for i, m in enumerate(after):
        if id(m) in originals:
            continue                    # the same object: and it was not changed (the input is unmutated)
        assert not any(m == old for old in snapshot), f"message {i} is unchanged but a new object"


def context_for(messages: list[dict], workspace, cold: bool = False) -> LayerContext:
    index = MessageIndex(SMALL.preserved_tools)
    index.sync(messages)
    return LayerContext(workspace, Continuity.from_history(messages, workspace),
                        Window(SMALL.context_limit, SMALL.context_window), index, cold=cold)


@settings(max_examples=40)
@given(histories(), st.sampled_from(LAYERS), st.booleans())
def test_every_layer_keeps_the_identity_contract(shared, messages, layer_class, cold):
    layer = layer_class.from_settings(SMALL)
    snapshot = copy.deepcopy(messages)
    out = layer(messages, context_for(messages, shared, cold))
    keeps_identity(messages, snapshot, out)
    again = layer(out, context_for(out, shared, cold))
    keeps_identity(out, copy.deepcopy(out), again)


@settings(max_examples=40)
@given(histories(), st.integers(1_000, 20_000), st.booleans())
def test_the_pipeline_keeps_the_identity_contract(shared, messages, limit, summary_works):
    def summarize(request):
        if not summary_works:
            raise RuntimeError("overloaded")
        return "Summary: the parser work went on.", "end_turn"
    compactor = Compactor(Settings(**{**SMALL.__dict__, "context_limit": limit}), shared, summarize,
                          continuity=Continuity.from_history(messages, shared))
    snapshot = copy.deepcopy(messages)
    out = compactor.prepare(messages)
    keeps_identity(messages, snapshot, out)
    again = compactor.prepare(out)
    keeps_identity(out, copy.deepcopy(out), again)


def test_layer_settings_default_to_the_settings_table():
    """The layers' own defaults cannot drift from config.py's."""
    defaults = Settings()
    assert BudgetSettings() == BudgetSettings.from_settings(defaults)
    assert SnipSettings() == SnipSettings.from_settings(defaults)
    assert MicroSettings() == MicroSettings.from_settings(defaults)
    assert (USER_MESSAGES_BUDGET, LEDGER_BUDGET) == (defaults.user_messages_budget, defaults.ledger_budget)
    assert (CONTEXT_WINDOW, SUMMARY_MAX_TOKENS) == (defaults.context_window, defaults.summary_max_tokens)
    job = SummaryJob(lambda r: ("", None))
    assert job.window == defaults.context_window


def test_every_layer_has_a_kind_and_is_built_from_the_settings():
    compactor = Compactor(SMALL, ".", lambda r: ("", None))
    assert [type(layer) for layer in compactor.layers] == list(LAYERS)
    assert [layer.name for layer in compactor.layers] == ["tool_result_budget", "snip_compact", "micro_compact"]
    assert all(isinstance(layer.name, CompactionKind) for layer in compactor.layers)
    assert CompactionKind.MANUAL_COMPACT.label == "manual compact" and f"[{CompactionKind.AUTO_COMPACT}]" == \
        "[auto_compact]"


def test_new_settings_rebuild_the_layers_and_keep_what_was_learned(workspace):
    compactor = Compactor(SMALL, workspace, lambda r: ("", None))
    compactor.snip_transcript, compactor.breaker.failures = workspace / "t.jsonl", 2
    compactor.endpoint.learn_window(100_000, quiet=True)
    index, continuity = compactor.index, compactor.continuity
    compactor.use_settings(Settings(**{**SMALL.__dict__, "snip_max_messages": 30, "keep_recent": 5}))
    assert compactor.layers[1].settings.max_messages == 30 and compactor.layers[2].settings.keep_recent == 5
    assert compactor.index is index and compactor.continuity is continuity
    assert (compactor.snip_transcript, compactor.breaker.failures, compactor.window.learned) == \
        (workspace / "t.jsonl", 2, 100_000)


def test_the_snip_transcript_comes_back_from_the_layer_not_from_an_event(workspace):
    messages = [user("first request")]
    for i in range(20):
        c = call("bash", command=f"step {i}")
        messages += [ask(c), results((c, f"output {i} " * 20))]
    messages += [say("done"), user("next")]
    events = []
    compactor = Compactor(SMALL, workspace, lambda r: ("", None), emit=events.append)
    out = compactor.cheap_layers(messages)
    [snip] = [e for e in events if isinstance(e, Compaction) and e.layer == CompactionKind.SNIP_COMPACT]
    assert len(out) < len(messages) and compactor.snip_transcript is not None
    assert compactor.snip_transcript.name in snip.message


def test_a_layer_that_cannot_write_is_skipped_and_the_others_still_run(workspace, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(compaction.budget, "write_output", full_disk)
    old = [call("bash", command=f"c{i}") for i in range(4)]
    messages = [user("go")] + [m for c in old for m in (ask(c), results((c, "x" * 3_000)))]
    big = call("bash", command="seq")
    messages += [ask(big), results((big, "y" * 50_000))]
    events = []
    settings_ = Settings(**{**SMALL.__dict__, "micro_clear_at_least": 0, "keep_recent": 1, "recent_work": 0})
    out = Compactor(settings_, workspace, lambda r: ("", None), emit=events.append).cheap_layers(messages)
    warnings = [e.text for e in events if isinstance(e, Notice) and e.kind == "warning"]
    assert warnings and warnings[0].startswith("[tool_result_budget could not write to disk: No space left")
    assert out[-1] is messages[-1]                       # the big output stays in the context
    assert any(e.layer == CompactionKind.MICRO_COMPACT for e in events if isinstance(e, Compaction))

"""A summary prepared in the background, applied to a history that grew after its snapshot, as a property.

A random session runs up to a model call (the snapshot: the history as sent); the reply comes, the
compactor starts preparing (`after_reply`, a real thread); the session grows on — the person types,
tool rounds, answers; then the context is over the limit and `prepare` applies the prepared summary.
For any such session:
  - the result is a request the real API accepts (the stand-in's validator): no tool pair is split;
  - everything after the snapshot is kept as it was (the same objects), except that the tool results the
    model has seen there — no summary covers them — are cleared to pointers (the placeholder names the
    saved copy, whose file holds it byte for byte); the round it has not seen stays whole;
  - every typed message and every ledger path is in it (the budgets are large enough for all);
  - its summary message equals what the blocking compaction (compact_history, the same code) makes of
    the same history cut at the same place, with the same model — and its summary is the one a blocking
    compaction at the moment of the snapshot would have written;
  - the summary request was the blocking design's: the history as sent, then the instruction.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from compaction import Compactor, Continuity, compact_history
from compaction.summary import MIN_SUMMARIZABLE_TOKENS, SummaryJob, input_budget
from compaction.boundaries import result_text, unseen_start
from compaction.markers import MIN_CHARS, PLACEHOLDER_PREFIX
from compaction.tokens import estimate_text, estimate_tokens
from compaction.user_messages import NOTE_TOKENS
from config import Settings
from support.helpers import ask, call, phrases, results, say
from messages import add_user_text, blocks
from standin import validate_request

WORDS = ["never", "touch", "legacy/", "keep", "tabs", "不要", "修改", "parser", "[compacted]", "Summary"]
FOLDERS = ["src", "legacy", "docs", "测试"]
words = st.sampled_from(phrases(WORDS, 8))
TRANSCRIPT = re.compile(r"\.transcripts/[^\s\"\\]+?\.jsonl")


def model(requests: list):
    """A deterministic summarizer: its text depends on exactly what it was sent."""
    def summarize(request, _emit=None):
        requests.append(request)
        digest = hashlib.sha256(TRANSCRIPT.sub("T", json.dumps(request, ensure_ascii=False)).encode()).hexdigest()
        return f"summary {digest[:12]}", "end_turn"
    return summarize


def steps(draw, count: int) -> list[tuple]:
    out = []
    for _ in range(count):
        kind = draw(st.sampled_from(["type", "tools", "tools", "answer"]))
        if kind == "type":
            out.append(("type", draw(words)))
        elif kind == "tools":
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                name = draw(st.sampled_from(["read_file", "write_file", "bash"]))
                path = f"{draw(st.sampled_from(FOLDERS))}/f{draw(st.integers(0, 30))}.py"
                calls.append((name, path, draw(st.sampled_from([2, 60, 600]))))
            out.append(("tools", calls))
        else:
            out.append(("answer", draw(words)))
    return out


def play(steps_, messages: list[dict], keep: Continuity, calls_made: list) -> None:
    for step in steps_:
        if step[0] == "type":
            keep.typed_message(step[1])
            add_user_text(messages, step[1])
        elif step[0] == "answer":
            if messages[-1]["role"] == "assistant":
                add_user_text(messages, "go on")
                keep.typed_message("go on")
            messages.append(say(step[1]))
        else:
            if messages[-1]["role"] == "assistant":
                add_user_text(messages, "go on")
                keep.typed_message("go on")
            blocks = [call(name, command=f"grep x {path}") if name == "bash" else call(name, path=path)
                      for name, path, _ in step[1]]
            messages.append(ask(*blocks))
            outs = [(b, "line of output\n" * lines) for b, (_, _, lines) in zip(blocks, step[1])]
            messages.append(results(*outs))
            for b, out in outs:
                keep.tool_done(b, out, False)
                calls_made.append(b)


def kept_as_pointers(kept: list[dict], grown: list[dict], workspace: Path) -> None:
    """`kept` is `grown` with the results the model has seen cleared to pointers, and nothing else changed."""
    unseen = unseen_start(grown)
    for i, (new, old) in enumerate(zip(kept, grown)):
        seen = [b for b in blocks(old) if i < unseen and b.get("type") == "tool_result"
                and len(result_text(b)) > MIN_CHARS and not result_text(b).startswith(PLACEHOLDER_PREFIX)]
        if not seen:
            assert new is old
            continue
        assert new["role"] == old["role"] == "user" and len(new["content"]) == len(old["content"])
        for a, b in zip(new["content"], old["content"]):
            if not any(b is s for s in seen):
                assert a == b
                continue
            assert a["type"] == "tool_result" and a["tool_use_id"] == b["tool_use_id"]
            assert a["content"].startswith(PLACEHOLDER_PREFIX), f"a result the model had seen kept whole: {a}"
            saved = re.search(r"saved at (\S+)", a["content"])          # every one, whatever its size
            assert saved and (workspace / saved.group(1)).read_text(encoding="utf-8") == result_text(b)


def ends_with_user(messages) -> bool:
    return bool(messages) and messages[-1]["role"] == "user"


def normalized(messages) -> str:
    return TRANSCRIPT.sub("T", json.dumps(messages, ensure_ascii=False))


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("background")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_a_prepared_summary_applied_to_a_grown_history_is_the_blocking_compaction_of_its_prefix(shared, data):
    before, after = steps(data.draw, data.draw(st.integers(2, 10))), steps(data.draw, data.draw(st.integers(1, 10)))
    first = data.draw(words)
    keep, history, calls_made = Continuity(workspace=shared), [], []
    keep.typed_message(first)
    add_user_text(history, first)
    play(before, history, keep, calls_made)
    if not ends_with_user(history):
        add_user_text(history, "go on")
        keep.typed_message("go on")
    snapshot = list(history)
    reply_call = call("bash", command="ls")     # the reply to the snapshot: a tool round the loop runs on
    reply, answered = ask(reply_call), results((reply_call, "a.py\nb.py\n"))
    history += [reply, answered]
    keep.tool_done(reply_call, "a.py\nb.py\n", False)
    play(after, history, keep, calls_made)
    ref_keep, ref_history = copy.deepcopy(keep), copy.deepcopy(history)     # for the blocking reference
    limit = max(1_000, min(estimate_tokens(history) - 1,     # over the limit only once it grew: applied then;
                           2 * estimate_tokens(snapshot + [reply])))   # near enough for a summary to be due
    s = Settings(context_limit=limit, context_window=200_000, snip_max_messages=10_000, persist_threshold=10 ** 7,
                 round_budget=10 ** 8, micro_clear_at_least=10 ** 8, user_messages_budget=10 ** 6,
                 ledger_budget=10 ** 6, prepare_at=0.05, background_compact="on",
                 recent_work=0)     # (the recent work kept whole: test_recent_work_properties.py)
    requests: list = []
    compactor = Compactor(s, shared, model(requests), continuity=keep)
    compactor.background_summarize = model(requests)
    compactor.after_reply(snapshot[:1], snapshot[:1] + [say("on it")], final=False)   # an earlier call of the
    compactor.after_reply(snapshot, snapshot + [reply], final=False)   # turn: it grows fast, a summary is due
    prep = compactor.background.current
    if prep is None:         # too little to summarize: nothing prepared, nothing to compare
        assert estimate_tokens(snapshot) < MIN_SUMMARIZABLE_TOKENS + 2_000
        return
    assert prep.done.wait(120)
    assert requests[-1] == snapshot + [requests[-1][-1]], "the summary request is the history as sent + instruction"
    out = compactor.prepare(history)
    if compactor.measure(history) <= limit:     # (a small history under the 1,000-token floor) not due
        return
    assert compactor.background.current is None
    summarized = out is not history and str(blocks(out[0])[0].get("text", "")).startswith("[compacted]")
    if not summarized:       # the summary did not save anything: the blocking design keeps the history too
        return
    event("applied")
    validate_request({"model": "m", "max_tokens": 10, "messages": out})
    k = len(snapshot)
    assert len(out) == len(history) - k + 1
    kept_as_pointers(out[1:], history[k:], shared)
    text = json.dumps(out, ensure_ascii=False)
    if sum(estimate_text(e.text) for e in keep.typed.entries) + NOTE_TOKENS <= keep.user_budget:
        for entry in keep.typed.entries:
            assert entry.text in text
    if estimate_text(keep.ledger.render(10 ** 9)) <= keep.ledger_budget:
        for path in keep.ledger.files:
            assert path in text
    # the blocking compaction, the same code, of the same history cut at the same place
    ref_keep.use_settings(s, limit)
    job = SummaryJob(model([]), workspace=shared, window=s.context_window,
                     max_input_tokens=input_budget(s.context_window, s.summary_max_tokens), sent=snapshot,
                     continuity=ref_keep)
    reference = compact_history(ref_history, job, keep_from=k)
    got, want = normalized(out[:1]), normalized(reference[:1])
    assert got == want, next((a, b) for a, b in zip(json.loads(got)[0]["content"], json.loads(want)[0]["content"])
                             if a != b)
    # and its summary is the one a blocking compaction before the call after the snapshot's reply would write
    at_snapshot = compact_history(snapshot + [reply, answered], SummaryJob(
        model([]), workspace=shared, window=s.context_window, sent=snapshot + [reply, answered],
        max_input_tokens=input_budget(s.context_window, s.summary_max_tokens),
        continuity=Continuity(workspace=shared)))
    assert out[0]["content"][1] == at_snapshot[0]["content"][1]

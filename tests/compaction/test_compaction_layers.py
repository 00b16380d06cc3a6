"""Each compaction layer on its own, with files checked on disk."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from compaction import (ContextMeter, SummaryFailed, SummaryJob, compact_history, estimate_tokens, micro_compact,
                        reactive_compact, snip_compact, tool_result_budget)
from compaction.markers import COMPACTED_PREFIX, PLACEHOLDER_PREFIX, SNIP_PREFIX
from compaction.summary import summary_request
from support.helpers import ask, call, results, round_trip, say, user, user_texts
from standin import validate_request
from storage import PERSISTED_OPEN, SAVED_TO, parse_name, read_transcript


def valid(messages):
    validate_request({"model": "m", "max_tokens": 10, "messages": messages})
    return True


# ---- snip_compact -------------------------------------------------------------------------

def seed_history():
    """The seed's worked example: 12 messages, both snip boundaries inside tool pairs."""
    c2, c6 = call("bash", command="ls"), call("read_file", path="a.py")
    words = " — " + ("some words of an ordinary message " * 3).strip()
    return [user("msg0 user text" + words), say("msg1 assistant text" + words), ask(c2),
            results((c2, "out2" + words)), user("msg4 user text" + words), say("msg5 assistant text" + words),
            ask(c6), results((c6, "out6" + words)), user("msg8 user text" + words),
            say("msg9 assistant text" + words), user("msg10 user text" + words), say("msg11" + words)]


def test_snip_reproduces_the_seed_worked_example(workspace):
    messages = seed_history()
    out = snip_compact(messages, max_messages=8, workspace=workspace)
    assert out[:4] == messages[:4] and out[5:] == messages[6:]
    assert len(out) == 11
    marker = out[4]
    assert marker["role"] == "user" and marker["content"][0]["text"].startswith(f"{SNIP_PREFIX}2 messages")
    assert valid(out)


def test_snip_leaves_short_histories_alone(workspace):
    messages = seed_history()
    assert snip_compact(messages, max_messages=12, workspace=workspace) is messages



def test_snip_does_not_cut_only_an_earlier_marker_again(workspace):
    """Found by the identity property test: a history whose middle is only the previous snip's
    marker came back with an equal marker as a new object (and the transcript got a copy of it)."""
    marker = {"role": "user", "content": [{"type": "text", "text": f"{SNIP_PREFIX}4 messages → .transcripts/s.jsonl]"}]}
    messages = [user("please build"), say("build"), user("please build"), marker]
    for i in range(3):
        messages += round_trip("bash", f"output {i}", command=f"step {i}")
    assert len(messages) == 10
    assert snip_compact(messages, max_messages=8, target_messages=8, workspace=workspace) is messages
    assert not (workspace / ".transcripts").exists()

def long_history(rounds: int):
    messages = [user("first request: build the thing")]
    for i in range(rounds):
        messages += round_trip("bash", f"output {i} " * 5, command=f"step {i}")
    messages += [say("done"), user("latest request: now test it")]
    return messages


def test_snip_cuts_well_below_the_trigger_and_saves_what_it_cut(workspace):
    messages = long_history(30)                      # 63 messages
    events = []
    out = snip_compact(messages, max_messages=50, target_messages=30, workspace=workspace, emit=events.append)
    assert len(out) <= 32 and valid(out)     # 3 head + marker + ~27 tail (a pair may add one)
    [event] = events
    assert event.layer == "snip_compact" and event.message.startswith(f"snipped {event.details['count']} messages → .transcripts/")
    header, saved = read_transcript(workspace / event.details["path"])
    assert header is not None and header["kind"] == "snip" and header["of"] == len(messages)
    assert header["messages"] == [3, 3 + len(saved)] and header["tokens_after"] < header["tokens_before"]
    kept_ids = {json.dumps(m, sort_keys=True) for m in out}
    assert len(saved) == event.details["count"] == len(messages) - len(out) + 1
    assert all(json.dumps(m, sort_keys=True) not in kept_ids for m in saved)
    assert event.details["path"].split("/")[-1] in json.dumps(out)      # the marker names the file
    # a second snip gets a file of its own, named with the next ordinal
    longer = out + sum((round_trip("bash", "more " * 10, command=f"x{i}") for i in range(12)), []) + [say("ok")]
    again_events = []
    again = snip_compact(longer, 50, 30, workspace=workspace, transcript=workspace / event.details["path"],
                         emit=again_events.append)
    assert len(again) < len(longer)
    assert len((workspace / event.details["path"]).read_text().splitlines()) == len(saved) + 1
    first, second = (parse_name(Path(e.details["path"]).name) for e in (event, again_events[0]))
    assert first[0] == second[0] and (first[1], second[1]) == (1, 2) and first[2] == second[2] == "snip"


def test_snip_keeps_the_current_request_even_when_it_is_in_the_middle(workspace):
    messages = [user("first"), say("ok"), user("PLEASE refactor parser.py, keep the API")]
    for i in range(40):
        messages += round_trip("bash", "x" * 50, command=f"c{i}")
    out = snip_compact(messages, 50, 30, workspace=workspace)
    assert len(out) < len(messages) and valid(out)
    assert "PLEASE refactor parser.py, keep the API" in user_texts(out)


# ---- tool_result_budget -------------------------------------------------------------------

def test_budget_persists_a_huge_output_with_preview_and_path(workspace):
    big = "".join(f"line {i}\n" for i in range(20_000))
    c = call("bash", command="seq")
    messages = [user("go"), ask(c), results((c, big))]
    before = copy.deepcopy(messages)
    events = []
    out = tool_result_budget(messages, workspace=workspace, emit=events.append)
    assert messages == before                                           # input not mutated
    content = out[2]["content"][0]["content"]
    assert content.startswith(PERSISTED_OPEN) and "line 0\n" in content and "line 19999" in content
    assert f"{len(big):,} chars" in content and "read_file" in content and len(content) < 3000
    path = content.split(SAVED_TO)[1].split()[0]
    assert parse_name(Path(path).name)[1:] == (1, "bash") and (workspace / path).read_text() == big
    assert events[0].message == f"persisted 1 output ({len(big):,} chars) → {path}"
    assert valid(out)
    assert tool_result_budget(out, workspace=workspace) is out            # already persisted: left alone


def test_budget_never_overwrites_whatever_the_ids(workspace):
    paths = set()
    for tool_id in ["toolu_same", "toolu_same", "../../etc/passwd", "a/b\\c", "toolu_same"]:
        block = {"type": "tool_use", "id": tool_id, "name": "bash", "input": {}}
        messages = [user("go"), ask(block), results((block, f"{tool_id} " * 10_000))]
        out = tool_result_budget(messages, workspace=workspace)
        path = out[2]["content"][0]["content"].split(SAVED_TO)[1].split()[0]
        paths.add(path)
        assert (workspace / path).resolve().parent == (workspace / ".task_outputs").resolve()
        assert (workspace / path).read_text().startswith(tool_id)
    assert len(paths) == 5


def test_round_budget_persists_the_largest_first(workspace):
    a, b, c = call("bash", command="a"), call("bash", command="b"), call("read_file", path="c")
    messages = [user("go"), ask(a, b, c), results((a, "a" * 25_000), (b, "b" * 28_000), (c, "c" * 29_000))]
    out = tool_result_budget(messages, threshold=30_000, round_budget=60_000, workspace=workspace)
    contents = [r["content"] for r in out[2]["content"]]
    assert contents[0] == "a" * 25_000                 # fits once the largest bash output is gone
    assert contents[1].startswith(PERSISTED_OPEN)
    assert contents[2] == "c" * 29_000                 # read_file is not chosen for the round budget


# ---- micro_compact ------------------------------------------------------------------------

def test_micro_clears_old_results_and_keeps_what_it_must():
    messages = [user("go")]
    messages += round_trip("bash", "old bash output " * 20, command="ls")                 # cleared
    messages += round_trip("read_file", "file text " * 20, path="a.py")                  # preserved tool
    messages += round_trip("bash", "tiny", command="true")                                # short
    persisted = f"{PERSISTED_OPEN}\n{SAVED_TO}.task_outputs/tool-results/x.txt\n" + "p" * 200
    messages += round_trip("bash", persisted, command="seq")                            # cleared, path kept
    for i in range(3):
        messages += round_trip("bash", f"recent {i} " * 30, command=f"r{i}")             # 3 newest: kept
    events = []
    out = micro_compact(messages, keep_recent=3, clear_at_least=0, emit=events.append)
    texts = [b["content"] for m in out if m["role"] == "user" and isinstance(m["content"], list)
             for b in m["content"]]
    assert texts[0] == f"{PLACEHOLDER_PREFIX}bash]"
    assert texts[1] == "file text " * 20 and texts[2] == "tiny"
    assert texts[3] == f"{PLACEHOLDER_PREFIX}bash] — full output saved at .task_outputs/tool-results/x.txt"
    assert texts[4:] == [f"recent {i} " * 30 for i in range(3)]
    assert events[0].message.startswith("cleared 2 old tool results (~") and valid(out)


def test_micro_never_touches_results_the_model_has_not_seen():
    c1, c2 = call("bash", command="a"), call("bash", command="b")
    messages = [user("go"), ask(c1), results((c1, "seen " * 50)), ask(c2), results((c2, "unseen " * 50))]
    out = micro_compact(messages, keep_recent=0, clear_at_least=0)
    assert out[2]["content"][0]["content"] == f"{PLACEHOLDER_PREFIX}bash]"
    assert out[4]["content"][0]["content"] == "unseen " * 50


def test_micro_waits_for_a_batch_then_clears_everything_at_once():
    messages = [user("go")]
    for i in range(6):
        messages += round_trip("bash", f"output {i} " * 400, command=f"c{i}")    # ~1,000 tokens each
    assert micro_compact(messages, keep_recent=3, clear_at_least=5_000) is messages   # ~3,000 clearable: wait
    messages += round_trip("bash", "more " * 1000, command="c6") + round_trip("bash", "more " * 1000, command="c7")
    out = micro_compact(messages, keep_recent=3, clear_at_least=5_000)            # ~5,000+: all at once
    cleared = [b["content"] for m in out if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b["content"] == f"{PLACEHOLDER_PREFIX}bash]"]
    assert len(cleared) == 5 and valid(out)


# ---- estimate_tokens ----------------------------------------------------------------------

def test_estimate_counts_system_tools_and_cjk():
    english = [user("hello world, " * 100)]
    chinese = [user("上下文压缩" * 260)]
    assert estimate_tokens(chinese) > 3 * (len("上下文压缩" * 260) // 4)
    tools = [{"name": "bash", "description": "run a command " * 20, "input_schema": {"type": "object"}}]
    assert estimate_tokens(english, "system " * 100, tools) > estimate_tokens(english) + 150


def test_meter_anchors_on_usage_and_estimates_only_what_follows():
    meter = ContextMeter()
    messages = [user("x" * 4000), say("ok")]
    meter.observe(messages, {"input_tokens": 10, "cache_read_input_tokens": 5000, "output_tokens": 20})
    assert meter.measure(messages) == 5030
    grown = messages + [user("next question")]
    assert 5030 < meter.measure(grown) < 5050
    copied = [user("x" * 4000), say("ok"), user("next question")]        # equal messages: the same size
    assert meter.measure(copied) == meter.measure(grown)
    rewritten = [user("summary of it"), say("ok"), user("next question")]     # rewritten: no anchor
    assert meter.measure(rewritten) == estimate_tokens(rewritten)


# ---- compact_history / reactive_compact ---------------------------------------------------

def summarizer(text="SUMMARY: the work so far.", stop="end_turn", log=None):
    def summarize(request):
        if log is not None:
            log.append(request)
        return text, stop
    return summarize


def big_history():
    messages = [user("FIRST: write a parser for the log format")]
    for i in range(12):
        messages += round_trip("bash", f"output of step {i} " * 200, command=f"step {i}")
    messages += [say("Parser written."), user("LATEST: now add tests for it")]
    for i in range(2):
        messages += round_trip("bash", f"test run {i} " * 100, command="pytest")
    return messages


def test_compact_history_replaces_the_history_and_keeps_requests_verbatim(workspace):
    messages = big_history()
    before = copy.deepcopy(messages)
    log, events = [], []
    out = compact_history(messages, SummaryJob(summarizer(log=log), workspace=workspace, focus="the parser",
                                               emit=events.append))
    assert messages == before and valid(out)
    texts = user_texts(out)
    assert "LATEST: now add tests for it" in texts
    assert any(t.endswith("FIRST: write a parser for the log format") for t in texts)
    assert any("SUMMARY: the work so far." in t for t in texts)
    assert out[1:] == messages[-2:]                           # the unseen round is kept as it was
    transcript = events[0].details["path"]
    assert events[0].message == f"[transcript saved: {transcript}]" and transcript in texts[0]
    header, saved = read_transcript(workspace / transcript)
    assert saved == messages and header["kind"] == "summary" and header["tokens_after"] is not None
    assert events[-1].message.startswith(f"{COMPACTED_PREFIX} ") and "→" in events[-1].message
    instruction = log[0][-1]["content"]
    assert "Pay special attention to: the parser" in instruction and "verbatim" in instruction
    assert log[0][:-1] == messages[:-2]       # the history as sent up to the unseen round (kept anyway), then
    assert log[0][-1]["content"].startswith("<summary-request>")            # the instruction


@pytest.mark.parametrize("summarize, reason", [
    (summarizer(""), "empty summary"),
    (summarizer(stop="max_tokens"), "cut off"),
])
def test_failed_summaries_raise_and_keep_the_input(workspace, summarize, reason):
    messages = big_history()
    before = copy.deepcopy(messages)
    with pytest.raises(SummaryFailed, match=reason):
        compact_history(messages, SummaryJob(summarize, workspace=workspace))
    assert messages == before


def test_a_summary_that_is_not_smaller_is_cut_down_not_kept_with_the_history(workspace):
    messages = big_history()
    before = copy.deepcopy(messages)
    out = compact_history(messages, SummaryJob(summarizer("x " * 60_000), workspace=workspace))
    assert messages == before and valid(out)
    assert estimate_tokens(out) < estimate_tokens(messages) // 2 + 200
    texts = user_texts(out)
    assert any("characters of this summary left out to fit the model's window" in t for t in texts)
    assert "LATEST: now add tests for it" in texts


def test_a_summary_call_error_is_a_failed_summary(workspace):
    def broken(request):
        raise RuntimeError("529 overloaded")
    with pytest.raises(SummaryFailed, match="529 overloaded"):
        compact_history(big_history(), SummaryJob(broken, workspace=workspace))


def test_summary_request_is_shortened_oldest_first_to_fit(workspace):
    messages = big_history()
    request = summary_request(messages, "<summary-request>sum</summary-request>", max_input_tokens=6000,
                              transcript=".transcripts/t.jsonl")
    assert estimate_tokens(request) <= 6000 and valid(request)
    assert "left out of this summary request" in request[0]["content"]
    assert request[-2] == messages[-1]                          # the newest messages are what is kept


def test_reactive_compact_keeps_a_recent_tail(workspace):
    messages = big_history()
    out = reactive_compact(messages, SummaryJob(summarizer(), window=8000, workspace=workspace))
    assert valid(out) and len(out) > 3
    assert out[-4:] == messages[-4:]
    assert "LATEST: now add tests for it" in user_texts(out)


def test_a_tool_call_instead_of_a_summary_is_a_failure(workspace):
    messages = big_history()
    with pytest.raises(SummaryFailed, match="tool call instead of a summary"):
        compact_history(messages, SummaryJob(summarizer("Let me look at the files first.", stop="tool_use"),
                                             workspace=workspace))

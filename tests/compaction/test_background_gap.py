"""The gap: what the model read while a summary prepared in the background was written. When that summary
goes in, those results become pointers (kept whole, they would be carried in every request); a second
summary, started at once over the history as it was just before that clearing, covers them, and goes in
at the next call once ready — the Compactor alone, with a summarizer the test lets go.
"""

from __future__ import annotations

import threading

from compaction import Compactor
from compaction.background import covers
from compaction.boundaries import result_text
from compaction.markers import PLACEHOLDER_PREFIX
from config import Settings
from events import Compaction
from storage import read_transcript
from support.helpers import ask, call, results, user
from standin import validate_request

GAP = "gap = 'read while the first summary was written'\n" * 200     # ~10,000 characters
BIG = "x = 1  # a line of a file\n" * 400


class Summarizer:
    """Answers each summary request once the test lets it, with its own numbered text."""

    def __init__(self):
        self.requests: list[list[dict]] = []
        self.gates: list[threading.Event] = [threading.Event() for _ in range(4)]

    def __call__(self, request, _emit=None):
        n = len(self.requests)
        self.requests.append(request)
        assert self.gates[n].wait(10)
        return f"summary number {n + 1}", "end_turn"


def texts(messages) -> list[str]:
    return [result_text(b) for m in messages if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"]


def applied(events) -> list[Compaction]:
    return [e for e in events if isinstance(e, Compaction) and "applied" in e.message]


def test_a_file_read_while_the_summary_was_written_is_covered_by_the_next_summary_the_model_is_given(tmp_path):
    events: list = []
    summarizer = Summarizer()
    s = Settings(context_limit=10_000, context_window=200_000, prepare_at=0.3, background_compact="on",
                 micro_clear_at_least=10 ** 8, snip_max_messages=10_000, cold_compact_at=1.0)
    compactor = Compactor(s, tmp_path, summarizer, emit=events.append)
    compactor.background_summarize = summarizer
    compactor.begin_turn()
    messages: list[dict] = [user("read everything")]
    for n, text in enumerate([BIG, BIG, GAP]):     # the first summary starts after mod_1: mod_2 is the gap
        messages[:] = compactor.prepare(messages)
        sent = list(messages)
        c = call("read_file", path=f"mod_{n}.py")
        messages.append(ask(c))
        compactor.after_reply(sent, messages, final=False)
        messages.append(results((c, text)))
    first = compactor.background.current
    assert first is not None and first.n == 5                  # up to mod_1's result; mod_2 came after
    summarizer.gates[0].set()
    assert first.done.wait(120)
    c = call("read_file", path="mod_3.py")
    messages += [ask(c), results((c, BIG))]                   # the model saw mod_2's result, not mod_3's
    out = compactor.prepare(messages)                          # past 10,000: the first summary goes in
    assert len(applied(events)) == 1
    assert GAP not in texts(out) and any(t.startswith(PLACEHOLDER_PREFIX) for t in texts(out))   # a pointer
    second = compactor.background.current                       # and at once, the summary over it
    assert second is not None and second is not first and second.held
    assert covers(second.prefix, out) and second.prefix[0] is out[0]   # it replaces the summary and the pointer
    assert list(second.snapshot[:first.n]) == list(first.snapshot)   # from the history as it was sent (cached)
    assert GAP in texts(second.snapshot)                              # with mod_2 whole
    messages = out
    summarizer.gates[1].set()
    assert second.done.wait(120) and second.ready
    c = call("read_file", path="mod_4.py")
    messages += [ask(c), results((c, "short"))]
    out = compactor.prepare(messages)                          # under the limit, ready: it goes in now
    first_line, second_line = applied(events)
    assert "the results it covers were cleared" in second_line.message
    assert out[0]["content"][1]["text"].endswith("summary number 2")    # what the model is given
    request = summarizer.requests[1]                          # the summary was asked over mod_2 whole
    assert GAP in texts(request) and request[:first.n] == list(first.snapshot)
    _, saved = read_transcript(tmp_path / second_line.details["transcript"])
    assert GAP in texts(saved)                                  # and its transcript holds it whole
    assert BIG not in texts(out)            # mod_3, the recent work then, is now older than it: a pointer,
    assert compactor.background.current is None     # and no third summary (a chain of them costs too much)
    validate_request({"model": "m", "max_tokens": 10, "messages": out})


def by_id(messages) -> dict[str, str]:
    return {b["tool_use_id"]: result_text(b) for m in messages if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"}


def test_what_the_limit_cleared_after_the_snapshot_while_it_was_written_is_in_the_next_summary_whole(tmp_path):
    events: list = []
    summarizer = Summarizer()
    s = Settings(context_limit=20_000, context_window=200_000, prepare_at=0.3, background_compact="on",
                 micro_clear_at_least=10 ** 8, snip_max_messages=10_000, cold_compact_at=1.0, recent_work=0.2)
    compactor = Compactor(s, tmp_path, summarizer, emit=events.append)
    compactor.background_summarize = summarizer
    messages: list[dict] = []
    for part, reads in enumerate([[0, 1], [2, 3], [4, 5], list(range(6, 14))]):     # the last turn passes 20,000
        compactor.begin_turn()
        messages.append(user(f"read, part {part}"))
        for n in reads + ([None] if part < 3 else []):      # the last turn goes on below
            messages[:] = compactor.prepare(messages)
            sent = list(messages)
            if n is None:
                messages.append(ask(text="done"))
                compactor.after_reply(sent, messages, final=True)
                continue
            c = call("read_file", path=f"mod_{n}.py")
            messages.append(ask(c))
            compactor.after_reply(sent, messages, final=False)
            messages.append(results((c, BIG)))
    first = compactor.background.current
    assert first is not None and not first.done.is_set()         # written all along: the limit was held
    after_snapshot = by_id(messages[first.n:])
    cleared = [i for i, t in after_snapshot.items() if t.startswith(PLACEHOLDER_PREFIX)]
    assert cleared                                  # read after its snapshot and cleared: no summary covers them
    summarizer.gates[0].set()
    assert first.done.wait(120)
    out = compactor.prepare(messages)                           # the next call of the same turn
    assert len(applied(events)) == 1
    second = compactor.background.current
    assert second is not None and second.held and covers(second.prefix, out)
    whole = by_id(second.snapshot)
    assert all(whole[i] == BIG for i in cleared if i in whole) and set(cleared) & set(whole)
    summarizer.gates[1].set()
    assert second.done.wait(120)
    c = call("read_file", path="mod_14.py")
    out += [ask(c), results((c, "short"))]
    out = compactor.prepare(out)
    assert len(applied(events)) == 2 and out[0]["content"][1]["text"].endswith("summary number 2")
    assert any(BIG in by_id(r).values() and set(cleared) & set(by_id(r)) for r in summarizer.requests[1:])
    validate_request({"model": "m", "max_tokens": 10, "messages": out})

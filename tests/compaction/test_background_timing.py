"""When a summary is prepared in the background, when it is applied, and what the loop does at the limit
while it is still being written — the Compactor alone, with a summarizer the test holds back or lets go.

  - between turns: prepared only when the next turn, adding as much as the largest of the last turns,
    would pass the limit; the next turn then applies it before its first call;
  - at the limit while it is written: the loop goes on without waiting, clearing nothing while the window
    has room; past that the results the model has seen are cleared to pointers, oldest first (saved to
    disk), and the summary is applied once ready;
  - applied: what came after its snapshot keeps its calls, and their results the model has seen are
    pointers (no summary covers them); the round the model has not seen stays whole;
  - inside a turn it starts two calls before the limit, however fast the calls come.
"""

from __future__ import annotations

import threading

from compaction import Compactor
from compaction.micro import clear_saving
from compaction.recent import recent_start
from compaction.prepared import held_picks
from compaction.schedule import Schedule
from compaction.summary import SummaryJob
from compaction.boundaries import result_text
from compaction.markers import COMPACTED_PREFIX, PLACEHOLDER_PREFIX
from config import Settings
from events import Compaction, SummaryWait
from support.helpers import ask, call, results, say, user
from standin import validate_request

BIG = "x = 1  # a line of a file\n" * 400          # about 10,400 characters: saved to disk when cleared


class Gate:
    """A summarizer that answers only once the test lets it (`release`)."""

    def __init__(self):
        self.open, self.calls = threading.Event(), 0

    def __call__(self, request, _emit=None):
        self.calls += 1
        assert self.open.wait(10)
        return "the summary of what was read", "end_turn"

    def release(self) -> None:
        self.open.set()


def compactor_for(workspace, limit: int, events: list, gate: Gate, **more) -> Compactor:
    s = Settings(**{**dict(context_limit=limit, context_window=200_000, prepare_at=0.3, background_compact="on",
                           micro_clear_at_least=10 ** 8, snip_max_messages=10_000, cold_compact_at=1.0), **more})
    compactor = Compactor(s, workspace, gate, emit=events.append)
    compactor.background_summarize = gate
    return compactor


def read_round(messages: list[dict], n: int, text: str = BIG) -> None:
    c = call("read_file", path=f"mod_{n}.py")
    messages += [ask(c), results((c, text))]


def turn(compactor: Compactor, messages: list[dict], typed: str, reads: list[int]) -> None:
    """One turn the way the loop runs it: prepare before each call, after_reply after each answer."""
    compactor.begin_turn()
    messages.append(user(typed))
    for n in reads + [None]:
        messages[:] = compactor.prepare(messages)
        sent = list(messages)
        if n is None:
            messages.append(say("done"))
            compactor.after_reply(sent, messages, final=True)
        else:
            c = call("read_file", path=f"mod_{n}.py")
            messages.append(ask(c))
            compactor.after_reply(sent, messages, final=False)
            messages.append(results((c, BIG)))


def talk(compactor: Compactor, messages: list[dict], typed: str) -> None:
    """A turn without tools: the person pastes a long text, the model answers."""
    compactor.begin_turn()
    messages.append(user(typed + "\n" + BIG))
    messages[:] = compactor.prepare(messages)
    sent = list(messages)
    messages.append(say("noted"))
    compactor.after_reply(sent, messages, final=True)


def applied(events) -> list[Compaction]:
    return [e for e in events if isinstance(e, Compaction) and "applied" in e.message]


def test_between_turns_it_is_prepared_only_when_the_next_turns_would_pass_the_limit(tmp_path):
    events, gate = [], Gate()
    gate.release()
    compactor = compactor_for(tmp_path, 16_000, events, gate)
    messages: list[dict] = []
    for n in range(3):                            # ~3,200 tokens each: at 9,600, two more such turns fit
        talk(compactor, messages, f"part {n}")
    assert compactor.background.current is None and gate.calls == 0
    talk(compactor, messages, "part 3")           # ~12,800: two more would pass 16,000
    prep = compactor.background.current
    assert prep is not None and prep.done.wait(120) and prep.ready
    assert prep.n == len(messages) - 1            # the history as the last call sent it
    assert not applied(events)


def test_the_next_turn_applies_a_ready_summary_before_its_first_call_if_it_would_pass_the_limit(tmp_path):
    events, gate = [], Gate()
    gate.release()
    compactor = compactor_for(tmp_path, 16_000, events, gate)
    messages: list[dict] = []
    for n in range(4):
        talk(compactor, messages, f"part {n}")
    prep = compactor.background.current
    assert prep.done.wait(120)
    compactor.begin_turn()
    messages.append(user("a short question"))     # then a turn like the last ones would still fit: not yet
    assert compactor.prepare(messages) is messages and not applied(events)
    messages.append(say("an answer"))
    compactor.after_reply(messages[:-1], messages, final=True)
    assert compactor.background.current is prep   # nothing new came after it: not prepared again
    compactor.begin_turn()
    messages.append(user("part 4\n" + BIG))        # under the limit, but the next turn like it would not be
    out = compactor.prepare(messages)
    [line] = applied(events)
    assert "(this turn would pass the limit)" in line.message and "waited" not in line.message
    assert out[0]["content"][0]["text"].startswith(COMPACTED_PREFIX) and out[-1] == messages[-1]
    assert compactor.measure(out) < 6_000
    validate_request({"model": "m", "max_tokens": 10, "messages": out})


def test_at_the_limit_while_it_is_written_the_loop_goes_on_clearing_the_older_work_and_keeps_the_recent(tmp_path):
    events, gate = [], Gate()                                 # held back: never ready during the turn
    compactor = compactor_for(tmp_path, 20_000, events, gate, recent_work=0.2)   # a result or two
    messages: list[dict] = []
    for i in range(3):
        turn(compactor, messages, f"read two files, part {i}", [2 * i, 2 * i + 1])
    prep = compactor.background.current
    assert prep is not None and not prep.done.is_set()
    turn(compactor, messages, "read four more", [6, 7, 8, 9])      # passes 20,000 twice
    assert compactor.measure(messages) <= 20_000
    assert not prep.done.is_set() and compactor.background.current is prep    # nobody waited for it
    assert not any(isinstance(e, SummaryWait) for e in events) and not applied(events)
    assert any("while the summary is prepared" in getattr(e, "message", "") for e in events)
    said = [e.message for e in events if "triggered" in getattr(e, "message", "")]   # the limit passed: said
    assert len(said) == 1 and "> 20,000 tokens" in said[0] and "goes in when it is ready" in said[0]   # once
    texts = [result_text(b) for m in messages if isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_result"]
    recent = recent_start(messages, compactor.recent_budget)
    assert recent < len(messages) - 1                              # the recent work holds a result…
    assert all(result_text(b) == BIG for m in messages[recent:] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result")       # …whole
    assert texts[0].startswith(PLACEHOLDER_PREFIX)                 # the oldest: a pointer
    gate.release()
    assert prep.done.wait(120)
    messages.append(user("thanks"))
    compactor.begin_turn()
    out = compactor.prepare(messages)                         # ready, and past the limit: applied
    [line] = applied(events)
    assert line.details["covered"] == prep.n and compactor.measure(out) <= 20_000
    newest = [b for m in out if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"]
    assert newest and result_text(newest[-1]) == BIG          # the recent work: whole
    validate_request({"model": "m", "max_tokens": 10, "messages": out})


def test_at_the_limit_while_it_is_written_a_full_window_clears_the_oldest_results_first(tmp_path):
    events, gate = [], Gate()                                 # held back: never ready during the turn
    compactor = compactor_for(tmp_path, 20_000, events, gate, context_window=26_000)  # room: 20,800
    messages: list[dict] = []
    for i in range(3):
        turn(compactor, messages, f"read two files, part {i}", [2 * i, 2 * i + 1])
    prep = compactor.background.current
    assert prep is not None and not prep.done.is_set()
    turn(compactor, messages, "read four more", [6, 7, 8, 9])      # passes the window's room
    assert not prep.done.is_set() and compactor.background.current is prep    # nobody waited for it
    assert not any(isinstance(e, SummaryWait) for e in events) and not applied(events)
    assert any("while the summary is prepared" in getattr(e, "message", "") for e in events)
    assert compactor.measure(messages) <= 20_800
    validate_request({"model": "m", "max_tokens": 10, "messages": messages})
    texts = [result_text(b) for m in messages if isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_result"]
    cleared = [t.startswith(PLACEHOLDER_PREFIX) for t in texts]
    assert any(cleared) and cleared == sorted(cleared, reverse=True)     # the oldest first
    assert texts[-1] == BIG                                              # the newest: whole
    assert all("saved at .task_outputs/" in t for t in texts if t.startswith(PLACEHOLDER_PREFIX))
    saved = next(t for t in texts if t.startswith(PLACEHOLDER_PREFIX)).split("saved at ")[1]
    assert (tmp_path / saved).read_text(encoding="utf-8") == BIG     # the whole output, byte for byte
    gate.release()
    assert prep.done.wait(120)
    compactor.begin_turn()
    messages.append(user("thanks"))
    out = compactor.prepare(messages)                         # ready, and what it covers was cleared: applied
    [line] = applied(events)
    assert out[0]["content"][1]["text"].endswith("the summary of what was read")
    assert line.details["covered"] == prep.n
    validate_request({"model": "m", "max_tokens": 10, "messages": out})


def test_applied_at_the_limit_the_part_after_its_snapshot_keeps_its_calls_and_the_unseen_round(tmp_path):
    events, gate = [], Gate()
    gate.release()
    compactor = compactor_for(tmp_path, 10_000, events, gate)
    compactor.begin_turn()
    messages: list[dict] = [user("read everything")]
    for n in range(3):              # growing this fast, the summary is due once past PREPARE_AT (3,000)
        sent = list(messages)
        c = call("read_file", path=f"mod_{n}.py")
        messages.append(ask(c))
        compactor.after_reply(sent, messages, final=False)
        messages.append(results((c, BIG)))
    prep = compactor.background.current
    assert prep is not None and prep.done.wait(120) and prep.n < 7
    read_round(messages, 3)                      # the model saw mod_0..2's results, not mod_3's
    out = compactor.prepare(messages)            # past 10,000
    [line] = applied(events)
    seen_after = (len(messages) - 2 - prep.n) // 2         # results after the snapshot the model has seen
    assert seen_after >= 1 and line.details["uncovered"] == seen_after and "waited" not in line.message
    tail = out[1:]
    assert [m["role"] for m in tail] == [m["role"] for m in messages[prep.n:]]
    for i in range(0, len(tail) - 2, 2):
        assert tail[i] is messages[prep.n + i]                                      # the call, as it was
        assert result_text(tail[i + 1]["content"][0]).startswith(PLACEHOLDER_PREFIX)  # its result: a pointer
    assert tail[-1] is messages[-1] and tail[-2] is messages[-2]                    # mod_3: whole
    validate_request({"model": "m", "max_tokens": 10, "messages": out})


def test_a_resumed_history_is_not_one_turn_of_growth(tmp_path):
    events, gate = [], Gate()
    gate.release()
    first = compactor_for(tmp_path, 16_000, events, gate)
    messages: list[dict] = []
    for n in range(3):
        talk(first, messages, f"part {n}")                  # ~9,600 of 16,000
    resumed = compactor_for(tmp_path, 16_000, events, gate)  # s08 started again on the same history
    for question in ("ok?", "and?", "thanks"):
        resumed.begin_turn()
        messages.append(user(question))
        assert resumed.prepare(messages) is messages
        messages.append(say("yes"))
        resumed.after_reply(messages[:-1], messages, final=True)
    assert resumed.schedule.next_turn() < 100 and resumed.background.current is None and not applied(events)


def test_when_the_summary_fails_after_the_results_were_cleared_every_one_is_still_on_disk(tmp_path):
    events = []

    class Failing(Gate):
        def __call__(self, request, _emit=None):
            super().__call__(request)
            return "", "end_turn"                              # an empty summary: unusable

    gate = Failing()
    compactor = compactor_for(tmp_path, 20_000, events, gate, context_window=26_000)   # no room: cleared
    messages: list[dict] = []
    for i in range(3):
        turn(compactor, messages, f"read two files, part {i}", [2 * i, 2 * i + 1])
    prep = compactor.background.current
    turn(compactor, messages, "read four more", [6, 7, 8, 9])  # the limit, while it is written: cleared
    assert prep.held
    gate.release()
    assert prep.done.wait(120) and prep.text is None
    compactor.begin_turn()
    messages.append(user("go on"))
    messages[:] = compactor.prepare(messages)                 # the failure is taken: counted, nothing applied
    assert not applied(events) and any("failed" in getattr(e, "text", "") for e in events)
    cleared = [result_text(b) for m in messages if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result" and result_text(b).startswith(PLACEHOLDER_PREFIX)]
    assert len(cleared) >= 3
    for text in cleared:
        assert (tmp_path / text.split("saved at ")[1]).read_text(encoding="utf-8") == BIG
    validate_request({"model": "m", "max_tokens": 10, "messages": messages})


def test_a_result_that_cannot_be_saved_is_not_cleared(tmp_path):
    (tmp_path / ".task_outputs").write_text("a file where the folder should be")
    c = call("read_file", path="mod_0.py")
    messages = [user("read it"), ask(c), results((c, BIG)), say("done"), user("and now?")]
    out, count, outputs = clear_saving(messages, tmp_path)
    assert out is messages and count == 0 and outputs == []


def test_a_result_that_only_mentions_a_saved_output_is_saved_itself(tmp_path):
    text = "notes.md:3: Full output saved to: .task_outputs/other.txt\n" + "more grep output\n" * 20
    c = call("bash", command="grep -rn 'saved to' .")
    messages = [user("look"), ask(c), results((c, text)), say("done"), user("and now?")]
    out, count, [output] = clear_saving(messages, tmp_path)
    cleared = result_text(out[2]["content"][0])
    assert count == 1 and cleared.endswith(f"saved at {output['path']}") and "other.txt" not in cleared
    assert (tmp_path / output["path"]).read_text(encoding="utf-8") == text


def test_inside_a_turn_it_starts_two_calls_before_the_limit_however_fast_the_calls_come():
    schedule = Schedule()
    schedule.begin_turn()
    for second, size in enumerate(range(20_000, 32_001, 2_000)):   # 2,000 tokens a second, 2,000 a call
        schedule.answered(size, float(second), final=False)
    assert not schedule.due_in_turn(32_000, 50_000)      # ten calls away: a summary now would leave out ten
    for second, size in enumerate(range(34_000, 46_001, 2_000), start=7):
        schedule.answered(size, float(second), final=False)
        assert schedule.due_in_turn(size, 50_000) == (size + 2 * 2_000 > 50_000)


def test_held_picks_are_the_seen_results_the_snapshot_holds_before_the_recent_work():
    messages: list[dict] = [user("read")]
    for n in range(5):
        read_round(messages, n)                 # results at 2, 4, 6, 8, 10; the last one not seen
    assert held_picks(messages, covered=7, recent=9) == {(2, 0), (4, 0), (6, 0)}
    assert held_picks(messages, covered=7, recent=5) == {(2, 0), (4, 0)}      # the recent work: never
    assert held_picks(messages, covered=11, recent=11) == {(2, 0), (4, 0), (6, 0), (8, 0)}   # nor the unseen round



def timed_summaries(compactor: Compactor, messages: list[dict], events: list) -> int:
    """Turns of two reads, each prepared summary let finish before the next turn, until one went in:
    s08 has timed how long its summaries take. Returns the next file number."""
    n = 0
    while not applied(events):
        turn(compactor, messages, f"read two files, part {n}", [n, n + 1])
        n += 2
        prep = compactor.background.current
        if prep is not None:
            assert prep.done.wait(120)
        assert n < 40
    return n


def test_a_summary_expected_within_a_call_or_two_is_waited_for_past_the_limit_without_clearing(tmp_path):
    """…no further past it than the recent work's budget (RECENT_WORK × the limit). The timings are
    stated, not raced: summaries here take 10 s, a call 60 s, so this one is due before the next call."""
    events, gate = [], Gate()
    compactor = compactor_for(tmp_path, 20_000, events, gate, recent_work=0.4)   # carried up to 28,000
    compactor.background.timed.append(10.0)
    compactor.schedule.call_time = 60.0
    messages: list[dict] = [user("read everything")]
    for n in range(6):
        read_round(messages, n)
    prep = compactor.background.start(list(messages), compactor.prepared.key,    # covers the six reads,
                                      SummaryJob(gate, workspace=tmp_path), gate)   # held back by the gate
    for n in range(6, 8):
        read_round(messages, n)
    messages.append(say("two more read"))
    messages.append(user("go on"))
    assert 20_000 < compactor.measure(messages) <= 28_000
    out = compactor.prepare(messages)                         # past the limit, the summary still written
    assert not prep.held and compactor.measure(out) > 20_000
    assert not any("while the summary is prepared" in getattr(e, "message", "") for e in events)
    said = [e.message for e in events if "triggered" in getattr(e, "message", "")]
    assert len(said) == 1 and "goes in when it is ready" in said[0]
    texts = [result_text(b) for m in out if isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_result"]
    assert len(texts) == 8 and all(t == BIG for t in texts)   # carried whole, not cleared
    gate.release()
    assert prep.done.wait(120)
    out = compactor.prepare(out)                              # ready, past the limit: it goes in now
    assert applied(events)[-1].details["covered"] == prep.n and compactor.measure(out) <= 20_000
    assert len([e for e in events if "triggered" in getattr(e, "message", "")]) == 1     # said once
    validate_request({"model": "m", "max_tokens": 10, "messages": out})


def test_a_summary_later_than_expected_is_carried_only_until_carrying_cost_what_clearing_would(tmp_path):
    events, gate = [], Gate()
    gate.release()                                            # quick summaries first: s08 expects them quick
    compactor = compactor_for(tmp_path, 20_000, events, gate)
    messages: list[dict] = []
    n = timed_summaries(compactor, messages, events)
    gate.open.clear()                                         # then one that never comes (retries, a slow endpoint)
    sizes: list[int] = []
    while not (compactor.background.current and compactor.background.current.held):
        turn(compactor, messages, f"read two more, part {n}", [n, n + 1])
        sizes.append(compactor.measure(messages))
        n += 2
        assert n < 80, "carried up to the window's room"
    assert max(sizes) < 50_000 < compactor.room                 # held long before the window filled
    assert not any(isinstance(e, SummaryWait) for e in events)  # and nobody waited for it
    gate.release()


def test_with_nothing_of_its_snapshot_left_to_clear_the_older_work_after_it_is_weighed(tmp_path):
    events, gate = [], Gate()
    compactor = compactor_for(tmp_path, 20_000, events, gate)
    compactor.background.timed.append(0.0)                    # summaries here are quick…
    compactor.schedule.call_time = 1.0
    messages: list[dict] = [user("read everything")]
    for n in range(3):
        read_round(messages, n)
    prep = compactor.background.start(list(messages[:1]), compactor.prepared.key,     # …but this one covers only
                                      SummaryJob(gate, workspace=tmp_path), gate)    # the first message, and is late
    for n in range(3, 10):
        read_round(messages, n)
    size = compactor.measure(messages)
    assert size > 20_000
    held = False
    for _ in range(40):                                       # call after call past the limit
        if compactor.prepared.hold_now(messages, prep, size):
            held = True
            break
    assert held                                               # the older work after it is cleared in the end
    gate.release()


def test_carried_past_the_limit_no_further_than_the_recent_work_budget(tmp_path):
    events, gate = [], Gate()
    gate.release()
    compactor = compactor_for(tmp_path, 20_000, events, gate)  # RECENT_WORK 0.1: 2,000 tokens past the limit
    messages: list[dict] = []
    n = timed_summaries(compactor, messages, events)
    gate.open.clear()                                         # expected at once (timed quick), but late
    sizes: list[int] = []
    while not (compactor.background.current and compactor.background.current.held):
        turn(compactor, messages, f"read one more, part {n}", [n])
        sizes.append(compactor.measure(messages))
        n += 1
        assert n < 80
    BIG_TOKENS = 2_700                                        # one read, its call and its result
    assert max(sizes) <= 20_000 + 2_000 + BIG_TOKENS + 200      # one read past the margin at most
    gate.release()

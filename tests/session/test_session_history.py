"""LoggedHistory keeps its promise: no way of changing the history skips the log.

Random sequences of every mutating operation (append, [i] =, a message that grows, slice assignment,
extend, +=, del, insert, pop, clear) are run on a LoggedHistory; replaying the records it wrote
(session_replay.apply_record) gives exactly the list it holds, after every step. What has no record
of its own (sort, reverse, remove, *=) raises.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session.log import LoggedHistory, SessionLog
from session.replay import apply_record

texts = st.text(alphabet="abcxyz é", min_size=1, max_size=8)


@st.composite
def messages(draw) -> dict:
    role = draw(st.sampled_from(["user", "assistant"]))
    words = draw(st.lists(texts, min_size=1, max_size=3))
    return {"role": role, "content": [{"type": "text", "text": t} for t in words]}


@st.composite
def operations(draw):
    """One change, as (name, arguments); indexes are taken modulo the length when applied."""
    kind = draw(st.sampled_from(["append", "set", "grow", "slice", "extend", "iadd", "del", "del_slice", "insert",
                                 "pop", "clear", "keep_head"]))
    return kind, draw(st.integers(-6, 6)), draw(st.integers(-6, 6)), draw(st.lists(messages(), max_size=3))


def apply(h: LoggedHistory, expected: list, op) -> None:
    """Do `op` on the history and on a plain list the same way."""
    kind, i, j, new = op
    n = len(h)
    if kind == "append":
        h.append(new[0] if new else {"role": "user", "content": "x"})
        expected.append(h[-1])
    elif kind == "extend":
        h.extend(new)
        expected.extend(new)
    elif kind == "iadd":
        h += new
        expected += new
    elif kind == "insert":
        message = new[0] if new else {"role": "user", "content": "y"}
        h.insert(i, message)
        expected.insert(i, message)
    elif kind == "clear":
        h.clear()
        expected.clear()
    elif kind == "slice":
        h[i:j] = new
        expected[i:j] = new
    elif kind == "del_slice":
        del h[i:j]
        del expected[i:j]
    elif kind == "keep_head":          # what compaction does: the same objects first, then a new tail
        h[:] = list(h)[:abs(i)] + new
        expected[:] = expected[:abs(i)] + new
    elif n == 0:
        return
    elif kind == "set":
        message = new[0] if new else {"role": "assistant", "content": "z"}
        h[i % n] = message
        expected[i % n] = message
    elif kind == "grow":               # tool results arriving one by one: the old blocks, then more
        old = h[i % n]
        grown = {**old, "content": list(old["content"]) + [{"type": "text", "text": f"more {j}"}]}
        h[i % n] = grown
        expected[i % n] = grown
    elif kind == "del":
        del h[i % n]
        del expected[i % n]
    elif kind == "pop":
        assert h.pop(i % n) == expected.pop(i % n)


class MemoryLog:
    """A SessionLog that keeps its records in memory (as JSON, so a later change of a message
    object cannot change what was logged)."""
    path = Path("memory.jsonl")

    def __init__(self):
        self.records: list[dict] = []

    def tampered(self) -> bool:
        return False

    def write(self, record: dict) -> None:
        self.records.append(json.loads(json.dumps(record)))

    def close(self) -> None:
        pass


def replayed(records) -> list[dict]:
    out: list[dict] = []
    for record in records:
        out = apply_record(out, record)
    return out


@settings(max_examples=200)
@given(start=st.lists(messages(), max_size=4), ops=st.lists(operations(), max_size=25))
def test_replaying_the_log_gives_the_history_after_every_change(start, ops):
    log = MemoryLog()
    h = LoggedHistory([], log)
    h.extend(start)
    expected = list(start)
    for op in ops:
        apply(h, expected, op)
        assert list(h) == expected and h == expected
        assert replayed(log.records) == expected


@settings(max_examples=25)
@given(ops=st.lists(operations(), min_size=1, max_size=12))
def test_the_log_file_replays_to_the_same_history(ops):
    with tempfile.TemporaryDirectory(prefix="s08-history-") as folder:
        h = LoggedHistory([], SessionLog(Path(folder)))
        expected: list = []
        for op in ops:
            apply(h, expected, op)
        h.log.close()
        if h.log.path.exists():
            lines = h.log.path.read_text(encoding="utf-8").splitlines()
            records = [json.loads(line) for line in lines]
        else:
            records = []                     # nothing was ever written: the history stayed empty
        assert replayed(records) == list(h) == expected


def test_what_has_no_record_of_its_own_raises_and_changes_nothing():
    log = MemoryLog()
    h = LoggedHistory([{"role": "user", "content": "b"}, {"role": "user", "content": "a"}], log)
    for bypass in (lambda: h.sort(key=str), lambda: h.reverse(), lambda: h.remove(h[0])):
        with pytest.raises(TypeError):
            bypass()
    with pytest.raises(TypeError):
        h *= 2
    assert [m["content"] for m in h] == ["b", "a"] and log.records == []
    assert not isinstance(h, list)           # no list method to forget to override


def test_reading_gives_plain_lists():
    h = LoggedHistory([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    assert type(h[:1]) is list and type(h + []) is list and type([] + h) is list
    assert h == list(h) and list(h) == h and h[-1]["content"] == "b"
    with pytest.raises(IndexError):
        h[5] = {"role": "user", "content": "c"}

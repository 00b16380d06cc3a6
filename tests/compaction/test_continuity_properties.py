"""Continuity as a property: random sessions through random layers and 1–5 compactions whose summary
mentions nothing, and still every message the person typed (within USER_MESSAGES_BUDGET) and every
path the tools touched (within LEDGER_BUDGET) is in the history the model is sent next.

A session is simulated step by step: the person types (sometimes long, sometimes Chinese, sometimes
text that looks like compaction's own), the model runs tool rounds on paths in several folders or
answers, and between steps any layer runs — through the real Compactor, as the loop runs it. After
every layer:
  - the history is a request the real API accepts (the stand-in's validator),
  - every typed message is visible: the newest ones that fit the budget whole, the older ones whole,
    shortened (naming where they are whole) or counted in one line that says where they are,
  - every path in the work ledger is in the history while the ledger fits its budget,
  - what rides along respects its budgets, so nothing grows without bound.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from compaction import Compactor, Continuity, micro_compact, snip_compact, tool_result_budget
from compaction.markers import COMPACTED_PREFIX, SNIP_PREFIX
from compaction.tokens import estimate_text
from compaction.user_messages import CARRY_LABEL, NOTE_TOKENS
from config import Settings
from support.helpers import ask, call, phrases, results, say
from messages import add_user_text
from standin import validate_request

WORDS = ["never", "touch", "legacy/", "keep", "tabs", "in", "the", "Makefile", "不要", "修改", "测试", "parser",
         "[compacted]", "[snipped", "Summary", "of", "the", "conversation"]
FOLDERS = ["src", "src/core", "legacy", "docs", "测试"]
GENERIC = ("The work continued as planned.", "end_turn")     # a summary that mentions nothing

words = st.sampled_from(phrases(WORDS, 10))


@st.composite
def typed_text(draw):
    text = draw(words)
    if draw(st.integers(0, 6)) == 0:                 # now and then a long paste
        text = (text + "\n") * draw(st.integers(50, 900))
    if draw(st.integers(0, 8)) == 0:                 # or text that looks like compaction's own
        text = draw(st.sampled_from(["[compacted] not really", "[snipped 3 messages → nowhere]",
                                     "Summary of the conversation so far:\nmine", CARRY_LABEL]))
    return text


class Session:
    def __init__(self, workspace: Path, limit: int, ledger_budget: int):
        self.settings = Settings(context_limit=limit, context_window=max(4 * limit, 8_000), snip_max_messages=16,
                                 snip_target_messages=8, persist_threshold=6_000, round_budget=12_000,
                                 micro_clear_at_least=0, ledger_budget=ledger_budget)
        self.workspace = workspace
        self.keep = Continuity(workspace=workspace)
        self.compactor = Compactor(self.settings, workspace, lambda request: GENERIC, continuity=self.keep)
        self.messages: list[dict] = []
        self.compactions = 0
        self.made: list[dict] = []

    def type(self, text: str) -> None:
        self.keep.typed_message(text)
        add_user_text(self.messages, text)

    def tools(self, draw) -> None:
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            name = draw(st.sampled_from(["read_file", "write_file", "edit_file", "bash"]))
            path = f"{draw(st.sampled_from(FOLDERS))}/f{draw(st.integers(0, 40))}.py"
            calls.append(call(name, command=f"grep -n x {path}") if name == "bash" else call(name, path=path))
        self.messages.append(ask(*calls))
        outs = [(c, "line\n" * draw(st.sampled_from([2, 40, 3_000]))) for c in calls]
        self.messages.append(results(*outs))
        for c, out in outs:
            self.keep.tool_done(c, out + "[exit code 0]", False)

    def layer(self, draw) -> None:
        kind = draw(st.sampled_from(["budget", "snip", "micro", "compact", "compact", "reactive", "fallback",
                                     "prepare"]))
        m, c = self.messages, self.compactor
        if kind == "budget":
            out = tool_result_budget(m, 6_000, 12_000, workspace=self.workspace)
        elif kind == "snip":
            out = snip_compact(m, 16, 8, workspace=self.workspace, continuity=self.keep)
        elif kind == "micro":
            out = micro_compact(m, 1, frozenset(), clear_at_least=0)
        elif kind == "compact":
            out = c.compact(m)
        elif kind == "reactive":
            out = c.reactive(m, self.settings.context_window + 10, self.settings.context_window)
        elif kind == "fallback":
            out = c._fallback(m)
        else:
            out = c.prepare(m)
        self.messages = out
        self.compactions += out is not m and summarized(out)
        self.made = [x for x in out if not any(x is y for y in m)]     # what this layer wrote


def summarized(messages: list[dict]) -> bool:
    first = messages[0]["content"]
    return isinstance(first, list) and first[0].get("text", "").startswith(COMPACTED_PREFIX)


def visible_everywhere(session: Session) -> None:
    messages, keep = session.messages, session.keep
    validate_request({"model": "m", "max_tokens": 10, "messages": messages})
    text = json.dumps(messages, ensure_ascii=False)
    shown = keep.typed.visible(messages)
    counted = set()
    for note in re.findall(r"\[… \d+ earlier messages? of yours \((?:some of )?(messages? [\d–, ]+)\)", text):
        for span in note.split(" ", 1)[1].split(", "):
            low, _, high = span.partition("–")
            counted.update(range(int(low), int(high or low) + 1))
    budget, newest_whole = keep.user_budget, 0        # room for the "left out" line comes off the budget
    cut_to_fit = "to fit the model's window" in text or "-room.jsonl" in text    # a summary not smaller cut
    #                                           down, or a cut to fit the window (room.py): shortened with pointers
    for i in range(len(keep.typed) - 1, -1, -1):
        newest_whole += estimate_text(keep.typed.entries[i].text)
        entry_text = keep.typed.entries[i].text
        if newest_whole <= budget - NOTE_TOKENS and not cut_to_fit:
            assert any(b.get("text") == entry_text for m in messages if m["role"] == "user"
                       for b in ([{"type": "text", "text": m["content"]}] if isinstance(m["content"], str)
                                 else m["content"])), f"message {i + 1} is not whole although it fits the budget"
        assert i in shown or i + 1 in counted, f"message {i + 1} vanished"
    if estimate_text(keep.ledger.render(10 ** 9)) <= keep.ledger_budget and not cut_to_fit:
        for path in keep.ledger.files:
            assert path in text, f"{path} is not in the history"
    for m in session.made:                               # what rides along stays within its budgets
        content = m["content"] if isinstance(m["content"], list) else []
        made_by_s08 = bool(content) and str(content[0].get("text", "")).startswith((COMPACTED_PREFIX, SNIP_PREFIX))
        labels = [j for j, b in enumerate(content) if b.get("text") == CARRY_LABEL and j > 0 and made_by_s08]
        if labels:
            carried = [b["text"] for b in content[labels[0] + 1:] if b.get("type") == "text"]
            assert sum(estimate_text(t) for t in carried) <= budget + 80
        for b in content:
            if b.get("type") == "text" and b["text"].startswith("Work ledger"):
                assert estimate_text(b["text"]) <= keep.ledger_budget + 60


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Path:
    """One workspace for every example (removed by pytest like any tmp_path)."""
    return tmp_path_factory.mktemp("continuity")


@settings(max_examples=40)
@given(st.data(), st.sampled_from([2_000, 6_000, 20_000]), st.sampled_from([100, 4_000]))
def test_every_typed_message_and_every_path_survives_any_layers_and_compactions(shared, data, limit, ledger_budget):
    session = Session(shared, limit, ledger_budget)
    session.type(data.draw(typed_text()))
    wanted = data.draw(st.integers(1, 5))
    for _ in range(60):
        step = data.draw(st.sampled_from(["type", "tools", "tools", "tools", "answer", "layer"]))
        if step == "type":
            session.type(data.draw(typed_text()))
        elif step == "tools":
            session.tools(data.draw)
        elif step == "answer":
            if session.messages[-1]["role"] == "user":
                session.messages.append(say("done " + data.draw(words)))
        else:
            session.layer(data.draw)
            visible_everywhere(session)
        if session.compactions >= wanted:
            break
    while session.compactions < wanted:                  # make sure the compactions happen
        session.tools(data.draw)
        before = session.messages
        session.messages = session.compactor.compact(before)
        session.compactions += session.messages is not before and summarized(session.messages)
        session.made = session.messages[:1] if session.messages is not before else []
        visible_everywhere(session)
        if session.messages is before:
            break
    visible_everywhere(session)

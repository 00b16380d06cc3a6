"""A loaded skill's instructions survive every compaction, whatever the summary says: the harness
re-attaches the body after the summary (up to SKILL_KEEP tokens), as it keeps the person's messages."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from compaction import Compactor, Continuity, SummaryJob, compact_history, snip_compact
from config import Settings
from compaction.continuity import SKILL_LABEL
from compaction.tokens import estimate_text, estimate_tokens
from messages import add_user_text
from session.log import LoggedHistory, SessionLog, load_session
from support.helpers import say, user_texts

LOSSY = ("The work went on.", "end_turn")
BODY = "Always run `make check` before a commit.\nNever edit generated/ by hand."


def grow(keep: Continuity, messages: list[dict], n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        keep.typed_message(f"request {i}")
        add_user_text(messages, f"request {i}")
        messages.append(say(f"answer {i}: " + "a long explanation " * 60))


def kept_skill(messages: list[dict]) -> list[str]:
    return [t for t in user_texts(messages) if t.startswith(SKILL_LABEL.format(name="house"))]


def test_a_loaded_skill_is_kept_through_three_lossy_compactions(workspace):
    keep, messages = Continuity(workspace=workspace), []
    grow(keep, messages, 4)
    keep.skill_loaded("house", BODY)
    for round_ in range(3):
        messages = compact_history(messages, SummaryJob(lambda r: LOSSY, workspace=workspace, continuity=keep))
        assert kept_skill(messages) == [SKILL_LABEL.format(name="house") + BODY], round_
        grow(keep, messages, 4, 10 * (round_ + 1))


def test_a_snip_keeps_a_skill_the_kept_tail_no_longer_shows(workspace):
    keep, messages = Continuity(workspace=workspace), []
    keep.skill_loaded("house", BODY)
    grow(keep, messages, 40)
    out = snip_compact(messages, 10, 3, workspace=workspace, continuity=keep)
    assert len(out) < len(messages) and kept_skill(out)


def test_a_long_skill_is_cut_at_skill_keep_with_a_pointer(workspace):
    keep, messages = Continuity(workspace=workspace), []
    keep.skill_keep = 100
    keep.skill_loaded("house", "rule. " * 5_000)
    grow(keep, messages, 4)
    (text,) = kept_skill(compact_history(messages, SummaryJob(lambda r: LOSSY, workspace=workspace, continuity=keep)))
    assert len(text) < 1_000 and "SKILL_KEEP=100" in text


def test_loaded_skills_come_back_with_a_resumed_session(workspace):
    keep = Continuity(workspace=workspace)
    log = SessionLog(workspace)
    history = LoggedHistory([], log)
    keep.connect(history.note)
    add_user_text(history, "hello")
    keep.skill_loaded("house", BODY)
    log.close()
    loaded = load_session(log.path)
    assert loaded.continuity.skills == {"house": BODY}


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_a_loaded_skill_is_in_the_history_after_any_cut(tmp_path_factory, data):
    """Whatever runs after a skill is loaded — summaries that mention nothing, reactive ones, snips, the
    fallback — the skill's body is in the history the model is sent next (it fits SKILL_KEEP)."""
    workspace = tmp_path_factory.mktemp("skills")
    settings_ = Settings(context_limit=4_000, context_window=16_000, snip_max_messages=16, snip_target_messages=8)
    keep = Continuity(workspace=workspace)
    compactor = Compactor(settings_, workspace, lambda request: LOSSY, continuity=keep)
    messages: list[dict] = []
    loaded_at = data.draw(st.integers(0, 5))
    for step in range(data.draw(st.integers(6, 14))):
        grow(keep, messages, data.draw(st.integers(1, 4)), 100 * step)
        if step == loaded_at:
            keep.skill_loaded("house", BODY)
        kind = data.draw(st.sampled_from(["compact", "reactive", "snip", "fallback", "none"]))
        before = messages
        if kind == "compact":
            messages = compactor.compact(messages)
        elif kind == "reactive":
            messages = compactor.reactive(messages, 20_000, 16_000)
        elif kind == "snip":
            messages = snip_compact(messages, 16, 8, workspace=workspace, continuity=keep)
        elif kind == "fallback":
            messages = compactor._fallback(messages)
        if step >= loaded_at and messages is not before and kind != "none":
            copies = [t for t in user_texts(messages) if t.startswith(SKILL_LABEL.format(name="house"))]
            assert any(BODY in text for text in user_texts(messages)), kind
            assert len(copies) <= 1, kind                  # kept once, not once more per cut


def test_a_model_that_loads_every_skill_of_a_repository_cannot_fill_the_window_with_them(workspace):
    """The attack: a repository ships 200 skills of 30,000 characters, the model loads every one. Each is
    within SKILL_KEEP, but together they were re-attached after every summary: ~1.5M tokens for a window
    of 50,000, a compaction that could never fit. All of them together stay within their share."""
    keep, messages = Continuity(workspace=workspace), []
    keep.use_settings(Settings(context_limit=50_000, context_window=200_000))
    grow(keep, messages, 80)
    for i in range(200):
        keep.skill_loaded(f"s{i}", f"skill {i} rule. " * 2_000)
    out = compact_history(messages, SummaryJob(lambda r: LOSSY, workspace=workspace, continuity=keep))
    skills = [t for t in user_texts(out) if t.startswith("[skill ")]
    assert skills and sum(estimate_text(t) for t in skills) <= 0.2 * 50_000 + 500
    assert skills[-1].startswith(SKILL_LABEL.format(name="s199"))          # the latest loaded is kept
    assert any("s0," in t and "load one again with the skill tool" in t for t in user_texts(out))
    assert estimate_tokens(out) < 50_000

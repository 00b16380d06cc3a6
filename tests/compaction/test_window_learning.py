"""Learning the window (issue 32): the bound an empty answer gives, the server's word, which one is used
and what is shown, and that a resume keeps what was learned."""

from __future__ import annotations

from hypothesis import given, strategies as st

from compaction.window import MIN_BOUND, MIN_WINDOW, WINDOW_SHARE, Window, silence_bound
from session.log import LoggedHistory, SessionLog
from session.replay import load_session


def window(setting=200_000, limit=50_000) -> Window:
    return Window(limit, setting)


# ---- the rule ------------------------------------------------------------------------------------------

@given(st.integers(0, 10**7), st.integers(1, 10**7))
def test_the_bound_lies_between_the_largest_answered_and_the_silent_size(answered, silent):
    if answered < silent:
        assert answered <= silence_bound(answered, silent) < silent


def test_a_paste_too_many_keeps_the_next_requests_under_the_largest_answered():
    """The usual case: the prompt had just crossed the window. The limit and the room (80 %) of the bound
    stay under what was answered, so the next request fits wherever the window is above it."""
    answered, silent = 3_000, 4_200
    learned = silence_bound(answered, silent)
    assert int(learned * 0.8) <= answered and int(learned * WINDOW_SHARE) <= answered


def test_after_a_jump_the_bound_does_not_trust_the_silent_size():
    assert silence_bound(1_000, 9_000) == 5_000
    assert silence_bound(0, 6_000) == 3_000          # nothing answered: half of it


def test_an_empty_answer_lowers_the_window_and_the_limit_and_says_where_it_came_from():
    w = window()
    assert w.bound(2_600, 3_900) == 3_250
    assert w.tokens == 3_250 and w.limit == int(3_250 * WINDOW_SHARE)
    assert w.source == "learned from an empty answer at ~3,900 tokens"


def test_a_bound_below_the_floor_is_not_believed():
    w = window()
    assert w.bound(0, 2 * MIN_BOUND - 2) is None and w.tokens == 200_000 and w.source == "CONTEXT_WINDOW"


def test_a_bound_may_be_below_min_window_as_s08_counts_a_dense_paste_low():
    w = window()
    assert w.bound(2_500, 3_500) == 3_000 < MIN_WINDOW and w.tokens == 3_000


def test_a_later_silence_only_ever_lowers_it():
    w = window()
    w.bound(3_000, 4_000)
    assert w.bound(3_000, 5_000) is None and w.tokens == 3_500
    assert w.bound(2_800, 3_400) == 3_100 and w.tokens == 3_100


# ---- the server's word ---------------------------------------------------------------------------------

def test_the_servers_word_replaces_the_default_and_the_limit_follows():
    w = window()
    assert w.tell(4_096, "llama.cpp /props n_ctx")
    assert w.tokens == 4_096 and w.limit == 3_072 and w.source == "llama.cpp /props n_ctx" and w.known == 4_096


def test_a_larger_servers_word_keeps_context_limit():
    w = window()
    assert w.tell(262_144, "/v1/models max_model_len")
    assert w.tokens == 262_144 and w.limit == 50_000 and not w.shrunk


def test_an_unbelievable_servers_word_is_ignored():
    w = window()
    for told in (0, -5, 100, MIN_WINDOW - 1, 10**9):
        assert not w.tell(told, "x") and w.tokens == 200_000 and w.source == "CONTEXT_WINDOW"


def test_what_the_endpoint_showed_wins_over_what_the_server_said():
    w = window()
    w.tell(8_192, "Ollama /api/show num_ctx")
    w.bound(5_000, 7_000)
    assert w.tokens == 6_000 and w.source.startswith("learned from an empty answer")
    w2 = window()
    w2.bound(5_000, 7_000)
    w2.tell(4_096, "llama.cpp /props n_ctx")          # arriving late and smaller: the smaller one is used
    assert w2.tokens == 4_096 and w2.source == "llama.cpp /props n_ctx"


# ---- the compactor: learning, recording, and the resume ------------------------------------------------

def a_compactor(tmp_path, **settings):
    from compaction import Compactor
    from config import Settings
    import dataclasses
    s = dataclasses.replace(Settings(), **settings)
    return Compactor(s, tmp_path, lambda request: "summary")


def test_the_compactor_learns_from_an_empty_answer_once_and_records_it(tmp_path):
    c = a_compactor(tmp_path)
    records: list[dict] = []
    c.endpoint.on_window = records.append
    c.endpoint.largest_answered, c.endpoint.largest_estimate = 3_000, 2_600
    assert c.endpoint.silence_is_overflow(4_300) is True            # larger than any answered: an overflow
    assert c.window.tokens == (2_600 + 4_300) // 2        # no messages: the size is s08's estimate
    assert records == [{"t": "window", "tokens": c.window.tokens, "silent": 4_300}]


def test_a_silence_smaller_than_what_was_answered_learns_only_half_of_it(tmp_path):
    c = a_compactor(tmp_path)
    c.endpoint.largest_answered = c.endpoint.largest_estimate = 9_000
    c.endpoint.silences = 1                                           # silent the time before too
    assert c.endpoint.silence_is_overflow(6_000) and c.window.tokens == 3_000


def a_log(tmp_path, record: dict):
    """A session log holding one message and `record`; its path."""
    history = LoggedHistory([], SessionLog(tmp_path, header={"model": "m"}), lambda _text: None)
    history.append({"role": "user", "content": "hi"})
    history.note(record)
    return history.log.path


def test_the_window_record_resumes_as_a_bound(tmp_path):
    loaded = load_session(a_log(tmp_path, {"t": "window", "tokens": 3_000, "silent": 3_500}))
    assert (loaded.window, loaded.window_silent) == (3_000, 3_500)
    c = a_compactor(tmp_path)
    c.endpoint.learn_window(loaded.window, quiet=True, silent=loaded.window_silent)
    assert c.window.tokens == 3_000 and c.window.source == "learned from an empty answer at ~3,500 tokens"


def test_a_forged_window_record_is_not_resumed(tmp_path):
    for i, forged in enumerate(({"t": "window", "tokens": 100, "silent": 150},
                                {"t": "window", "tokens": 5_000, "silent": 4_000},
                                {"t": "window", "tokens": 3_000, "silent": "x"}, {"t": "window", "tokens": 3_000})):
        folder = tmp_path / str(i)
        folder.mkdir()
        assert load_session(a_log(folder, forged)).window is None, forged


# ---- an answer the window cut, and a resumed session's first silence ------------------------------------

def test_a_cut_answer_below_the_smallest_window_teaches_the_smallest_window():
    """A window of exactly MIN_WINDOW cuts an answer at ~4,093 tokens in s08's measure: taken as MIN_WINDOW,
    not ignored (the next request would overflow)."""
    w = window()
    assert w.cut(MIN_WINDOW - 3) and w.tokens == MIN_WINDOW and w.limit == int(MIN_WINDOW * WINDOW_SHARE)
    assert w.source == f"learned from an answer cut off at ~{MIN_WINDOW - 3:,} tokens"
    assert w.cut(6_000) is False and w.tokens == MIN_WINDOW        # only ever smaller
    w2 = window()
    assert w2.cut(9_000) and w2.tokens == 9_000
    assert window().learn(MIN_WINDOW - 3) is False                  # an API-stated maximum that small is not believed


def test_an_answer_cut_short_of_any_window_teaches_nothing():
    """A gateway that caps the output far below MAX_TOKENS cuts an answer with a small prompt too: that is
    no window (under MIN_BOUND), and the session keeps the window it had."""
    w = window()
    assert w.cut(1_500) is False and w.tokens == window().tokens and w.learned is None


def test_the_compactor_records_a_cut_window_and_a_resume_restores_it(tmp_path):
    c = a_compactor(tmp_path)
    records: list[dict] = []
    c.endpoint.on_window = records.append
    c.endpoint.window_cut(4_093)
    assert records == [{"t": "window", "tokens": MIN_WINDOW}]
    loaded = load_session(a_log(tmp_path, records[0]))
    c2 = a_compactor(tmp_path)
    c2.endpoint.learn_window(loaded.window, quiet=True, silent=loaded.window_silent)
    assert c2.window.tokens == MIN_WINDOW


def a_usage_log(tmp_path, usages: list[tuple[dict, str]]):
    history = LoggedHistory([], SessionLog(tmp_path, header={"model": "m"}), lambda _text: None)
    history.append({"role": "user", "content": "hi"})
    for usage, purpose in usages:
        history.note({"t": "usage", "n": 1, "u": usage, "p": purpose})
    return history.log.path


def test_a_resumed_log_says_the_largest_prompt_answered(tmp_path):
    loaded = load_session(a_usage_log(tmp_path, [
        ({"input_tokens": 2_000, "output_tokens": 100}, "answer"),
        ({"input_tokens": 500, "cache_read_input_tokens": 3_000, "output_tokens": 90}, "answer"),
        ({"input_tokens": 9_000, "output_tokens": 0}, "answer"),          # silence: nothing was answered
        ({"input_tokens": 20_000, "output_tokens": 500}, "summary"),      # not the conversation's prompt
        ({"input_tokens": 1_000, "output_tokens": 50}, "answer")]))
    assert loaded.answered == 3_590
    folder = tmp_path / "none"
    folder.mkdir()
    assert load_session(a_usage_log(folder, [])).answered == 0


def test_a_resumed_sessions_first_silence_past_what_it_answered_is_an_overflow(tmp_path):
    """A new process (`s08 -c -p`) answered nothing itself; what its log says was answered is what the
    first silence is compared with, and what the bound starts from (in s08's estimate)."""
    fresh = a_compactor(tmp_path)
    assert fresh.endpoint.silence_is_overflow(4_600) is False         # nothing answered: before the fix, stuck here
    c = a_compactor(tmp_path)
    records: list[dict] = []
    c.endpoint.on_window = records.append
    c.endpoint.resume_answered(4_000)
    assert c.endpoint.silence_is_overflow(4_600) is True
    assert c.window.tokens == 4_000 + 600 // 2 and records == [{"t": "window", "tokens": 4_300, "silent": 4_600}]
    c2 = a_compactor(tmp_path)
    c2.endpoint.resume_answered(5_000)
    assert c2.endpoint.silence_is_overflow(4_600) is False            # smaller than answered before: a failure, once


def test_the_resumed_answered_size_is_scaled_to_s08s_estimate(tmp_path):
    c = a_compactor(tmp_path)
    c.endpoint.resume_answered(4_000)
    assert c.endpoint.answered_estimate(5_000, 4_000) == 3_200        # the endpoint counts 5/4 of s08's estimate
    c.endpoint.largest_estimate = 3_500                               # once this process answered, its own figure
    assert c.endpoint.answered_estimate(5_000, 4_000) == 3_500

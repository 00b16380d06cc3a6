"""What the endpoint shows about its window and its counts (compaction/endpoint_window.py), alone: no
Compactor, a Window, a fixed estimate, and the events and re-budgets it asks for recorded."""

from __future__ import annotations

import pytest

from compaction.endpoint_window import MAX_API_SCALE, MAX_USAGE_SCALE, EndpointWindow
from compaction.window import Window
from events import Notice
from llm.window_probe import Told


class Seen:
    """An EndpointWindow over a 200k window (limit 50k) with what it emitted and how often it re-budgeted."""

    def __init__(self, estimate: int = 1_000):
        self.events: list = []
        self.changes = 0
        self.records: list[dict] = []
        self.window = Window(50_000, 200_000)
        self.endpoint = EndpointWindow(self.window, lambda _messages: estimate, self.events.append,
                                       lambda: self.window.limit, self.changed)
        self.endpoint.on_window = self.records.append

    def changed(self) -> None:
        self.changes += 1

    def notices(self) -> list[str]:
        return [event.text for event in self.events if isinstance(event, Notice)]


class Probe:
    """A window question whose answer is in (or not yet: None)."""

    def __init__(self, told: Told | None):
        self.told = told

    def result(self) -> Told | None:
        return self.told


def test_a_usage_far_below_the_estimate_is_not_trusted_and_said_once():
    seen = Seen()
    assert seen.endpoint.usage(17, 525) is False
    assert seen.endpoint.usage(0, 525) is False
    assert "usage looks incomplete (17 tokens reported where s08 estimates 525)" in seen.endpoint.usage_doubt
    assert len(seen.notices()) == 1 and seen.endpoint.usage_scale == 1.0


def test_a_usage_over_the_estimate_scales_up_to_its_cap():
    seen = Seen()
    assert seen.endpoint.usage(1_500, 1_000) is True and seen.endpoint.usage_scale == 1.5
    assert seen.endpoint.usage(9_000, 1_000) is True and seen.endpoint.usage_scale == MAX_USAGE_SCALE
    assert seen.endpoint.usage(1_000, 1_000) is True and seen.endpoint.usage_scale == MAX_USAGE_SCALE  # the largest
    assert seen.endpoint.scale == MAX_USAGE_SCALE and not seen.events


def test_a_too_long_count_scales_this_request_and_caps_the_lasting_one():
    seen = Seen()
    assert seen.endpoint.too_long(None, 1_000) == 1.0 and seen.endpoint.api_scale == 1.0
    assert seen.endpoint.too_long(10_000, 1_000) == 10.0 and seen.endpoint.api_scale == MAX_API_SCALE
    assert seen.endpoint.scale == MAX_API_SCALE


def test_a_silence_below_what_was_answered_is_a_failure_then_twice_an_overflow():
    seen = Seen(estimate=6_000)
    seen.endpoint.answered(9_000, 9_000)
    assert seen.endpoint.silence_is_overflow(7_000, []) is False        # answered more before: once, a failure
    assert seen.window.tokens == 200_000 and seen.changes == 0 and not seen.records
    assert seen.endpoint.silence_is_overflow(7_000, []) is True          # silent the time before too: half of it
    assert seen.window.tokens == 3_000 and seen.endpoint.silent_at == 6_000    # in s08's estimate of the messages
    assert seen.changes == 1 and seen.records == [{"t": "window", "tokens": 3_000, "silent": 6_000}]


def test_a_silence_past_the_largest_answered_bounds_the_window_between_them():
    seen = Seen()
    seen.endpoint.answered(3_000, 2_600)
    assert seen.endpoint.silence_is_overflow(4_300) is True             # no messages: the size is the estimate
    assert seen.window.tokens == (2_600 + 4_300) // 2 and seen.changes == 1
    said = seen.notices()[-1]
    assert "answered nothing to a prompt s08 estimates at ~4,300 tokens, after answering ~2,600" in said
    assert f"compacting at {seen.window.limit:,}" in said


def test_an_answer_resets_the_silences():
    seen = Seen()
    seen.endpoint.answered(9_000, 9_000)
    assert seen.endpoint.silence_is_overflow(6_000) is False
    seen.endpoint.answered(9_000, 9_000)
    assert seen.endpoint.silence_is_overflow(6_000) is False            # not twice in a row: still a failure


def test_a_resumed_session_scales_what_its_log_says_was_answered():
    seen = Seen()
    seen.endpoint.resume_answered(4_000)
    assert seen.endpoint.answered_estimate(5_000, 4_000) == 3_200
    seen.endpoint.answered(100, 3_500)
    assert seen.endpoint.answered_estimate(5_000, 4_000) == 3_500       # this process's own figure wins


def test_a_cut_answer_bounds_the_window_and_forgets_the_silence():
    seen = Seen()
    seen.endpoint.learn_window(8_000, quiet=True, silent=9_000)
    assert seen.endpoint.silent_at == 9_000 and not seen.events
    seen.endpoint.window_cut(6_000)
    assert seen.window.tokens == 6_000 and seen.endpoint.silent_at is None
    assert seen.records[-1] == {"t": "window", "tokens": 6_000} and seen.changes == 2
    assert seen.endpoint.forget_silence() is False                      # a cut is not a silence: kept
    assert seen.window.tokens == 6_000


def test_the_person_s_window_drops_one_an_empty_answer_bounded():
    seen = Seen()
    seen.endpoint.learn_window(8_000, quiet=True, silent=9_000)
    assert seen.endpoint.forget_silence() is True
    assert seen.window.tokens == 200_000 and seen.endpoint.silent_at is None and seen.changes == 2


@pytest.mark.parametrize("told, taken", [(Told(32_768, "llama.cpp /props n_ctx"), True),
                                         (Told(12, "nonsense"), False)])
def test_the_server_s_word_is_taken_once_its_answer_is_in(told, taken):
    seen = Seen()
    seen.endpoint.window_probe = Probe(None)
    seen.endpoint.take_told()
    assert seen.endpoint.window_probe is not None and seen.window.tokens == 200_000    # not in yet: asked later
    seen.endpoint.window_probe = Probe(told)
    seen.endpoint.answered(100, 100)                                    # taken after an answer
    assert seen.endpoint.window_probe is None
    assert (seen.window.tokens == 32_768) is taken and (seen.changes == 1) is taken
    assert bool(seen.notices()) is taken and not seen.records           # told, not learned: no log record

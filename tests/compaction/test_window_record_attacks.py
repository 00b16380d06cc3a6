"""A forged window record in a session log (session/replay.py): only a window an empty answer could
really have bounded resumes — never a number the banner and /context would print thousands of digits of,
nor one far below the silent prompt it names."""

from __future__ import annotations

import pytest

from session.replay import load_session
from test_window_learning import a_log


@pytest.mark.parametrize("forged", [
    {"t": "window", "tokens": 2_048, "silent": 10 ** 4_000},      # a 5,300-character "~N tokens" in /context
    {"t": "window", "tokens": 2_048, "silent": 1_000_000},        # the bound is at least half the silent size
    {"t": "window", "tokens": True, "silent": 3_000},
    {"t": "window", "tokens": 3_000, "silent": True},
    {"t": "window", "tokens": 10 ** 30},
])
def test_a_window_no_empty_answer_could_give_is_not_resumed(tmp_path, forged):
    assert load_session(a_log(tmp_path, forged)).window is None, forged


def test_a_window_an_empty_answer_gives_still_resumes(tmp_path):
    assert load_session(a_log(tmp_path, {"t": "window", "tokens": 2_048, "silent": 4_096})).window == 2_048

"""Which key answers the approval question (ui/approve.KeyJudge), on a simulated clock: typing is never
an answer, however it is timed around the question; a deliberate key after a pause is."""

from __future__ import annotations

from hypothesis import given, strategies as st

from ui.approve import GRACE, QUIET, SETTLE, KeyJudge
from ui.keys import KeyWatcher

ALLOWED = "yasn"
TEXT = st.text(alphabet="yasnpleook thr", min_size=1, max_size=40)


def run(judge: KeyJudge, keys: list[tuple[str, float]], until: float) -> str | None:
    """Feed timed keys; return the first answer the judge gives (checked whenever time passes)."""
    for key, at in keys:
        got = judge.answer(at)
        if got:
            return got
        judge.key(key, at)
    return judge.answer(until)


@given(TEXT, st.floats(min_value=0.0, max_value=QUIET - 0.01), st.floats(min_value=-5, max_value=5),
       st.floats(min_value=0.0, max_value=10))
def test_a_burst_of_typing_never_answers(text, gap, start, last_key_ago):
    """Keys less than QUIET apart, starting anywhere around the question, answer nothing; all are kept."""
    last = start - last_key_ago
    judge = KeyJudge(ALLOWED, shown_at=0.0, last_key_at=last)
    keys = [(ch, start + i * gap) for i, ch in enumerate(text)]
    answer = run(judge, keys, start + len(text) * gap + SETTLE * 2)
    if len(text) > 1:
        assert answer is None, (text, gap, start)
        assert judge.typed == text
    else:                    # one key alone, after a pause: a deliberate answer, unless too early
        deliberate = text in ALLOWED and start - 0.0 >= GRACE and start - last >= QUIET
        assert (answer == text) == deliberate


@given(TEXT, st.floats(min_value=0.05, max_value=0.3), st.floats(min_value=QUIET + 0.01, max_value=3),
       st.sampled_from(ALLOWED))
def test_a_key_after_a_pause_answers_and_what_was_typed_is_kept(text, gap, pause, key):
    judge = KeyJudge(ALLOWED, shown_at=0.0, last_key_at=None)
    keys = [(ch, 0.01 + i * gap) for i, ch in enumerate(text)]
    at = max(GRACE + 0.01, keys[-1][1] + pause)
    answer = run(judge, keys + [(key, at)], at + SETTLE + 0.01)
    if len(text) > 1 or text not in ALLOWED:
        assert answer == key and judge.typed == text
    else:
        assert answer in (text, key)


def test_the_typist_from_the_report():
    """ "please look at the parser next" at 0.12 s per key, the question shown mid-word: no answer."""
    judge = KeyJudge(ALLOWED, shown_at=1.0, last_key_at=0.95)
    text = "please look at the parser next"
    assert run(judge, [(ch, 1.0 + 0.12 * i) for i, ch in enumerate(text)], 10.0) is None
    assert judge.typed == text
    assert judge.answer(10.0) is None and run(judge, [("a", 10.0)], 10.0 + SETTLE + 0.01) == "a"


def test_keys_kept_from_a_question_never_interrupt():
    keys = KeyWatcher(fd=-1)
    keys.armed = True
    keys.interrupt = lambda: (_ for _ in ()).throw(AssertionError("interrupted"))
    for chunk in ("half a line\x1b", " and more", "\r", "second"):       # one chunk per read
        keys.keep(chunk)
    assert keys.take_typed() == (["half a line and more"], "second")

"""A degenerate answer's looping tail (llm/repetition.py): found when it loops, one copy kept, and left
alone when it does not."""

from __future__ import annotations

from hypothesis import given, strategies as st

from llm.repetition import AT_LIMIT, STREAMING_PIECE, WHILE_STREAMING, repeating_tail, streaming_span

pieces = st.text(st.sampled_from("abcdefgh ,.\n"), min_size=2, max_size=60).filter(
    lambda p: p.strip() and all(p != p[:k] * (len(p) // k) for k in range(1, len(p)) if len(p) % k == 0))


@given(prefix=st.text(st.sampled_from("XYZ "), max_size=80), piece=pieces, copies=st.integers(60, 120),
       cut=st.integers(0, 59))
def test_a_loop_is_found_and_cut_to_about_one_copy(prefix, piece, copies, cut):
    copies = max(copies, AT_LIMIT[1] // len(piece) + 1)
    text = prefix + piece * copies + piece[:cut % len(piece)]
    found = repeating_tail(text, *AT_LIMIT)
    assert found is not None and found.piece == len(piece) and found.copies >= copies - 1
    assert found.keep < len(prefix) + 2 * len(piece)                       # one copy kept, at most a sentence more
    assert text[found.keep - len(piece):found.keep] in (piece + piece)     # ...and a whole one
    rest = text[found.keep - len(piece):]
    assert all(rest[i] == rest[i + len(piece)] for i in range(len(rest) - len(piece)))   # what goes is the loop


def test_what_does_not_loop_is_left_alone():
    listing = "".join(f"{i}. step {i} of the plan, with words\n" for i in range(2000))
    assert repeating_tail(listing, *AT_LIMIT) is None
    assert repeating_tail("word " * 100, *AT_LIMIT) is None                 # 500 characters: below the span
    assert repeating_tail("=" * 5000, *AT_LIMIT) is None                    # a run of one character
    assert repeating_tail("text\n" + " \n" * 3000, *AT_LIMIT) is None       # blanks are layout
    table = "| a | b |\n|---|---|\n" + "| 0 | 0 |\n" * 50
    assert repeating_tail(table, *WHILE_STREAMING) is None


def test_the_copy_kept_ends_with_its_sentence():
    text = "Here is my plan. " + "I will fix the bug now. " * 40 + "I will fix"
    found = repeating_tail(text, *AT_LIMIT)
    assert found is not None and text[:found.keep] == "Here is my plan. I will fix the bug now."


def test_a_stream_is_abandoned_only_after_about_half_the_output_limit():
    assert streaming_span(100) == WHILE_STREAMING[1] and streaming_span(32_000) == 64_000
    text = "Go. " + "I will fix the bug now. " * 1000                          # 24,000 characters
    assert repeating_tail(text, WHILE_STREAMING[0], streaming_span(8_000), STREAMING_PIECE) is not None
    assert repeating_tail(text, WHILE_STREAMING[0], streaming_span(32_000), STREAMING_PIECE) is None


def test_a_stream_is_not_abandoned_on_a_repeated_word_which_the_limit_still_cuts():
    text = "at length: " + "detail " * 5000                                # as tests fill a context
    assert repeating_tail(text, WHILE_STREAMING[0], streaming_span(8_000), STREAMING_PIECE) is None
    found = repeating_tail(text, *AT_LIMIT)
    assert found is not None and text[:found.keep].rstrip() == "at length: detail"

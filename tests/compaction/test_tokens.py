"""compaction/tokens.py: the CJK count behind the estimate is exactly "the characters in CJK_RANGES"."""

from __future__ import annotations

import re

from hypothesis import given, strategies as st

from compaction.tokens import CJK_RANGES, count_cjk

IN_CJK = re.compile(f"[{CJK_RANGES}]")
EDGES = [ord(bound) for bound in CJK_RANGES if bound != "-"]
NEAR_AN_EDGE = st.sampled_from(EDGES).flatmap(lambda edge: st.integers(max(0, edge - 3), min(0x10FFFF, edge + 3)))
CHARACTERS = st.one_of(NEAR_AN_EDGE.map(chr), st.characters(), st.integers(0xD800, 0xDFFF).map(chr))  # lone surrogates too


def page(high: int) -> str:
    return "".join(chr(high * 256 + low) for low in range(256))


def test_every_page_of_the_basic_plane_is_counted_as_the_ranges_say():
    for high in range(256):
        assert count_cjk(page(high)) == len(IN_CJK.findall(page(high))), hex(high)


def test_each_character_of_the_pages_only_partly_cjk_and_beyond_the_basic_plane():
    for code in [*range(0x3000, 0x3100), *range(0x4D00, 0x4E00), *range(0xD700, 0xD800), *range(0xFF00, 0x10000),
                 0x10000, 0x1F600, 0x20000, 0x2A6DF, 0x10FFFF]:
        assert count_cjk(chr(code)) == bool(IN_CJK.match(chr(code))), hex(code)


@given(st.text(CHARACTERS, max_size=80))
def test_any_text_is_counted_as_the_ranges_say(text):
    assert count_cjk(text) == len(IN_CJK.findall(text))

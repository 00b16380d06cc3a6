"""Hostile strings for the sanitizer's tests, and the check that none of them reached a terminal raw.

An injected string is made of plain text, real attacks (OSC 52 clipboard writes, screen clears,
title changes, C1 controls) and single control characters each followed by MARK. s08's own styling
escapes never put MARK right after a control character, and never emit any of ATTACKS, so finding
either in the output means injected bytes went through raw.
"""

from __future__ import annotations

from hypothesis import strategies as st

MARK = "Ω"
ATTACKS = ["\x1b]52;c;c3RvbGVu\x07", "\x1b]52;c;c3RvbGVu\x1b\\", "\x1b[2J", "\x1b[3J", "\x1b]0;pwned\x07",
           "\x9b2J", "\x9d0;pwned\x9c", "\x1bc", "\x1bP+q544e\x1b\\", "\x1b[6n", "\x1b[?1049h", "\x1b[1;1H"]
CONTROLS = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + ["\x7f"] + [chr(c) for c in range(0x80, 0xa0)] \
    + ["\u202e", "\u2066"]
ALLOWED_RAW = set("\n\r\t\x1b\x08")      # what s08's own output may contain (styling starts with ESC;
                                          # prompt_toolkit draws with backspaces)
PLAIN = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("*_`#|[]():-> \n"),
                max_size=20)

injected = st.lists(st.one_of(PLAIN, st.sampled_from(ATTACKS), st.sampled_from(CONTROLS).map(lambda c: c + MARK)),
                    min_size=1, max_size=8).map("".join)


def raw_injections(output: str) -> list[str]:
    """The injected sequences or control characters that appear raw in `output` (should be none)."""
    found = [a for a in ATTACKS if a in output]
    found += [repr(c) for c in CONTROLS if c + MARK in output]
    found += [repr(c) for c in set(output) if (ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0) and c not in ALLOWED_RAW]
    found += [repr(c) for c in ("\u202e", "\u2066") if c in output]
    return found

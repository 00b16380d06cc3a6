"""A degenerate answer: text that ends in the same piece over and over, as a small model produces when it
falls into a loop and repeats until MAX_TOKENS.

    repeating_tail(text, copies, span) -> Repeat | None

The tail must be one piece (of at most MAX_PIECE characters, not only whitespace) repeated exactly, at
least `copies` times and over at least `span` characters, ending with a whole copy or part of one (a
stream cut at the limit stops mid-copy). `Repeat.keep` is where the text is cut so that the first copy
stays and every later one goes. Two strictnesses are used (llm/reply.py): a loose one on an answer the
limit already cut (AT_LIMIT), a strict one while the answer still streams (WHILE_STREAMING), which
abandons the stream early; an answer that repeats a few lines on purpose (a table, a file of zeros)
stays below both. The copy kept ends where a sentence or line does when one ends inside it (any
stretch of one piece's length inside the loop is a copy of it, turned).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_PIECE = 2_000            # characters: a repeated paragraph, not a repeated chapter
AT_LIMIT = (5, 800)          # (copies, characters) for an answer the output limit cut
WHILE_STREAMING = (10, 3_000)   # stricter: the stream is abandoned on it


@dataclass
class Repeat:
    keep: int          # the text up to here: what came before the loop, and its first copy
    piece: int         # characters of one copy
    copies: int        # whole copies (the cut part of the last one not counted)


def repeating_tail(text: str, copies: int, span: int) -> Repeat | None:
    """The shortest piece whose repetition makes up the end of `text`, if it repeats enough."""
    n = len(text)
    for piece in range(1, min(MAX_PIECE, n // copies) + 1):
        need = max(span, copies * piece)
        if need > n:
            break
        if text[n - need + piece:] != text[n - need:n - piece]:
            continue
        start = n - need
        while start >= piece and text[start - piece:start] == text[start:start + piece]:
            start -= piece                      # whole copies before the checked stretch
        while start > 0 and text[start - 1] == text[start - 1 + piece]:
            start -= 1                          # and the part of one that began it
        if not text[start:start + piece].strip():
            return None                         # a run of blanks is layout, not a loop
        return Repeat(_at_an_end(text, start + piece, piece), piece, (n - start) // piece)
    return None


def _at_an_end(text: str, keep: int, piece: int) -> int:
    """`keep` moved on (less than a piece, within the loop) to just after a line's or sentence's end."""
    window = text[keep:keep + piece - 1]
    for ends in ("\n", ".!?"):
        at = next((i for i, c in enumerate(window) if c in ends), None)
        if at is not None:
            return keep + at + 1
    return keep

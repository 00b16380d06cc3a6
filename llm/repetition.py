"""A degenerate answer: text that ends in the same piece over and over, as a small model produces when it
falls into a loop and repeats until MAX_TOKENS.

    repeating_tail(text, copies, span) -> Repeat | None

The tail must be one piece (of at most MAX_PIECE characters, not only whitespace) repeated exactly, at
least `copies` times and over at least `span` characters, ending with a whole copy or part of one (a
stream cut at the limit stops mid-copy). `Repeat.keep` is where the text is cut so that the first copy
stays and every later one goes. Two strictnesses are used (llm/reply.py): a loose one on an answer the
limit already cut (AT_LIMIT), a strict one while the answer still streams (WHILE_STREAMING), which
abandons the stream early; an answer that repeats a few lines on purpose (a table, a file of zeros)
stays below both. While streaming, the loop must also have used about half of the output limit
(streaming_span), and its piece must be a sentence or a line (STREAMING_PIECE) rather than a word: a
loop stopped then saves the other half, and an answer someone wants long and repetitive ("word word
word …", as tests fill a context) streams whole — a loop on a word is still cut at the limit. A run of one character (a rule line, a flood) is not
taken for a loop: the answer's size bound (llm/reply.py) handles a flood. The copy kept ends where a sentence or line does when one ends inside it (any
stretch of one piece's length inside the loop is a copy of it, turned).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_PIECE = 2_000            # characters: a repeated paragraph, not a repeated chapter
AT_LIMIT = (5, 800)          # (copies, characters) for an answer the output limit cut
WHILE_STREAMING = (10, 3_000)   # stricter: the stream is abandoned on it (and see streaming_span)
STREAMING_PIECE = 16            # characters a copy has at least for a stream to be abandoned on it
CHARS_PER_OUTPUT_TOKEN = 4      # roughly, for English text and code
PROBE = 128                     # characters compared first, before a whole stretch


@dataclass
class Repeat:
    keep: int          # the text up to here: what came before the loop, and its first copy
    piece: int         # characters of one copy
    copies: int        # whole copies (the cut part of the last one not counted)


def streaming_span(max_tokens: int) -> int:
    """Characters a loop must cover before a stream is abandoned on it: about half of the output limit."""
    return max(WHILE_STREAMING[1], max_tokens * CHARS_PER_OUTPUT_TOKEN // 2)


def repeating_tail(text: str, copies: int, span: int, shortest: int = 2) -> Repeat | None:
    """The shortest piece whose repetition makes up the end of `text`, if it repeats enough and is at
    least `shortest` characters long."""
    n = len(text)
    for piece in range(1, min(MAX_PIECE, n // copies) + 1):
        need = max(span, copies * piece)
        if need > n:
            break
        probe = min(need - piece, PROBE)          # a cheap look first: most pieces fail at once
        if text[n - probe:] != text[n - probe - piece:n - piece] or text[n - need + piece:] != text[n - need:n - piece]:
            continue
        start = n - need
        while start >= piece and text[start - piece:start] == text[start:start + piece]:
            start -= piece                      # whole copies before the checked stretch
        while start > 0 and text[start - 1] == text[start - 1 + piece]:
            start -= 1                          # and the part of one that began it
        if piece < max(2, shortest) or not text[start:start + piece].strip():
            return None                         # a run of one character or of blanks: not a loop
        return Repeat(_at_an_end(text, start + piece, piece), piece, (n - start) // piece)
    return None


def _at_an_end(text: str, keep: int, piece: int) -> int:
    """`keep` moved on (less than a piece, within the loop) to just after a line's or sentence's end."""
    before = text[:keep].rstrip(" \t")
    if before.endswith(("\n", ".", "!", "?")):
        return keep                             # the copy already ends with its sentence
    window = text[keep:keep + piece - 1]
    for ends in ("\n", ".!?"):
        at = next((i for i, c in enumerate(window) if c in ends), None)
        if at is not None:
            return keep + at + 1
    return keep

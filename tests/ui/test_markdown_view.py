"""The streamed answer as Markdown (ui/markdown_stream.py) and the tool lines (ui/toolview.py),
rendered into a rich Console: what is printed, where blocks end, and how lines wrap."""

from __future__ import annotations

import io
import re

from hypothesis import given, strategies as st
from rich.console import Console

from events import ToolFinished
from tools.preview import FileChange
from ui.activity import Activity
from ui.markdown_stream import BlockSplitter, MarkdownStream, OpenTail, settled
from ui.toolview import finished_lines, message_lines, wrap_words

LINES = st.sampled_from(["# Title", "## Sub", "plain words here", "**bold** text", "- item", "1. first",
                         "| a | b |", "|---|---|", "| 1 | 2 |", "```python", "```", "~~~", "def f():",
                         "    return 1", "", "  ", "> quote", "text with `code`"])
DOC = st.lists(LINES, max_size=30).map("\n".join)


def chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:])]


@given(DOC, st.lists(st.integers(min_value=0, max_value=10_000), max_size=20))
def test_every_character_comes_out_once_in_order_however_it_is_cut(doc, cuts):
    splitter, out = BlockSplitter(), []
    for piece in chunks(doc, cuts):
        out += splitter.feed(piece)
    assert "".join(out) + splitter.take_tail() == doc


@given(DOC, st.lists(st.integers(min_value=0, max_value=10_000), max_size=20))
def test_blocks_do_not_depend_on_how_the_stream_was_cut(doc, cuts):
    whole, pieces = BlockSplitter(), BlockSplitter()
    expected = whole.feed(doc)
    got = []
    for piece in chunks(doc, cuts):
        got += pieces.feed(piece)
    assert got == expected


@given(DOC)
def test_a_code_fence_is_never_cut_open(doc):
    """A block with a fence in it is exactly one whole fenced block: it opens on its first line and
    closes on its last."""
    for block in BlockSplitter().feed(doc + "\n"):
        lines = block.rstrip("\n").split("\n")
        fences = [line for line in lines if re.match(r"^ {0,3}(```|~~~)", line)]
        if fences:
            assert len(lines) >= 2 and lines[0] == fences[0] and lines[-1] == fences[-1]
            assert lines[-1].strip()[0] == lines[0].strip()[0]


def test_blocks_close_at_blank_lines_headings_fences_and_table_ends():
    splitter = BlockSplitter()
    text = ("# Title\nfirst para\nstill first\n\n| a | b |\n|---|---|\n| 1 | 2 |\nafter table\n"
            "```py\nx = 1\n\ny = 2\n```\nopen tail")
    assert splitter.feed(text) == ["# Title\n", "first para\nstill first\n\n", "| a | b |\n|---|---|\n| 1 | 2 |\n",
                                   "after table\n", "```py\nx = 1\n\ny = 2\n```\n"]
    assert splitter.tail == "open tail"


WORD = st.sampled_from(["parse", "flag", "caller", "works", "verbose", "test", "x", "snake_case"])
SPAN = st.one_of(WORD, WORD.map("**{}**".format), WORD.map("*{}*".format), WORD.map("`{}`".format),
                 WORD.map("~~{}~~".format), WORD.map("[{0}](https://example.com/{0})".format))
PHRASE = st.lists(SPAN, min_size=1, max_size=6).map(" ".join)
BLOCK = st.one_of(
    PHRASE, PHRASE.map("## {}".format), st.lists(PHRASE, min_size=1, max_size=3).map(lambda items: "\n".join(
        f"- {item}" for item in items)),
    st.lists(WORD, min_size=1, max_size=3).map(lambda words: "```python\n" + "\n".join(words) + "\n```"),
    st.lists(WORD, min_size=2, max_size=2).map(lambda cells: "| {} | {} |\n|---|---|\n| {} | {} |".format(*cells, *cells)))
WELL_FORMED = st.lists(BLOCK, min_size=1, max_size=4).map("\n\n".join)
MARKS = set("*`~|[]#<")                  # none of them is in a word, so none is ever drawn in a well-formed answer


@given(WELL_FORMED, st.lists(st.integers(min_value=1, max_value=10_000), min_size=1, max_size=8))
def test_the_live_tail_never_draws_a_half_arrived_mark(doc, cuts):
    """However the answer is cut into deltas, what the live area draws of the open block is Markdown
    already rendered: no `**impo`, `| f`, or a fence's backticks, even for a moment."""
    console = Console(file=io.StringIO(), width=80, height=40, color_system=None)
    splitter = BlockSplitter()
    for piece in chunks(doc, cuts):
        splitter.feed(piece)
        shown = settled(splitter.tail, splitter.fence, splitter.table)
        assert splitter.tail.startswith(shown)
        console.print(OpenTail(splitter))
    drawn = console.file.getvalue()
    assert not MARKS & set(drawn), drawn


@given(st.text(st.sampled_from("ab `*_~[]()<>!|\\#-\n"), max_size=200), st.sampled_from([None, "```", "~~~~"]),
       st.booleans())
def test_what_is_drawn_of_any_tail_is_a_prefix_of_it(tail, fence, table):
    assert tail.startswith(settled(tail, fence, table))


def render_stream(text: str, width: int, size: int = 7) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)
    stream = MarkdownStream(console, Activity(console))
    for at in range(0, len(text), size):
        stream.feed(text[at:at + size])
    stream.finish()
    return console.file.getvalue()


ANSWER = ("## Result\n\nThe **parser** now accepts `--verbose` and the tests pass; here is what changed in "
          "detail, so that you can review it quickly:\n\n| file | change |\n|---|---|\n| cli.py | new flag |\n\n"
          "```python\ndef main(verbose=False):\n    return 0\n```\n\nDone.")


def test_markdown_is_rendered_once_not_raw():
    out = render_stream(ANSWER, 80)
    assert "##" not in out and "**" not in out and "```" not in out and "|---|" not in out
    assert "Result" in out and "parser" in out and "def main(verbose=False):" in out and "cli.py" in out
    assert out.count("Result") == 1 and out.count("Done.") == 1 and out.count("def main") == 1
    assert "─" in out                      # the table is drawn


def test_answers_wrap_at_words_at_any_width():
    words = set(re.findall(r"[A-Za-z]{4,}", ANSWER)) - {"python"}      # the fence's language is not shown
    for width in (60, 80, 120, 200):
        out = render_stream(ANSWER, width)
        assert all(len(line) <= width for line in out.split("\n"))
        assert words <= set(re.findall(r"[A-Za-z]{4,}", out))      # no word was broken in two


@given(st.text(st.sampled_from("ab c\n"), max_size=200), st.integers(min_value=8, max_value=100))
def test_wrap_words_keeps_every_word_and_the_width(text, width):
    lines = wrap_words(text, width)
    assert all(len(line) <= width for line in lines)
    assert [w for w in " ".join(lines).split() if w] == [w for w in text.split() if w] or \
        any(len(w) > width for w in text.split())


@given(st.text(st.sampled_from("abcdefgh "), min_size=1, max_size=400), st.sampled_from([60, 80, 120, 200]))
def test_the_time_never_stands_alone_and_indentation_is_kept(text, width):
    lines = [line.plain for line in message_lines(text, width, "red", " · 12.3s", most=100)]
    assert lines[0].startswith("  ⎿ ") and all(line.startswith("    ") for line in lines[1:])
    assert all(len(line) <= width for line in lines)
    assert lines[-1].endswith(" · 12.3s") and lines[-1].strip() != "· 12.3s"


def finished(content, name="bash", error=False, seconds=0.25, **meta):
    event = ToolFinished("t", name, content, error, seconds, meta)
    return [line.plain for line in finished_lines(event, 60)]


def test_tool_lines_exit_codes_timeouts_and_head_and_tail():
    assert finished("(no output)\n[exit code 1]", exit_code=1) == ["  ⎿ no output · exit 1 · 0.2s"]
    assert finished("ls: nope\n[exit code 2]", exit_code=2) == ["  ⎿ ls: nope", "    exit 2 · 0.2s"]
    lines = finished("\n".join(str(n) for n in range(1, 101)) + "\n[exit code 0]", exit_code=0)
    assert lines == ["  ⎿ 1", "    2", "    3", "    … 94 more lines (/last shows them all)", "    98", "    99",
                     "    100", "    exit 0 · 0.2s"]
    timed = finished("start\n[timed out after 2s; the command and its children were killed]", error=True,
                     exit_code=None, timed_out=True, timeout=2)
    assert timed[0] == "  ⎿ start" and "timed out after 2s (BASH_TIMEOUT)" in " ".join(timed)
    assert timed[-1].endswith("· 0.2s") and all(len(line) <= 60 for line in timed)
    assert finished("partial", error=True, interrupted=True)[-1] == "    interrupted by you · 0.2s"
    assert finished("Refused: a fork bomb.", error=True)[0].startswith("  ⎿ Refused: a fork bomb.")


def test_persisted_output_looks_like_any_other():
    block = ("<persisted-output>\nOutput too large for the context (14,888,896 chars, 2,000,000 lines). Full output "
             "saved to: .task_outputs/tool-results/bash-1.txt\nRead more with ...\n[exit code 0]\n\nPreview (first "
             "1,000 chars):\n1\n2\n3\n4\n... [14,887,896 chars omitted] ...\nPreview (last 1,000 chars):\n99998\n"
             "1999998\n1999999\n2000000\n</persisted-output>")
    assert finished(block, exit_code=0) == [
        "  ⎿ 1", "    2", "    3", "    … 1,999,994 more lines (/last shows them all)", "    1999998", "    1999999",
        "    2000000", "    exit 0 · 0.2s",
        "[bash] persisted 1 output (14,888,896 chars) →", ".task_outputs/tool-results/bash-1.txt"]


def test_file_changes_show_a_diff_or_the_first_lines():
    edit = finished("Edited a.py", "edit_file", change=FileChange("a.py", "a\nb\nc\n", "a\nB\nc\n"))
    assert edit == ["  ⎿ edited a.py (+1 -1) · 0.2s", "        1   a", "        2 - b", "        2 + B",
                    "        3   c"]
    new = finished("Created n.md", "write_file", change=FileChange("n.md", None, "".join(f"l{n}\n" for n in range(12))))
    assert new[0] == "  ⎿ created n.md (12 lines) · 0.2s" and new[1] == "        1 + l0"
    assert new[-1] == "          … 4 more lines (12 in all)" and len(new) == 10

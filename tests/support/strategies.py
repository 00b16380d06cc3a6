"""Hypothesis strategies for valid API histories: requests, answers and tool rounds (often parallel)
with outputs of every size, in English and Chinese. Each phrase and output is one draw from a fixed
table (support/helpers.phrases): hypothesis' time goes into draws, and what compaction cares about
(structure, sizes, scripts) stays drawn."""

from __future__ import annotations

from hypothesis import strategies as st

from support.helpers import ask, call, phrases, results, say, user

WORDS = ["build", "the", "parser", "测试", "上下文", "压缩", "fix", "bug", "函数", "error", "ok", "日志"]
SIZES = [5, 60, 180, 2_500, 12_000, 40_000]

PHRASES = phrases(WORDS, 12)
REQUESTS = [f"{lead} {phrase}" for lead in ("please", "请", "now", "then") for phrase in PHRASES[::4]]
# one draw each (hypothesis' time goes into draws): a phrase, a request, a tool output of every size
words = st.sampled_from(PHRASES)
requests = st.sampled_from(REQUESTS)
maybe_text = st.sampled_from([None] * len(PHRASES[::2]) + PHRASES[::2])          # as often none as some
maybe_request = st.sampled_from([None] * 2 * len(REQUESTS[::2]) + REQUESTS[::2])  # mostly none
OUTPUTS = [(unit * (size // len(unit) + 1))[:size] for size in SIZES for unit in (p + "\n" for p in PHRASES[::6])]
outputs = st.sampled_from(OUTPUTS)


@st.composite
def histories(draw):
    messages = [user(draw(requests))]
    for _ in range(draw(st.integers(0, 24))):
        if draw(st.integers(0, 3)):                       # a tool round (often parallel)
            calls = [call(draw(st.sampled_from(["bash", "read_file", "write_file", "edit_file"])),
                          arg=draw(words)) for _ in range(draw(st.integers(1, 3)))]
            messages.append(ask(*calls, text=draw(maybe_text)))
            messages.append(results(*[(c, draw(outputs)) for c in calls], text=draw(maybe_request)))
        else:                                             # an answer, then a new request
            messages.append(say(draw(words)))
            messages.append(user(draw(requests)))
    for _ in range(draw(st.integers(0, 12))):            # a long tool chain after the latest request
        c = call("bash", arg=draw(words))
        messages += [ask(c), results((c, draw(outputs)))]
    return messages

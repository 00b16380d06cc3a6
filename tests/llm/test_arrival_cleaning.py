"""What arrives from the endpoint is cleaned once, on arrival (llm/reply.py): non-finite numbers in a tool input
become null (json_text.py), and every credential in text and tool inputs is [redacted], however the stream cuts
it into pieces — what is shown is exactly what is kept."""

from __future__ import annotations

import json
import math

from hypothesis import given, strategies as st

import json_text
from events import TextDelta
from llm.reply import Accumulator

KEY = "sk-ant-api03-echoed-key-0123456789"


def answer(blocks, secrets=()):
    """blocks: ("text", [pieces]) or ("tool_use", [json pieces]); returns (reply, the text shown)."""
    shown: list[str] = []
    acc = Accumulator(lambda e: shown.append(e.text) if isinstance(e, TextDelta) else None, 1_000_000, None, secrets)
    acc.feed({"type": "message_start", "message": {"usage": {"input_tokens": 1, "output_tokens": 0}}})
    for index, (kind, pieces) in enumerate(blocks):
        start = {"type": "text", "text": ""} if kind == "text" else \
            {"type": "tool_use", "id": f"call_{index}", "name": "bash", "input": {}}
        acc.feed({"type": "content_block_start", "index": index, "content_block": start})
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece} if kind == "text" else \
                {"type": "input_json_delta", "partial_json": piece}
            acc.feed({"type": "content_block_delta", "index": index, "delta": delta})
        acc.feed({"type": "content_block_stop", "index": index})
    acc.feed({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}})
    acc.feed({"type": "message_stop"})
    return acc.reply(), "".join(shown)


def test_non_finite_numbers_in_a_tool_input_become_null():
    raw = '{"command": "ls", "a": NaN, "b": Infinity, "c": -Infinity, "d": 1e999, "e": -1e999, "f": 1.5, "g": 10}'
    reply, _ = answer([("tool_use", [raw[:20], raw[20:]])])
    [block] = reply.content
    assert block["input"] == {"command": "ls", "a": None, "b": None, "c": None, "d": None, "e": None, "f": 1.5, "g": 10}
    json.dumps(reply.content, allow_nan=False)


def test_json_text_reads_and_writes_only_finite_numbers():
    assert json_text.loads('[NaN, Infinity, -Infinity, 1e999, 2.5]') == [None, None, None, None, 2.5]
    value = {"x": [math.nan, {"y": math.inf}], "z": 1.0}
    assert json_text.dumps(value) == '{"x": [null, {"y": null}], "z": 1.0}'
    assert math.isnan(value["x"][0])                              # the caller's value is not changed


@given(st.lists(st.integers(min_value=0, max_value=60), max_size=8), st.text(max_size=30), st.text(max_size=30))
def test_a_key_cut_anywhere_is_redacted_and_what_is_shown_is_what_is_kept(cuts, before, after):
    text = f"{before}{KEY}{after}é{KEY[:10]}"
    points = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    reply, shown = answer([("text", pieces), ("tool_use", ['{"command": "curl -H \'x-api-key: ' + KEY + '\'"}'])],
                          (KEY,))
    kept = "".join(b["text"] for b in reply.content if b["type"] == "text")
    assert KEY not in shown and shown == kept and shown.endswith("é" + KEY[:10])
    assert reply.content[-1]["input"] == {"command": "curl -H 'x-api-key: [redacted]'"}


def test_a_number_too_long_to_read_makes_the_call_incomplete_not_a_crash():
    reply, _ = answer([("tool_use", ['{"command": "ls", "n": 1' + "0" * 5000 + "}"])])
    [block] = reply.content
    assert block["input"] == {} and block["id"] in reply.incomplete_tool_ids
    json.dumps(reply.content, allow_nan=False)


def test_a_key_echoed_outside_the_deltas_is_redacted_too():
    """Attack review: the endpoint puts the key where no delta carries it — a text block's start, a thinking
    block, a tool call's id or name. None of it is kept (or sent back, or shown) with the key."""
    acc = Accumulator(lambda e: None, 1_000_000, None, (KEY,))
    acc.feed({"type": "message_start", "message": {"usage": {"input_tokens": 1, "output_tokens": 0}}})
    starts = [{"type": "text", "text": f"key: {KEY}"},
              {"type": "thinking", "thinking": f"the key is {KEY}", "signature": "sig"},
              {"type": "tool_use", "id": KEY, "name": "bash", "input": {"command": "ls"}},
              {"type": "tool_use", "id": "call_2", "name": KEY, "input": {}}]
    for index, start in enumerate(starts):
        acc.feed({"type": "content_block_start", "index": index, "content_block": start})
        if start["type"] == "thinking":
            acc.feed({"type": "content_block_delta", "index": index,
                      "delta": {"type": "thinking_delta", "thinking": f" and again {KEY}"}})
        acc.feed({"type": "content_block_stop", "index": index})
    acc.feed({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}})
    acc.feed({"type": "message_stop"})
    kept = json.dumps(acc.reply().content)
    assert KEY not in kept and "[redacted]" in kept


def test_a_key_split_across_a_tool_inputs_deltas_or_written_with_json_escapes_is_redacted():
    """Attack review (held): the input is redacted after its pieces are joined and parsed."""
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY[:12]) + KEY[12:]
    raw = '{"command": "echo ' + KEY + ' ' + escaped + '"}'
    reply, _ = answer([("tool_use", [raw[:25], raw[25:31], raw[31:70], raw[70:]])], (KEY,))
    assert reply.content[0]["input"] == {"command": "echo [redacted] [redacted]"}

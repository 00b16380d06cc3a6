"""One tool call sent as several tool_use blocks with one id (LiteLLM's stream when the backend repeats the
id in every chunk) is one call: the fragments are joined in order, the history holds one block. Two whole
calls that share an id are still two calls with ids made unique (llm/reply.py)."""

from __future__ import annotations

import json

from hypothesis import given, strategies as st

from llm.reply import Accumulator


def feed_blocks(blocks):
    """blocks: (type, id, name, [json pieces] or text) in order, as content_block events."""
    acc = Accumulator(lambda e: None, 1_000_000)
    acc.feed({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 0}}})
    for index, (kind, ident, name, pieces) in enumerate(blocks):
        start = {"type": "text", "text": ""} if kind == "text" else {"type": "tool_use", "id": ident, "name": name,
                                                                    "input": {}}
        acc.feed({"type": "content_block_start", "index": index, "content_block": start})
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece} if kind == "text" else \
                {"type": "input_json_delta", "partial_json": piece}
            acc.feed({"type": "content_block_delta", "index": index, "delta": delta})
        acc.feed({"type": "content_block_stop", "index": index})
    acc.feed({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}})
    acc.feed({"type": "message_stop"})
    return acc.reply()


def test_pieces_with_one_id_are_one_call():
    reply = feed_blocks([("text", None, None, []), ("tool_use", "call_1", "read_file", ['{"path":']),
                         ("tool_use", "call_1", "read_file", [' "READ']), ("tool_use", "call_1", "read_file", ['ME.md"}'])])
    assert reply.content == [{"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "README.md"}}]
    assert not reply.incomplete_tool_ids and not reply.notes


def test_two_whole_calls_with_one_id_stay_two_and_get_unique_ids():
    reply = feed_blocks([("tool_use", "call_1", "read_file", ['{"path": "a"}']),
                         ("tool_use", "call_1", "read_file", ['{"path": "b"}'])])
    assert [b["input"] for b in reply.content] == [{"path": "a"}, {"path": "b"}]
    assert len({b["id"] for b in reply.content}) == 2 and any("renamed" in n for n in reply.notes)


def test_text_between_pieces_separates_calls():
    reply = feed_blocks([("tool_use", "call_1", "bash", ['{"command":']), ("text", None, None, ["thinking aloud"]),
                         ("tool_use", "call_1", "bash", ['"ls"}'])])
    kinds = [b["type"] for b in reply.content]
    assert kinds == ["tool_use", "text", "tool_use"] and len(reply.incomplete_tool_ids) == 2


@given(st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=30), st.integers()), max_size=5),
       st.integers(min_value=1, max_value=12))
def test_any_input_cut_anywhere_comes_back_whole(value, size):
    text = json.dumps(value)
    pieces = [text[at:at + size] for at in range(0, len(text), size)]
    reply = feed_blocks([("tool_use", "call_x", "write_file", [p]) for p in pieces])
    assert len(reply.content) == 1 and reply.content[0]["input"] == value

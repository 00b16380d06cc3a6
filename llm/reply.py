"""A streamed answer, built from raw events and cleaned on arrival: what enters the history is always
something the API will accept back.

    Accumulator.feed(event)  one SSE event's data (a dict from the endpoint: untrusted)
    Accumulator.reply(ids)   the answer as plain, API-shaped dicts (a ModelReply)

Cleaning, because a prompt injection or a broken endpoint can send anything:
- text and tool inputs are valid UTF-8: lone surrogates become U+FFFD;
- a tool input's NaN, Infinity and -Infinity (and numbers past a float's range) become null: they are
  not JSON, and the next request would carry them (json_text.py);
- every credential value (`secrets`) in text, thinking, tool inputs, ids and names is [redacted] (a tool call
  id that held one is renamed), here and only here: an endpoint that echoes the key has it neither shown,
  nor kept in .sessions/, nor sent back;
- only text, tool_use, thinking and redacted_thinking blocks are kept, each with only its own
  fields (a planted `cache_control` or unknown field never reaches the next request);
- consecutive tool_use blocks with the same id whose input is not complete on its own are one call sent
  in pieces (LiteLLM turns each streamed fragment of an OpenAI tool call into a block of its own when the
  backend repeats the id in every chunk): their JSON fragments are joined in order, one block is kept;
- tool_use ids must match ^[a-zA-Z0-9_-]+$ and be unique in the history; any other id (a true
  duplicate: two complete calls with one id) is rewritten (the reply is the only place that id exists
  yet, so the rewrite is consistent);
- tool names that are not ^[a-zA-Z0-9_-]{1,128}$ are made so (the call then fails as unknown);
- usage keeps the token counts as integers in [0, MAX_USAGE] (llm/usage.py);
- the answer may hold at most `max_chars` characters: a server that streams without end is cut off;
- an answer whose text loops on one piece (llm/repetition.py) keeps one copy of it: one the output limit
  cut (stop_reason max_tokens) is cut back when it ends in enough copies; one still streaming is
  abandoned (`done`, no stop reason) once its tail is surely a loop, which saves the rest of the
  output limit's time and tokens. Either way `repeated` is set and a note says so.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import secrets

import json_text
from events import Emit, TextDelta
from llm.contract import ErrorKind, LLMError, ModelReply
from llm.repetition import (AT_LIMIT, CHARS_PER_OUTPUT_TOKEN, STREAMING_PIECE, WHILE_STREAMING, Repeat,
                            repeating_tail)
from llm.usage import OUTPUT, Usage, clean_usage
from redact import StreamRedactor, redact, redact_data

TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,200}$")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
MAX_INPUT_DEPTH = 100   # nesting of a tool call's input
EVENT_COST = 16          # characters each event counts against the answer's size, so empty ones add up too
LOOP_CHECK = 1_024       # characters of a text block between two looks for a loop while it streams
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text) -> str:
    """A str with every lone surrogate replaced, so it encodes as UTF-8."""
    text = text if isinstance(text, str) else ""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _valid_json(value):
    """A parsed tool input with every string (keys too) made valid and every non-finite number null;
    iterative, so depth costs no stack.
    Nesting deeper than MAX_INPUT_DEPTH is refused (later json.dumps calls would hit the recursion limit)."""
    root = [value]
    stack = [(root, 0, 0)]
    while stack:
        container, key, depth = stack.pop()
        item = container[key]
        if depth > MAX_INPUT_DEPTH:
            raise ValueError("nested too deeply")
        if isinstance(item, str):
            container[key] = valid_text(item)
        elif isinstance(item, float) and not math.isfinite(item):
            container[key] = None                # NaN, Infinity: not JSON (json_text.py)
        elif isinstance(item, list):
            stack.extend((item, i, depth + 1) for i in range(len(item)))
        elif isinstance(item, dict):
            fixed = {valid_text(k): v for k, v in item.items()}
            item.clear()
            item.update(fixed)
            stack.extend((item, k, depth + 1) for k in item)
    return root[0]


def clean_stop_reason(reason) -> str | None:
    if not isinstance(reason, str) or not reason:
        return None
    return re.sub(r"[^A-Za-z0-9_.-]", "?", reason[:64])


def clean_tool_name(name) -> str:
    if isinstance(name, str) and TOOL_NAME.match(name):
        return name
    text = re.sub(r"[^a-zA-Z0-9_-]", "_", valid_text(name) if isinstance(name, str) else "")[:128]
    return text or "unnamed_tool"


def _complete(text: str) -> bool:
    """Whether a tool call's input text is a whole JSON value already (not a piece of one)."""
    if not text.strip():
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


class Accumulator:
    """Builds the answer from raw event dicts; emits TextDelta as text arrives."""

    def __init__(self, emit: Emit, max_chars: int, on_error=None, secrets: tuple = (),
                 loop_span: int = WHILE_STREAMING[1]):
        self.emit, self.max_chars, self.on_error = emit, max_chars, on_error
        self.loop_span = loop_span          # characters a loop covers before the stream is abandoned on it
        self.secrets = tuple(s for s in secrets or () if s)
        self.redactors: dict[int, tuple[StreamRedactor, codecs.IncrementalDecoder]] = {}   # per text block
        self.blocks: dict[int, dict] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.stop_reason: str | None = None
        self.usage: dict = {}
        self.done, self.shown, self.size = False, False, 0
        self.looped: tuple[int, Repeat] | None = None       # (text block, its loop) that ended the stream early
        self.looked: dict[int, int] = {}                     # a text block's length at its last look for a loop

    def _grow(self, chars: int) -> None:
        self.size += chars + EVENT_COST
        if self.size > self.max_chars:
            raise LLMError(f"The answer grew past {self.max_chars:,} characters, far more than MAX_TOKENS "
                           "allows; it was abandoned.", ErrorKind.OVERSIZED)

    def feed(self, data) -> None:
        if not isinstance(data, dict):
            raise LLMError("The endpoint sent an event that is not a JSON object.", ErrorKind.MALFORMED)
        kind = data.get("type")
        self._grow(0)
        if kind == "message_start":
            message = data.get("message")
            self.usage = clean_usage(message.get("usage") if isinstance(message, dict) else None)
        elif kind == "content_block_start":
            index, block = data.get("index"), data.get("content_block")
            if isinstance(index, int) and isinstance(block, dict) and index not in self.blocks:
                self.blocks[index] = dict(block)
                if block.get("type") == "tool_use":
                    self.json_parts[index] = []
                elif block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
                    self.blocks[index]["text"] = ""      # text in the start: shown and redacted as a delta is
                    self._delta(index, {"type": "text_delta", "text": block["text"]})
        elif kind == "content_block_delta":
            self._delta(data.get("index"), data.get("delta"))
        elif kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and "stop_reason" in delta:
                self.stop_reason = clean_stop_reason(delta.get("stop_reason"))
            self.usage.update(clean_usage(data.get("usage")))
        elif kind == "content_block_stop" and data.get("index") in self.redactors:
            self._show(data["index"], self._redacted(data["index"], "", final=True))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error" and self.on_error is not None:
            raise self.on_error(data)
        # other event types (ping, content_block_stop, ones added to the API later) carry nothing to keep

    def _delta(self, index, delta) -> None:
        block = self.blocks.get(index) if isinstance(index, int) else None
        if block is None or not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            text = valid_text(delta["text"])
            self._grow(len(text))
            self._show(index, self._redacted(index, text))
        elif kind == "input_json_delta" and index in self.json_parts and isinstance(delta.get("partial_json"), str):
            self._grow(len(delta["partial_json"]))
            self.json_parts[index].append(delta["partial_json"])
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            self._grow(len(delta["thinking"]))
            block["thinking"] = (block["thinking"] if isinstance(block.get("thinking"), str) else "") + delta["thinking"]
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            self._grow(len(delta["signature"]))
            block["signature"] = delta["signature"]

    def _redacted(self, index: int, text: str, final: bool = False) -> str:
        """A text block's next piece with every secret replaced; a piece's ending that could begin one
        waits for the next piece (or the block's end: `final`)."""
        if not self.secrets:
            return text
        if index not in self.redactors:
            self.redactors[index] = (StreamRedactor(self.secrets), codecs.getincrementaldecoder("utf-8")())
        redactor, decoder = self.redactors[index]
        out = redactor.feed(text.encode("utf-8"))
        if final:
            out += redactor.flush()
            del self.redactors[index]
        return decoder.decode(out, final)

    def _show(self, index: int, text: str) -> None:
        block = self.blocks[index]
        block["text"] = (block["text"] if isinstance(block.get("text"), str) else "") + text
        if text:
            self.shown = True
            self.emit(TextDelta(text))
            self._look_for_loop(index, block["text"])

    def _look_for_loop(self, index: int, text: str) -> None:
        """End the stream here when the text block surely loops (see the module docstring)."""
        if self.done or len(text) - self.looked.get(index, 0) < LOOP_CHECK:
            return
        self.looked[index] = len(text)
        found = repeating_tail(text, WHILE_STREAMING[0], self.loop_span, STREAMING_PIECE)
        if found is not None:
            self.looped, self.done = (index, found), True
            if self.usage:             # the final usage never comes: what was generated, roughly, for the cost
                self.usage[OUTPUT] = max(self.usage.get(OUTPUT) or 0, len(text) // CHARS_PER_OUTPUT_TOKEN)

    def _join_pieces(self) -> list[int]:
        """The block indexes in order, with a tool call sent in pieces folded into its first block."""
        order: list[int] = []
        last = None                      # the index of the latest tool_use block still open to pieces
        for index in sorted(self.blocks):
            raw = self.blocks[index]
            kind = raw.get("type")
            if kind == "text" and not valid_text(raw.get("text")).strip():
                order.append(index)      # an empty text block between pieces does not separate them
                continue
            if kind == "tool_use" and last is not None and isinstance(raw.get("id"), str) \
                    and raw["id"] == self.blocks[last].get("id") and self._open(last):
                self.json_parts[last].extend(self.json_parts.get(index, []))
                continue
            last = index if kind == "tool_use" else None
            order.append(index)
        return order

    def _open(self, index: int) -> bool:
        """A tool call whose input is not whole yet (its pieces so far are not a JSON value, and its
        start block held no input)."""
        parts, start = self.json_parts.get(index, []), self.blocks[index].get("input")
        return not _complete("".join(parts)) and not (not parts and isinstance(start, dict) and start)

    def reply(self, taken_ids=frozenset()) -> ModelReply:
        """The answer as API-shaped dicts; `taken_ids` are the tool_use ids already in the history."""
        content: list[dict] = []
        notes: list[str] = []
        incomplete, dropped = set(), set()
        seen, renamed = set(taken_ids), 0
        for index in list(self.redactors):            # a text block the endpoint never closed
            self._show(index, self._redacted(index, "", final=True))
        for index in self._join_pieces():
            raw = self.blocks[index]
            kind = raw.get("type")
            if kind == "text":
                text = valid_text(raw.get("text"))
                if text.strip():          # the API refuses empty text blocks when they are sent back
                    content.append({"type": "text", "text": text})
            elif kind == "tool_use":
                block, ok = self._tool_use(index, raw)
                if not isinstance(raw.get("id"), str) or not TOOL_ID.match(raw["id"]) or raw["id"] in seen \
                        or redact(raw["id"], self.secrets) != raw["id"]:
                    block["id"] = f"toolu_s08_{secrets.token_hex(12)}"
                    renamed += 1
                seen.add(block["id"])
                if not ok:
                    incomplete.add(block["id"])
                content.append(block)
            elif kind == "thinking" and isinstance(raw.get("thinking"), str) and isinstance(raw.get("signature"), str):
                content.append({"type": "thinking", "thinking": redact(valid_text(raw["thinking"]), self.secrets),
                                "signature": valid_text(raw["signature"])})
            elif kind == "redacted_thinking" and isinstance(raw.get("data"), str):
                content.append({"type": "redacted_thinking", "data": valid_text(raw["data"])})
            else:
                dropped.add(clean_stop_reason(kind) or "untyped")
        repeated = self._cut_loop(content, notes)
        if renamed:
            notes.append(f"[the endpoint sent {renamed} tool call id{'s' * (renamed > 1)} the API would refuse "
                         "(malformed or repeated); s08 renamed them]")
        if dropped:
            notes.append(f"[dropped {', '.join(sorted(dropped))} block(s) from the answer: s08 cannot send "
                         "them back]")
        return ModelReply(content, self.stop_reason, Usage.of(self.usage) if self.usage else None, incomplete, notes,
                          repeated)

    def _cut_loop(self, content: list[dict], notes: list[str]) -> bool:
        """Keep one copy of a loop the answer's last text block ends in (the stream stopped on it, or the
        output limit cut it); True when there was one."""
        if not content or content[-1]["type"] != "text":
            return False
        text = content[-1]["text"]
        found: Repeat | None
        if self.looped is not None:
            found = repeating_tail(text, WHILE_STREAMING[0], self.loop_span, STREAMING_PIECE) or self.looped[1]
        else:
            found = repeating_tail(text, *AT_LIMIT) if self.stop_reason == "max_tokens" else None
        if found is None:
            return False
        content[-1] = {"type": "text", "text": text[:found.keep]}
        why = "s08 stopped it early" if self.looped is not None else "until the output limit"
        notes.append(f"[the answer repeated the same {found.piece:,} characters over and over ({found.copies} times, "
                     f"{why}); one copy was kept]")
        return True

    def _tool_use(self, index: int, raw: dict) -> tuple[dict, bool]:
        text = "".join(self.json_parts.get(index, []))
        ok = True
        try:
            value = json_text.loads(text) if text.strip() else raw.get("input", {})
            value = redact_data(_valid_json(value), self.secrets)
        except (ValueError, RecursionError):
            value, ok = {}, False
        if not isinstance(value, dict):
            value, ok = {}, False
        name = raw.get("name")
        name = redact(name, self.secrets) if isinstance(name, str) else name
        return {"type": "tool_use", "id": raw.get("id"), "name": clean_tool_name(name),
                "input": value}, ok

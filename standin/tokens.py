"""The stand-in's token counter: deterministic, roughly like Claude's, and CJK-aware.

English prose comes out near 4-5 characters per token, code near 3, and each
CJK character is one token (the real tokenizer is close to that; chars/4
would undercount Chinese about four times). The agent's own estimator is a
separate, cheaper heuristic — tests compare the two, so they must not share
code.
"""

from __future__ import annotations

import json
import re

_PIECE = re.compile(
    r" ?[A-Za-z]{1,10}"                                     # a word (or part of a long one), with its space
    r"| ?\d{1,3}"                                           # numbers in groups of three
    r"|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"  # CJK: one each
    r"|[^\x00-\x7f]"                                        # other non-ASCII: one each
    r"|\n+|[ \t]+"                                          # runs of whitespace
    r"|[^\sA-Za-z\d]{1,2}"                                  # punctuation, in pairs
)
MESSAGE_OVERHEAD = 3
BLOCK_OVERHEAD = 2
TOOL_OVERHEAD = 12
REQUEST_OVERHEAD = 3


def text_tokens(text: str) -> int:
    return len(_PIECE.findall(text)) if text else 0


def _content_tokens(content) -> int:
    if isinstance(content, str):
        return text_tokens(content)
    total = 0
    for block in content or []:
        if not isinstance(block, dict):
            continue
        total += BLOCK_OVERHEAD
        kind = block.get("type")
        if kind == "text":
            total += text_tokens(block.get("text", ""))
        elif kind == "tool_use":
            total += text_tokens(block.get("name", "")) + text_tokens(json.dumps(block.get("input", {})))
        elif kind == "tool_result":
            total += _content_tokens(block.get("content", ""))
        elif kind in ("thinking", "redacted_thinking"):
            total += text_tokens(block.get("thinking", "") or block.get("data", ""))
        elif kind in ("image", "document"):
            total += 1500
        else:
            total += text_tokens(json.dumps(block))
    return total


def system_tokens(system) -> int:
    return _content_tokens(system) if system else 0


def tools_tokens(tools) -> int:
    return sum(TOOL_OVERHEAD + text_tokens(json.dumps(t, sort_keys=True)) for t in tools or [])


def message_tokens(message: dict) -> int:
    return MESSAGE_OVERHEAD + _content_tokens(message.get("content"))


def count_request_tokens(body: dict) -> int:
    """Input tokens of a Messages API request: system + tools + messages."""
    return (REQUEST_OVERHEAD + system_tokens(body.get("system")) + tools_tokens(body.get("tools"))
            + sum(message_tokens(m) for m in body.get("messages") or [] if isinstance(m, dict)))

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


def _strip(block: dict) -> dict:
    return {k: v for k, v in block.items() if k != "cache_control"}


def block_tokens(block) -> int:
    """Tokens of one content block (cache_control is metadata: it costs nothing)."""
    if not isinstance(block, dict):
        return 0
    kind = block.get("type")
    if kind == "text":
        inner = text_tokens(block.get("text", ""))
    elif kind == "tool_use":
        inner = text_tokens(block.get("name", "")) + text_tokens(json.dumps(block.get("input", {})))
    elif kind == "tool_result":
        content = block.get("content", "")
        inner = text_tokens(content) if isinstance(content, str) else sum(block_tokens(b) for b in content)
    elif kind in ("thinking", "redacted_thinking"):
        inner = text_tokens(block.get("thinking", "") or block.get("data", ""))
    elif kind in ("image", "document"):
        inner = 1500
    else:
        inner = text_tokens(json.dumps(_strip(block)))
    return BLOCK_OVERHEAD + inner


def request_blocks(body: dict):
    """The request as the cache sees it, in order (tools, system, messages): one
    (material, tokens, its cache_control or None) per block. Changing tool_choice changes every message
    block's material, as it invalidates the messages' cache at the API."""
    for tool in body.get("tools") or []:
        yield "tool:" + json.dumps(_strip(tool), sort_keys=True), TOOL_OVERHEAD + text_tokens(
            json.dumps(_strip(tool), sort_keys=True)), tool.get("cache_control") or None
    system = body.get("system")
    if isinstance(system, str) and system:
        yield "system:" + system, text_tokens(system), None
    elif isinstance(system, list):
        for b in system:
            yield "system:" + json.dumps(_strip(b), sort_keys=True), block_tokens(b), b.get("cache_control") or None
    choice = json.dumps(body.get("tool_choice"), sort_keys=True)
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        for i, b in enumerate(parts):
            overhead = MESSAGE_OVERHEAD if i == 0 else 0
            tokens = (text_tokens(b["text"]) if isinstance(content, str) else block_tokens(b)) + overhead
            material = f"{choice}|{m.get('role')}|{i}|" + json.dumps(_strip(b) if isinstance(b, dict) else b,
                                                                   sort_keys=True)
            yield material, tokens, (b.get("cache_control") or None) if isinstance(b, dict) else None
        if not parts:
            yield f"{choice}|{m.get('role')}|empty", MESSAGE_OVERHEAD, None


def count_request_tokens(body: dict) -> int:
    """Input tokens of a Messages API request: system + tools + messages."""
    return REQUEST_OVERHEAD + sum(tokens for _material, tokens, _marked in request_blocks(body))

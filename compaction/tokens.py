"""How big is the prompt, in tokens, as the API will count it: system + tools + messages.

Two parts:
- `estimate_tokens` — a cheap heuristic that treats text by script: ASCII at
  ~3.5 characters per token (code is denser than prose) plus half a token per
  line break (line-by-line output such as numbers or logs is denser still),
  each CJK character about one token (chars/4 would undercount Chinese four
  times over), other non-ASCII at ~0.75, plus a few tokens of framing per
  message and block.
- `ContextMeter` (index.py) — anchors on the last response's `usage` (input +
  cache read + cache creation + output), which is exact for everything already
  sent, and estimates only what was appended since. When compaction rewrote the
  history, the anchor no longer applies and the estimate covers everything.
"""

from __future__ import annotations

import json
import math
import re

from messages import blocks
from llm.usage import Usage

ASCII_CHARS_PER_TOKEN = 3.5
TOKENS_PER_NEWLINE = 0.5
CJK_TOKENS_PER_CHAR = 1.05
OTHER_TOKENS_PER_CHAR = 0.75
MESSAGE_OVERHEAD = 4
BLOCK_OVERHEAD = 3
TOOL_OVERHEAD = 12
IMAGE_TOKENS = 1600
CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"  # kana, hanzi, hangul
# CJK is counted by the high byte of each UTF-16 unit, with bytes.translate (memory speed; a regex over
# every character was most of the estimate's time): the 256-character pages that are CJK throughout at
# once, and the four pages that are CJK only in part by a regex, when the text has a character in them.
_WHOLE_PAGES = bytes([*range(0x34, 0x4d), *range(0x4e, 0xa0), *range(0xac, 0xd7), 0xf9, 0xfa])
_PART_PAGES = bytes([0x30, 0x4d, 0xd7, 0xff])
_CJK_IN_PART_PAGES = re.compile("[\u3040-\u30ff\u4d00-\u4dbf\ud700-\ud7af\uff00-\uffef]+")


def estimate_text(text: str) -> int:
    if not text:
        return 0
    lines = text.count("\n") * TOKENS_PER_NEWLINE
    if text.isascii():
        return math.ceil(len(text) / ASCII_CHARS_PER_TOKEN + lines)
    ascii_count = len(text.encode("ascii", "ignore"))       # in C: the estimate runs on every message
    cjk = count_cjk(text)
    other = len(text) - ascii_count - cjk
    return math.ceil(ascii_count / ASCII_CHARS_PER_TOKEN + cjk * CJK_TOKENS_PER_CHAR + other * OTHER_TOKENS_PER_CHAR
                     + lines)


def count_cjk(text: str) -> int:
    """How many characters of `text` are in CJK_RANGES."""
    pages = text.encode("utf-16-le", "surrogatepass")[1::2]       # a character beyond U+FFFF: two surrogates
    count = len(pages) - len(pages.translate(None, _WHOLE_PAGES))
    if len(pages.translate(None, _PART_PAGES)) < len(pages):
        count += len(text) - len(_CJK_IN_PART_PAGES.sub("", text))
    return count


def _block_tokens(block: dict) -> int:
    kind = block.get("type")
    if kind == "text":
        return BLOCK_OVERHEAD + estimate_text(block.get("text", ""))
    if kind == "tool_use":
        return BLOCK_OVERHEAD + estimate_text(block.get("name", "")) + \
            estimate_text(json.dumps(block.get("input", {}), ensure_ascii=False))
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return BLOCK_OVERHEAD + estimate_text(content)
        return BLOCK_OVERHEAD + sum(_block_tokens(b) for b in content if isinstance(b, dict))
    if kind in ("image", "document"):
        return IMAGE_TOKENS
    if kind == "thinking":
        return BLOCK_OVERHEAD + estimate_text(block.get("thinking", ""))
    return BLOCK_OVERHEAD + estimate_text(json.dumps(block, ensure_ascii=False))


def estimate_message(message: dict) -> int:
    return MESSAGE_OVERHEAD + sum(_block_tokens(b) for b in blocks(message))


def estimate_system(system) -> int:
    if not system:
        return 0
    if isinstance(system, str):
        return estimate_text(system)
    return sum(_block_tokens(b) for b in system)


def estimate_tools(tools) -> int:
    return sum(TOOL_OVERHEAD + estimate_text(json.dumps(t, ensure_ascii=False)) for t in tools or [])


def estimate_tokens(messages: list[dict], system=None, tools=None) -> int:
    """Estimated input tokens of a request with these messages, system prompt and tools."""
    return estimate_system(system) + estimate_tools(tools) + sum(estimate_message(m) for m in messages)


def breakdown(messages: list[dict], system=None, tools=None, instructions: str = "", skills: str = "") -> dict[str, int]:
    """Estimated tokens of the prompt by part: system, project instructions (the part of the system
    prompt that comes from AGENTS.md), the skills' list (prompts/skills.py), tools, messages, tool results."""
    results = sum(_block_tokens(b) for m in messages if m.get("role") == "user"
                  for b in blocks(m) if b.get("type") == "tool_result")
    everything = sum(estimate_message(m) for m in messages)
    return {"system": estimate_system(system), "instructions": estimate_text(instructions),
            "skills": estimate_text(skills), "tools": estimate_tools(tools), "messages": everything - results, "tool results": results}


def usage_tokens(usage) -> int:
    """Everything a response's usage covers (a Usage, an API usage dict, or None): the prompt (uncached +
    cache read + cache write) and output."""
    return Usage.of(usage).total

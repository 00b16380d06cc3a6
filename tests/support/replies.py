"""What the tests of small models' broken replies share (tests/loop/test_broken_replies.py and the same
through LiteLLM, tests/e2e/test_gateway_broken.py): a paragraph a model might loop on, and readers of
what a turn left behind."""

from __future__ import annotations

from events import Notice
from messages import blocks

PARAGRAPH = ("Let me check the configuration file again, because the error says the key is missing even "
             "though the file seems to have it; maybe the loader reads another path, or the environment "
             "overrides it, so I will read the loader and the settings module and compare both of them "
             "with what the error message says about the key and where it looked for it first. ")


def warnings(events) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and e.kind == "warning"]


def results_of(app) -> list[dict]:
    return [b for m in app.messages if m["role"] == "user" for b in blocks(m) if b.get("type") == "tool_result"]


def text(block) -> str:
    return block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]

"""The texts that start what compaction writes into a history, defined once.

    [compacted] The conversation so far was summarized …      COMPACTED_PREFIX  (summary.py)
    Summary of the conversation so far:\n<the summary>         SUMMARY_PREFIX    (summary.py)
    [snipped 12 messages → .transcripts/snipped_….jsonl]       SNIP_PREFIX       (snip.py)
    [Previous: used bash]                                      PLACEHOLDER_PREFIX (micro.py)

s08 never decides by these texts what the person typed (continuity.py records that); they are
used to recognise compaction's own output (an already cleared result, a log written by an older
s08 — session/log.py) and by tests. The `<persisted-output>` frame of an output moved to disk is
storage's (PERSISTED_OPEN, SAVED_TO), since the bash tool writes it too.
"""

from __future__ import annotations

import re

from storage import SAVED_TO

COMPACTED_PREFIX = "[compacted]"
SUMMARY_PREFIX = "Summary of the conversation so far:\n"
SNIP_PREFIX = "[snipped "
PLACEHOLDER_PREFIX = "[Previous: used "
ATTACHED_OPEN = "<attached-file "        # a file the person attached with @path (loop/mentions.py): not compaction's,
                                         # but a summary must not take it before the model has read it

MIN_CHARS = 100                   # a tool result shorter than this is never replaced by a placeholder
_SAVED_PATH = re.compile(re.escape(SAVED_TO) + r"(\S+)")


def placeholder(tool_name: str, old_text: str) -> str:
    saved = _SAVED_PATH.search(old_text[:2000])
    suffix = f" — full output saved at {saved.group(1)}" if saved else ""
    return f"{PLACEHOLDER_PREFIX}{tool_name}]{suffix}"

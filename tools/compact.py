"""The compact tool: the model asks for its own history to be summarized.

The handler only records the request; the loop compacts once every tool call
of the reply has its result in the history (so side effects are recorded
first), at most once per user turn, and then the turn continues from the
summary.
"""

from __future__ import annotations

from .registry import tool


@tool("compact",
      "Compress the conversation history into a summary to free context space, e.g. when a phase of "
      "the work is done. The user's requests and the important details are kept and the full transcript "
      "is saved to disk; you continue from the summary.",
      {"focus": {"type": "string", "description": "what the summary should preserve in detail"}})
def compact(ctx, focus: str = "") -> str:
    if ctx.compact_done:
        return "The conversation was already compacted during this turn; carry on with the task."
    ctx.compact_request = focus.strip()
    return "Compaction requested: it runs once every tool call of this reply has finished; " \
           "then you continue from the summary."

"""The task tool: hand a piece of work to a sub-agent with a context of its own (delegation/).

The handler only passes the call on: the Delegator the App attached to the session's tool context
runs the child and returns its bounded report. Without one (a tool context made on its own, or a
sub-agent's, which never gets one: no nesting) the call is an error the model can read.
"""

from __future__ import annotations

from .registry import ToolResult, tool

DESCRIPTION = ("Hand a self-contained piece of work to a sub-agent with a fresh context of its own; it returns "
               "only its report. Several task calls in one reply run at the same time.")


@tool("task", DESCRIPTION,
      {"description": {"type": "string", "description": "a few words, shown to the person"},
       "prompt": {"type": "string", "description": "the whole task"},
       "agent": {"type": "string", "description": "an agent's name (default: general)"}},
      required=["description", "prompt"])
def task(ctx, description: str, prompt: str, agent: str = "") -> ToolResult:
    delegator = ctx.extra.get("delegator")
    if delegator is None:
        return ToolResult("Error: task: sub-agents are not available here (a sub-agent cannot start another)", True)
    args = {"description": description, "prompt": prompt, **({"agent": agent} if agent else {})}
    return delegator.run(args)

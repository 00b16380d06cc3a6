"""Sub-agents: work done in a context of its own, so the main one stays small.

    definitions.py   the agents people define (.s08/agents/, ~/.config/s08/agents/, .claude/agents/), explore
    child.py         one sub-agent: a child agent loop in a thread, with its own history and compaction
    tasks.py         the parent's side: starting children (in parallel), their questions, their reports
    report.py        the bounded report and its trailer

`attach(agent, note, environ, price)` gives a session's agent the `task` tool's Delegator.
"""

from __future__ import annotations

from .tasks import TASK, Delegator


def attach(agent, note=lambda record: None, environ=None, price=None) -> Delegator:
    """A Delegator for `agent`, in its tool context, and the task tool's description naming its agents."""
    delegator = Delegator(agent, note, environ, price)
    agent.tool_ctx.extra["delegator"] = delegator
    agent.tools[:] = [({**t, "description": delegator.description()} if t.get("name") == TASK else t)
                      for t in agent.tools]
    return delegator


__all__ = ["Delegator", "attach", "TASK"]

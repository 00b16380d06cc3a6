"""How sub-agents look (delegation/): one live line per running child, one line when it ends, /tasks.

    ↳ task 2 explore · find callers · bash grep -rn parse_name . · 12s       (live, while it runs)
    ✓ task 2 explore · find callers — done · 14 calls · 23,410 tokens · $0.0311 · 31.2s
    /tasks: every sub-agent of the session, its status and its steps (the last STEPS_SHOWN of each)

Every string here came from the model or a definition file: the renderer made the event safe first,
and /tasks passes each through `safe_line`.
"""

from __future__ import annotations

import time

from rich.text import Text

from .sanitize import safe_line

MARKS = {"done": ("✓", "green"), "failed": ("✗", "red"), "interrupted": ("■", "yellow"), "stopped": ("■", "yellow"),
         "running": ("↳", "cyan")}
STEPS_SHOWN = 12


def _calls(n: int) -> str:
    return f"{n} call{'s' if n != 1 else ''}"


def _money(cost) -> str:
    return f"${cost:.4f}" if cost is not None else "cost unknown"


def live_lines(running: list, width: int) -> list[Text]:
    """The live area's lines: (number, agent, description, step, since) of each running child."""
    now, lines = time.monotonic(), []
    for number, agent, description, step, since in running:
        text = f"  ↳ task {number} {agent} · {description} · {step} · {int(now - since)}s"
        lines.append(Text(safe_line(text, max(20, width - 1)), style="cyan"))
    return lines


def finished_line(event) -> Text:
    mark, style = MARKS.get(event.status, ("■", "yellow"))
    return Text(f"  {mark} task {event.number} {event.agent} · {event.description} — {event.status} · "
                f"{_calls(event.calls)} · {event.tokens:,} tokens · {_money(event.cost)} · {event.seconds:.1f}s",
                style=style)


def task_list(children: list, width: int) -> list[Text]:
    if not children:
        return [Text("no sub-agents in this session yet (the model starts them with the task tool)", style="dim")]
    lines = []
    for child in children:
        mark, style = MARKS.get(child.status, ("■", "yellow"))
        tally = child.tally
        head = (f"{mark} task {child.number} {child.definition.name} · {child.description} — {child.status} · "
                f"{_calls(child.calls)} · {tally.prompt_tokens + tally.output:,} tokens · {_money(tally.cost)} · "
                f"{child.seconds:.1f}s · {child.shown_transcript}")
        lines.append(Text(safe_line(head, max(20, width - 1)), style=style))
        steps = list(child.steps)
        if len(steps) > STEPS_SHOWN:
            lines.append(Text(f"    … {len(steps) - STEPS_SHOWN} earlier steps", style="dim"))
        for at, step in steps[-STEPS_SHOWN:]:
            lines.append(Text(safe_line(f"    {at:6.1f}s  {step}", max(20, width - 1)), style="dim"))
    return lines

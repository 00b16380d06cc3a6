"""Plan mode as the model sees it: a note before each message the person sends while plan mode is on,
and one when it has been switched off. What may run in plan mode is approvals.py's policy (only
reading); this module only words what the model is told.

    note_for(planning, told)   (the note to put before the person's message, or ""; whether the model
                               will then believe it is planning)
    told_planning(messages)    whether the latest note in a history says plan mode is on (a resumed
                               session: its first message after a switch-off must say so)

The notes are text blocks of the person's message but not the person's words: compaction keeps what
the person typed (recorded as typed), not these, and the note is repeated with every message sent in
plan mode, so a compaction or a resume never leaves the model without it.
"""

from __future__ import annotations

from messages import blocks

PLAN_ON = ("[Plan mode is on: the person wants a plan, not changes yet. Do not edit or write files and do not "
           "run commands that change anything — s08 refuses them in this mode. Read and search what you need "
           "(read_file; commands that only read, such as ls, cat, grep, git status/diff/log), then present a "
           "concise plan: what you would change, where, and how you would check it. The person switches plan "
           "mode off to let you carry it out.]")
PLAN_OFF = "[Plan mode is off: you may change files and run commands again (the usual approvals apply).]"
MARK = "[Plan mode is "


def note_for(planning: bool, told: bool) -> tuple[str, bool]:
    """The note before the person's next message, and whether the model then believes it is planning."""
    if planning:
        return PLAN_ON, True
    return (PLAN_OFF if told else ""), False


def told_planning(messages) -> bool:
    """Does the latest plan-mode note in `messages` say plan mode is on?"""
    for message in reversed(list(messages)):
        if message.get("role") != "user":
            continue
        for block in reversed(blocks(message)):
            text = block.get("text", "") if block.get("type") == "text" else ""
            if isinstance(text, str) and text.startswith(MARK):
                return text == PLAN_ON
    return False

"""The skill tool: load a skill's instructions (its SKILL.md body) or read one of its other files.

The skills themselves are found by prompts/skills.py (ctx.extra["skills"]); a loaded body is handed to
the continuity (ctx.extra["skill_loaded"]) so every compaction re-attaches it. Reading only: it needs no
approval. Offered to the model only when there is a skill (registry.OPTIONAL).
"""

from __future__ import annotations

from .registry import ToolResult, tool


@tool("skill",
      "Load a skill listed in the system prompt: returns its instructions (SKILL.md) and lists its other "
      "files; with `file`, returns that file of the skill instead. Load a skill before a task it describes.",
      {"name": {"type": "string", "description": "the skill's name, as listed"},
       "file": {"type": "string", "description": "optional: one of the skill's other files, as listed"}},
      required=["name"])
def skill(ctx, name: str, file: str = "") -> ToolResult:
    skills = ctx.extra.get("skills")
    known = ", ".join(skills.found) if skills else ""
    if not skills or name not in skills.found:
        return ToolResult(f"Error: no skill named {name!r}" + (f"; the skills are: {known}" if known else ""), True)
    if file:
        text = skills.read(name, file)
        if text is None:
            return ToolResult(f"Error: skill {name} has no readable file {file!r} (a regular file inside its "
                              "folder, as listed when it was loaded)", True)
        return ToolResult(text or "(empty file)")
    loaded = skills.load(name)
    if loaded is None:
        return ToolResult(f"Error: the SKILL.md of {name} cannot be read any more", True)
    body, files = loaded
    on_load = ctx.extra.get("skill_loaded")
    if on_load is not None:
        on_load(name, body)
    listing = ("\n\nOther files of this skill (read one with skill, name=" + repr(name) + ", file=PATH):\n"
               + "\n".join(f"- {f}" for f in files)) if files else ""
    return ToolResult(f"[skill {name} loaded: s08 keeps these instructions through compaction]\n\n{body.strip()}"
                      + listing)

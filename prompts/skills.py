"""Skills: folders with a SKILL.md, in the format Claude Code (and many tools since) read.

    ~/.config/s08/skills/NAME/SKILL.md    the person's
    .s08/skills/NAME/SKILL.md             the project's
    .claude/skills/NAME/SKILL.md          the project's, as Claude Code keeps them

Only each skill's `name` and `description` (frontmatter) go into the system prompt, within
PROMPT_BUDGET characters for all of them; the `skill` tool (tools/skill.py) loads a body when the model
decides it applies, and lists the skill's other files, which the same tool reads. A loaded body is
re-attached after every compaction (compaction/continuity.py, SKILL_KEEP). The person's skill wins over
a project's of the same name.

    find_skills(workspace, environ) -> Skills
      .prompt_section()     the system prompt's list
      .load(name)           (body, other files) read again from disk, or None
      .read(name, file)     one other file of the skill, or None
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from config import user_settings_file
from .files import MAX_FILE, frontmatter, list_files, plain, read_file_at

SKILL_FILE = "SKILL.md"
PROMPT_BUDGET = 6_000             # characters of the system prompt's list of skills
MAX_DESCRIPTION = 400
MAX_SKILLS = 200
SKILL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    root: Path                    # the folder holding the skills folder's parts
    parts: tuple[str, ...]        # …/skills/NAME
    source: str

    @property
    def where(self) -> str:
        return str(self.root.joinpath(*self.parts))


@dataclass
class Skills:
    found: dict[str, Skill] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.found)

    def prompt_section(self) -> str:
        if not self.found:
            return ""
        lines, used, left = [], 0, 0
        for skill in self.found.values():
            line = f"- {skill.name}: {skill.description or '(no description)'}"
            if used + len(line) > PROMPT_BUDGET:
                left += 1
                continue
            lines.append(line)
            used += len(line) + 1
        more = f"\n({left} more skill{'s' * (left > 1)} not listed: the list's budget is full)" if left else ""
        return ("\n\n# Skills\nInstructions for particular tasks, kept in skill folders. When a task matches a "
                "skill's description, load it with the skill tool first and follow it.\n" + "\n".join(lines) + more)

    def load(self, name: str) -> tuple[str, list[str]] | None:
        skill = self.found.get(name)
        if skill is None:
            return None
        text = read_file_at(skill.root, (*skill.parts, SKILL_FILE))
        if text is None:
            return None
        files = ["/".join(rel) for rel in list_files(skill.root, skill.parts, depth=4, limit=100)
                 if rel != (SKILL_FILE,)]
        return frontmatter(text)[1], files

    def read(self, name: str, file: str) -> str | None:
        skill = self.found.get(name)
        rel = tuple(p for p in file.split("/") if p)
        if skill is None or not rel or any(p in (".", "..") for p in rel):
            return None
        return read_file_at(skill.root, (*skill.parts, *rel), MAX_FILE)


def find_skills(workspace: Path, environ: Mapping[str, str] | None = None) -> Skills:
    user = user_settings_file(os.environ if environ is None else environ).parent
    skills = Skills()
    for root, parts, source in ((user, ("skills",), "user"), (workspace, (".s08", "skills"), "project"),
                                (workspace, (".claude", "skills"), "project")):
        for rel in list_files(root, parts, depth=2):
            if len(rel) != 2 or rel[1] != SKILL_FILE or len(skills.found) >= MAX_SKILLS:
                continue
            text = read_file_at(root, (*parts, *rel))
            if text is None:
                continue
            fields = frontmatter(text)[0]
            name = fields.get("name", "").strip() or rel[0]
            if not SKILL_NAME.fullmatch(name) or name in skills.found:
                continue
            skills.found[name] = Skill(name, plain(fields.get("description", ""), MAX_DESCRIPTION), root,
                                       (*parts, rel[0]), source)
    return skills

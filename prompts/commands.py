"""Custom slash commands: Markdown prompts in the folders Claude Code users already keep.

    ~/.config/s08/commands/   the person's ($XDG_CONFIG_HOME/s08/commands when that is set)
    .s08/commands/            the project's
    .claude/commands/         the project's, as Claude Code keeps them

`review.md` is `/review`; `frontend/lint.md` is `/frontend:lint`. The frontmatter's `description` and
`argument-hint` show in /help and Tab completion. In the body, `$ARGUMENTS` is what follows the command,
`$1` … `$9` its words (quotes group them); with no placeholder the arguments follow the prompt as
`ARGUMENTS: …`. `@path` mentions attach files as they do in a typed message.

A command is a prompt: it is sent as the person's message and whatever it makes the model do goes
through the same approvals. So `allowed-tools` is not used (it would relax approvals), nor is `model`
(a command cannot switch the session to another model and its price: /model does that), each said in one
line when such a command runs; `` !`cmd` `` lines are sent as text, not run. The person's own commands
win over a project's of the same name; s08's built-in commands win over both.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from config import user_settings_file
from .files import frontmatter, markdown_files, plain

MAX_DESCRIPTION = 200
PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")


@dataclass(frozen=True)
class CustomCommand:
    name: str                     # "/review", "/frontend:lint"
    body: str
    description: str
    hint: str
    model: str
    allowed_tools: str
    where: str                    # the file, for /help and the lines it says
    source: str                   # "user" or "project"

    def help(self) -> str:
        own = "" if self.source == "user" else " (project)"
        text = self.description or "custom command"
        return (f"{text} {self.hint}".strip() if self.hint else text) + own

    def expand(self, arg: str) -> str:
        """The prompt: the body with $ARGUMENTS and $1… replaced."""
        try:
            words = shlex.split(arg)
        except ValueError:
            words = arg.split()
        if not PLACEHOLDER.search(self.body):
            return self.body.rstrip() + (f"\n\nARGUMENTS: {arg}" if arg else "")

        def value(match: re.Match) -> str:
            key = match.group(1)
            if key == "ARGUMENTS":
                return arg
            i = int(key) - 1
            return words[i] if i < len(words) else ""
        return PLACEHOLDER.sub(value, self.body)


def folders(workspace: Path, environ: Mapping[str, str] | None = None) -> list[tuple[Path, tuple[str, ...], str]]:
    """(root, parts, source) of the command folders, in precedence order."""
    user = user_settings_file(os.environ if environ is None else environ).parent
    return [(user, ("commands",), "user"), (workspace, (".s08", "commands"), "project"),
            (workspace, (".claude", "commands"), "project")]


def find_commands(workspace: Path, environ: Mapping[str, str] | None = None) -> dict[str, CustomCommand]:
    found: dict[str, CustomCommand] = {}
    for root, parts, source in folders(workspace, environ):
        for rel, text in markdown_files(root, parts):
            name = "/" + ":".join((*rel[:-1], rel[-1][:-3]))
            if name in found or not rel[-1][:-3]:
                continue
            fields, body = frontmatter(text)
            found[name] = CustomCommand(name, body, plain(fields.get("description", ""), MAX_DESCRIPTION),
                                        plain(fields.get("argument-hint", ""), 80),
                                        fields.get("model", ""), fields.get("allowed-tools", ""),
                                        str(root.joinpath(*parts, *rel)), source)
    return found

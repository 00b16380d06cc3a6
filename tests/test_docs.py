"""The documentation cannot drift from the code: every setting has its row in docs/settings.md and every
row its setting; every slash command and every subcommand is in the docs and in `/help` / `--help`, and
nothing is documented that does not exist; every relative link in the README and docs/ leads to a file
(and a heading) that exists; the README stays short; the CHANGELOG names the version `--version` prints.
(The commands docs/getting-started.md shows are run in tests/e2e/test_docs_commands_e2e.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import cli
from commands import COMMANDS, help_entries
from config import describe_settings
from cli import SUBCOMMANDS
from version import __version__

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SETTINGS_PAGE, COMMANDS_PAGE = DOCS / "settings.md", DOCS / "repl.md"
SUBCOMMANDS_PAGES = {"sessions": DOCS / "sessions.md", "inspect": DOCS / "sessions.md", "clean": DOCS / "sessions.md",
                     "mcp": DOCS / "mcp.md"}      # where each subcommand has its row
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def first_cells(page: Path, cell: str) -> list[str]:
    """The first cell's names of the table rows of `page` that match `cell` (a regex with one group)."""
    rows = re.compile(r"^\|\s*" + cell + r"[^|]*\|", re.M)
    return rows.findall(FENCE.sub("", page.read_text()))


def where(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_every_setting_has_its_row_and_every_row_its_setting():
    names = [name for name, _default, _doc in describe_settings()]
    rows = first_cells(SETTINGS_PAGE, r"`([A-Z][A-Z0-9_]*)`")
    missing = [n for n in names if n not in rows]
    assert not missing, "".join(f"\nsetting {n} (config.py) has no row in {where(SETTINGS_PAGE)}: add "
                                f"`| `{n}` | default | meaning |` to its table" for n in missing)
    unknown = sorted(set(rows) - set(names))
    assert not unknown, "".join(f"\n{where(SETTINGS_PAGE)} has a row for {n}, which config.py's Settings does "
                                "not have: remove the row, or add the setting" for n in unknown)
    twice = sorted({n for n in rows if rows.count(n) > 1})
    assert not twice, f"{where(SETTINGS_PAGE)} has more than one row for {', '.join(twice)}"


def test_every_slash_command_is_in_the_docs_and_in_help_and_nothing_else_is():
    registered = list(COMMANDS)
    in_help = [name for name, _text in help_entries()]
    documented = first_cells(COMMANDS_PAGE, r"`(/[a-z-]+)")
    for name in registered:
        assert name in in_help, f"{name} (commands.py) is not in /help"
        assert name in documented, (f"{name} (commands.py) has no row in {where(COMMANDS_PAGE)}: add "
                                    f"`| `{name} …` | what it does |` to its table of slash commands")
    unknown = sorted(set(documented) - set(registered))
    assert not unknown, (f"{where(COMMANDS_PAGE)} documents {', '.join(unknown)}, which commands.py does not "
                         "register: remove the row, or register the command")


def test_every_subcommand_is_in_the_docs_and_in_help_and_nothing_else_is():
    shown = cli._parser("s08").format_help()
    in_help = re.findall(r"^  ([a-z]+)\s{2,}", shown.split("subcommands (", 1)[-1], re.M)
    pages = sorted(set(SUBCOMMANDS_PAGES.values()))
    documented = [name for page in pages for name in first_cells(page, r"`s08 ([a-z]+)")]
    for name in SUBCOMMANDS:
        page = SUBCOMMANDS_PAGES.get(name, DOCS / "sessions.md")
        assert name in in_help, f"subcommand {name} (cli.SUBCOMMANDS) is not in `s08 --help`"
        assert name in first_cells(page, r"`s08 ([a-z]+)"), (
            f"subcommand {name} (cli.SUBCOMMANDS) has no row in {where(page)}: add `| `s08 {name} …` | what it does |`")
    unknown = sorted(set(documented) - set(SUBCOMMANDS))
    assert not unknown, f"the docs document subcommands s08 does not have: {', '.join(unknown)}"
    assert sorted(in_help) == sorted(SUBCOMMANDS), f"`s08 --help` lists {in_help}, s08 has {list(SUBCOMMANDS)}"


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text()), re.M):
        base, n = slug(heading), 0
        while (name := base if n == 0 else f"{base}-{n}") in found:
            n += 1
        found.add(name)
    return found


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]


def test_every_link_leads_to_a_file_and_a_heading_that_exist():
    broken = []
    for page in pages():
        text = re.sub(r"`[^`\n]*`", "", FENCE.sub("", page.read_text()))
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue                                 # https:, mailto:
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{where(page)}: {target} (no file {path})")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{where(page)}: {target} (no heading #{anchor} in {file.relative_to(ROOT)})")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_readme_is_short_and_every_docs_page_is_reachable_from_it():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300, "README.md is over 300 lines: move the detail into docs/"
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in LINK.findall(readme) if not re.match(r"[a-z]+:", t)}
    for page in sorted(DOCS.rglob("*.md")):
        assert page.resolve() in linked, f"README.md does not link to {where(page)}"


def test_the_changelog_has_the_version_s08_prints():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(r"^## \[" + re.escape(__version__) + r"\]", changelog, re.M), \
        f"CHANGELOG.md has no section `## [{__version__}]` (the version `s08 --version` prints, version.py)"

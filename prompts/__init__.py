"""Text people keep for their agent, read from the folders Claude Code uses: custom commands and skills.

    files.py      reading those folders safely (no link followed, regular files, bounded) and frontmatter
    commands.py   custom slash commands: .md files → /NAME, /folder:name, with $ARGUMENTS, $1…
    skills.py     skills: folders with a SKILL.md; names and descriptions for the system prompt, bodies on demand

What a repository ships there is text: it is shown to the model, never run, and it changes no approval,
no endpoint, no key and no model.
"""

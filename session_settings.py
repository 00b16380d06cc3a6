"""The settings a session keeps fixed: the endpoint, the credentials and the model.

Settings files may change while s08 runs — the person edits one, or the
model does (a prompt injection only has to ask for `edit_file .env`). Most
settings are picked up at the next turn. The ones in config.SESSION_FIXED are
not: whatever ANTHROPIC_BASE_URL names receives the key and the whole
conversation. A change to them is used only when the person says yes (the REPL
asks); with nobody to ask (-p, piped input) it is ignored, and said once.

    pins = Pins(first_load)                   taken when the session starts (.sources: where from)
    pins.changes(new_load.settings)           NAME → (old, new) for each fixed value that differs
    pins.is_new(changes)                      not asked about (or reported) yet
    pins.accept(new_load) / pins.decline(…)   the person's answer
    pins.apply(new_load.settings)             the new settings with the session's fixed values
    pins.login(key) / pins.logout()           /login, /logout: the person's own explicit change
"""

from __future__ import annotations

import dataclasses
import re

from config import SECRET_SETTINGS, SESSION_FIXED

YES = {"y", "yes", "是", "好"}
SHOWN_CHARS = 100                                       # of a changed value, in the question or the notice
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def fixed_values(settings) -> dict[str, str]:
    return {name: getattr(settings, name.lower()) for name in SESSION_FIXED}


class Pins:
    def __init__(self, result):
        self.values = fixed_values(result.settings)  # what this session uses
        self.answered = dict(self.values)            # the newest values the person answered (or was told) about
        self.sources = self._sources(result)         # where each value in use came from (None: a default)

    @staticmethod
    def _sources(result) -> dict[str, str | None]:
        return {name: result.sources.get(name) for name in SESSION_FIXED}

    def changes(self, settings) -> dict[str, tuple[str, str]]:
        new = fixed_values(settings)
        return {name: (self.values[name], new[name]) for name in SESSION_FIXED if new[name] != self.values[name]}

    def is_new(self, changes: dict) -> bool:
        return any(self.answered[name] != new for name, (_old, new) in changes.items())

    def accept(self, result) -> None:
        self.values = fixed_values(result.settings)
        self.answered = dict(self.values)
        self.sources = self._sources(result)

    def decline(self, result) -> None:
        self.answered = fixed_values(result.settings)

    def login(self, key: str, source: str) -> None:
        self.values["ANTHROPIC_API_KEY"] = self.answered["ANTHROPIC_API_KEY"] = key
        self.sources["ANTHROPIC_API_KEY"] = source

    def logout(self) -> None:
        self.values["ANTHROPIC_API_KEY"] = self.answered["ANTHROPIC_API_KEY"] = ""
        self.sources["ANTHROPIC_API_KEY"] = None

    def apply(self, settings):
        return dataclasses.replace(settings, **{name.lower(): value for name, value in self.values.items()})

    @property
    def has_credentials(self) -> bool:
        return any(self.values[name] for name in SECRET_SETTINGS)


def _shown(value: str) -> str:
    """A value from a file anyone may have written: short, and no control characters."""
    value = _CONTROL.sub("?", value)
    return (value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "…") or "(default)"


def describe(changes: dict[str, tuple[str, str]], sources: dict[str, str]) -> list[str]:
    """One line per change, naming where the new value comes from; keys and tokens are never shown."""
    lines = []
    for name, (old, new) in changes.items():
        where = f"in {sources[name]}" if new and name in sources else "no longer set in any settings file"
        if name in SECRET_SETTINGS:
            what = "removed" if not new else "set" if not old else "changed to a different value"
            lines.append(f"{name} {what} ({where})")
        else:
            lines.append(f"{name}: {_shown(old)} → {_shown(new)} ({where})")
    return lines

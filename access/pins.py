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
    pins.choose(model, file_value)            --model, /model: the person's own choice of model, kept until
                                              they choose again; a settings file's MODEL_ID changes it only
                                              when that value changes after the choice (and they agree)
    pins.needs_consent(workspace_env)         the trust rule (below) for the values in use

The trust rule, for the start of a session (and for /login): a workspace's `.env` is a file anyone may
have written — a cloned repository, or the model in an earlier session. When the base URL in use comes
from it (not from the environment, the user-level file, or a file the person named with --env-file)
and is not the default API, whoever runs that endpoint drives the agent: its model runs read-only
commands in the workspace without asking, asks for others, and reads files such as ~/.ssh/*, and a key
from elsewhere would go there too. So such an endpoint is used only with the person's consent
(access/folder_trust.py asks), whichever file the key or token comes from — the .env's own included. Without
any key or token nothing can be sent, so nothing is asked.
"""

from __future__ import annotations

import dataclasses
import re

from config import DEFAULT_BASE_URL, SECRET_SETTINGS, SESSION_FIXED
from redact import redact_url

YES = {"y", "yes", "是", "好"}
SHOWN_CHARS = 100                                       # of a changed value, in the question or the notice
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def fixed_values(settings) -> dict[str, str]:
    return {name: getattr(settings, name.lower()) for name in SESSION_FIXED}


class Pins:
    def __init__(self, result, earlier: "Pins | None" = None):
        """`earlier`: the pins these replace (settings read again after a consent question): the model
        the person chose stays their choice."""
        self.values = fixed_values(result.settings)  # what this session uses
        self.answered = dict(self.values)            # the newest values the person answered (or was told) about
        self.sources = self._sources(result)         # where each value in use came from (None: a default)
        self.chosen: str | None = None               # the model the person chose (--model, /model)
        self.model_base = ""                         # the settings files' MODEL_ID when they chose it
        if earlier is not None and earlier.chosen:
            self.choose(earlier.chosen, self.values["MODEL_ID"])

    @staticmethod
    def _sources(result) -> dict[str, str | None]:
        return {name: result.sources.get(name) for name in SESSION_FIXED}

    def changes(self, settings) -> dict[str, tuple[str, str]]:
        new = fixed_values(settings)
        return {name: (self.values[name], new[name]) for name in SESSION_FIXED if new[name] != self.values[name]
                and not (name == "MODEL_ID" and self.chosen and new[name] == self.model_base)}

    def is_new(self, changes: dict) -> bool:
        return any(self.answered[name] != new for name, (_old, new) in changes.items())

    def accept(self, result) -> None:
        chosen, source = self.chosen, self.sources.get("MODEL_ID")
        self.values = fixed_values(result.settings)
        self.answered = dict(self.values)
        self.sources = self._sources(result)
        if chosen and self.values["MODEL_ID"] == self.model_base:     # the files did not change the model
            self.values["MODEL_ID"], self.sources["MODEL_ID"] = chosen, source
        else:
            self.chosen = None

    def choose(self, model: str, file_value: str) -> None:
        self.values["MODEL_ID"], self.sources["MODEL_ID"] = model, "your choice (--model or /model)"
        self.answered["MODEL_ID"] = self.model_base = file_value
        self.chosen = model

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

    @property
    def base_url(self) -> str:
        return (self.values["ANTHROPIC_BASE_URL"] or DEFAULT_BASE_URL).rstrip("/")

    def needs_consent(self, workspace_env: str | None, key_source: str | None = None) -> bool:
        """The trust rule. `workspace_env`: the path of the workspace's `.env` when it was read as such
        (None with --env-file: a file the person named is theirs). `key_source`: where a key about to
        be used comes from (/login), instead of the keys in use."""
        return needs_consent(self.values, self.sources, workspace_env, key_source)


def needs_consent(values: dict, sources: dict, workspace_env: str | None, key_source: str | None = None) -> bool:
    """True when the base URL comes from `workspace_env`, is not the default API, and a key or token would
    be sent with it (`key_source`: one about to be, for /login) — see the module docstring."""
    url_source = sources.get("ANTHROPIC_BASE_URL")
    if workspace_env is None or url_source != workspace_env:
        return False
    if (values.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/").lower() == DEFAULT_BASE_URL:
        return False
    return key_source is not None or any(values.get(name) for name in SECRET_SETTINGS)


def shown(value: str, limit: int = SHOWN_CHARS) -> str:
    """A value from a file anyone may have written: short, and no control characters."""
    value = _CONTROL.sub("?", value)
    return (value if len(value) <= limit else value[:limit] + "…") or "(default)"


def describe(changes: dict[str, tuple[str, str]], sources: dict[str, str], in_use: dict[str, str] | None = None
             ) -> list[str]:
    """One line per change, naming where the new value comes from; keys and tokens are never shown, nor
    the user:password of a URL. `in_use`: how to name an old value that is not what the session really
    uses (the demo model answers instead)."""
    lines, in_use = [], in_use or {}
    for name, (old, new) in changes.items():
        where = f"in {sources[name]}" if new and name in sources else "no longer set in any settings file"
        if name in SECRET_SETTINGS:
            what = "removed" if not new else "set" if not old else "changed to a different value"
            lines.append(f"{name} {what} ({where})")
        else:
            if name == "ANTHROPIC_BASE_URL":
                old, new = redact_url(old), redact_url(new)
            before = in_use.get(name) or (f"{DEFAULT_BASE_URL} (default)" if name == "ANTHROPIC_BASE_URL" and not old
                                          else shown(old))
            lines.append(f"{name}: {before} → {shown(new)} ({where})")
    return lines

"""Settings: one table of every knob, read from the environment and the settings files.

Precedence is process environment > `<workspace>/.env` (or `--env-file`) >
the user-level file (`~/.config/s08/.env`, where /login keeps the key) >
the defaults below. File values are *not* copied into `os.environ`, so
commands run by the bash tool never see the API key. A value that does not
parse never crashes the program: it becomes a one-line warning naming the
setting, and the default is used instead. `SettingsResult.sources` says where
each value came from ("environment" or a file's path).

The workspace's `.env` is not the person's: a cloned repository ships it. It is read as an allowlist:
each setting's `folder` rule (FOLDER_RULES) says whether a value from it is taken as it is, only when it
lowers (or raises) the person's own value, only with the person's consent (access/ asks), or never.
What it may not set is ignored, named in one warning line. A file named with --env-file is the person's.
"""

from __future__ import annotations

import io
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from dotenv import dotenv_values
from dotenv.parser import parse_stream

from redact import SECRET_SETTINGS, redact_url
from storage import read_settings_text

DEFAULT_MODEL = "claude-sonnet-4-6"
logging.getLogger("dotenv.main").setLevel(logging.ERROR)   # we report unparseable lines ourselves
DEFAULT_BASE_URL = "https://api.anthropic.com"
SESSION_FIXED = (*SECRET_SETTINGS, "ANTHROPIC_BASE_URL", "MODEL_ID")   # fixed once a session starts
USER_SETTINGS_FOLDER = "s08"
PROVIDER_NAMES = ("anthropic", "scripted")   # llm/providers.py has one class for each (a test checks)

_handed_over: dict[str, str] = {}            # the secrets the key guard received at start-up (access/keyguard.py)


def hand_over(secrets: dict[str, str]) -> None:
    """Keep the secrets the key guard received, which are no longer in os.environ."""
    _handed_over.update(secrets)


def process_environ() -> dict[str, str]:
    """The environment as s08 was started with it: os.environ plus the secrets handed over."""
    return {**os.environ, **_handed_over}
APPROVAL_MODES = ("default", "auto_edit", "yolo", "plan")
SANDBOX_MODES = ("read-only", "workspace", "off")
MIN_CONTEXT_WINDOW = 4_096     # the smallest CONTEXT_WINDOW s08 works in (compaction/room.py says why)
PREVIEW_CHARS = 2_000      # head + tail kept in the context of anything saved to disk instead (outputs, inputs)
BASH_TIMEOUT = 120.0       # seconds before a bash command's process group is killed
# What a workspace's `.env` (a file a cloned repository ships) may set: each setting's `folder` rule below.
FOLDER_RULES = {
    "tighter": "taken only when the person's own value is the default or the same (SANDBOX: from read-only, "
               "workspace and off only tighten; from either of those, any other value loosens)",
    "lower": "taken only when at most the person's own value (environment, user-level file or default)",
    "higher": "taken only when at least the person's own value",
    "ask": "used only with the person's consent (access/folder_trust.py and access/pins.py ask)",
    "no": "ignored, said in one line",
}


def _field(default, doc: str, kind: str = "str", minimum: float | None = None, folder: str = "no"):
    assert folder in FOLDER_RULES, folder
    return field(default=default, metadata={"doc": doc, "kind": kind, "min": minimum, "folder": folder})


@dataclass(frozen=True)
class Settings:
    """Every setting, with its default. Field names are the env var names, lowercased."""

    anthropic_api_key: str = _field("", "API key (sent as a bearer token)", folder="ask")
    anthropic_auth_token: str = _field("", "alternative to the key, for compatible endpoints", folder="ask")
    anthropic_base_url: str = _field("", "Anthropic-compatible endpoint; empty = api.anthropic.com", folder="ask")
    model_id: str = _field(DEFAULT_MODEL, "model name sent to the API", folder="ask")
    provider: str = _field("anthropic", "what answers: anthropic (the Messages API), or scripted (s08's "
                                        "in-process scripted model, for tests and benches)", "provider", folder="no")
    max_tokens: int = _field(8000, "max output tokens per model call", "int", 1, folder="lower")
    bash_timeout: float = _field(BASH_TIMEOUT, "seconds before a bash command's process group is killed", "float",
                                 0.1, folder="lower")
    mcp_timeout: float = _field(30.0, "seconds an MCP server may take to start (else it is skipped with one "
                                     "line)", "float", 0.1, folder="lower")
    mcp_tool_timeout: float = _field(300.0, "seconds one MCP tool call may take before it is cancelled", "float", 0.1,
                                     folder="lower")
    mcp_schema_budget: int = _field(0, "tokens all MCP tool schemas may take before only names and one-line "
                                       "descriptions are sent (0: 10 % of CONTEXT_LIMIT)", "int", 0, folder="lower")
    api_max_retries: int = _field(2, "retries on 429/5xx/connection errors", "int", 0, folder="lower")
    api_timeout: float = _field(600.0, "seconds without answer data (pings do not count) before a request "
                                       "is given up", "float", 1, folder="no")
    api_total_timeout: float = _field(1800.0, "seconds one model request may take in all, however the "
                                              "server paces it", "float", 1, folder="no")
    s08_history_file: str = _field("~/.s08_history", "where the prompt's input history is kept", folder="ask")
    # --- compaction (see compaction/) ---
    context_limit: int = _field(50_000, "tokens of context that trigger compact_history", "int", 1000, folder="lower")
    context_window: int = _field(200_000, "the model's context window in tokens", "int", MIN_CONTEXT_WINDOW, folder="lower")
    keep_recent: int = _field(3, "newest tool results micro_compact keeps whole", "int", 0, folder="lower")
    persist_threshold: int = _field(30_000, "chars above which one tool output goes to .task_outputs", "int", 500,
                                    folder="lower")
    round_budget: int = _field(60_000, "chars of one round's tool outputs before the largest are persisted",
                               "int", 1000, folder="lower")
    preview_chars: int = _field(PREVIEW_CHARS, "chars of head+tail preview kept for a persisted output", "int", 100,
                                folder="lower")
    snip_max_messages: int = _field(50, "messages that trigger snip_compact", "int", 6, folder="lower")
    snip_target_messages: int = _field(20, "messages snip_compact cuts down to", "int", 5, folder="lower")
    preserve_result_tools: str = _field("read_file", "comma-separated tools whose results micro_compact keeps", folder="no")
    summary_max_tokens: int = _field(2_000, "max output tokens of the summary call", "int", 200, folder="lower")
    micro_clear_at_least: int = _field(20_000, "tokens of old results micro_compact waits for, then clears "
                                               "at once (0 = every turn)", "int", 0, folder="no")
    background_compact: str = _field("on", "prepare the summary in the background before the limit is reached, "
                                           "so a compaction does not stop the session (off: summarize only "
                                           "when the limit is reached, waiting for it)", "bool", folder="lower")
    prepare_at: float = _field(0.6, "share of CONTEXT_LIMIT past which the background summary starts "
                                    "(BACKGROUND_COMPACT)", "float", 0.05, folder="higher")
    recent_work: float = _field(0.1, "share of CONTEXT_LIMIT: the newest tool results the model has seen, up to "
                                     "this many tokens, stay whole through every compaction (0: none; at most 0.5)",
                                "float", 0, folder="lower")
    # --- continuity (see compaction/continuity.py) ---
    user_messages_budget: int = _field(20_000, "tokens of the person's own messages kept verbatim through every "
                                               "compaction (at most 40% of CONTEXT_LIMIT)", "int", 0, folder="lower")
    ledger_budget: int = _field(4_000, "tokens of the work ledger (files, commands, transcripts) kept beside "
                                       "every summary (at most 10% of CONTEXT_LIMIT)", "int", 0, folder="lower")
    skill_keep: int = _field(5_000, "tokens of each loaded skill's instructions re-attached after every "
                                    "compaction", "int", 0, folder="lower")
    # --- cost ---
    cold_compact_at: float = _field(0.3, "when a turn starts after the prompt cache expired, summarize if the "
                                         "prompt is past this share of CONTEXT_LIMIT (1 = only over the limit)",
                                    "float", 0, folder="higher")
    cache_ttl: str = _field("auto", "how long cached prompts live: 5m, 1h, prefix (1h for the system prompt, "
                                    "tools and first message, 5m for the rest), or auto (5m until the person "
                                    "pauses longer than 5 minutes)", "ttl", folder="no")
    prompt_cache: str = _field("on", "cache_control breakpoints on (off for endpoints that reject them)", "bool", folder="no")
    model_price: str = _field("", "USD per million input,output tokens (overrides the built-in table)", "price", folder="no")
    # --- housekeeping (s08 clean) ---
    keep_days: int = _field(30, "days an unused session's log, transcripts and saved outputs are kept before "
                                "s08 clean removes them", "int", 0, folder="higher")
    # --- first run ---
    demo: str = _field("auto", "the built-in offline demo model: auto (when no key is configured), on, off",
                       "demo", folder="no")
    # --- approvals (see approvals/policy.py) ---
    approval_mode: str = _field("default", "default (ask before commands and file changes), auto_edit "
                                           "(file changes without asking) or yolo (never ask)", "mode", folder="ask")
    allow_commands: str = _field("", "comma-separated command prefixes that run without asking, "
                                     "e.g. pytest,npm test,git diff", folder="ask")
    # --- sub-agents (see delegation/) ---
    task_report_max: int = _field(2_000, "tokens of a sub-agent's report the parent gets (the rest: a pointer "
                                         "to the sub-agent's transcript)", "int", 100, folder="lower")
    task_max_steps: int = _field(60, "model calls one sub-agent may make before s08 stops it", "int", 1, folder="lower")
    # --- the bash tool's kernel sandbox (see tools/sandbox.py) ---
    sandbox: str = _field("read-only", "read-only (commands that run without a question run in a read-only "
                                       "kernel sandbox), workspace (every command may write only in the "
                                       "workspace, no network) or off (no sandbox: every command asks)", "sandbox",
                      folder="tighter")
    sandbox_network: str = _field("off", "under SANDBOX=workspace, let commands use TCP", "bool", folder="ask")
    max_processes: int = _field(512, "processes one command may have running at once before s08 kills it",
                                "int", 8, folder="ask")

    @property
    def caching(self) -> bool:
        return self.prompt_cache == "on"

    @property
    def preserved_tools(self) -> frozenset:
        return frozenset(t.strip() for t in self.preserve_result_tools.split(",") if t.strip())

    @property
    def base_url(self) -> str:
        return (self.anthropic_base_url or DEFAULT_BASE_URL).rstrip("/")

    @property
    def has_credentials(self) -> bool:
        return bool(self.anthropic_api_key or self.anthropic_auth_token)

    @property
    def endpoint_problem(self) -> str:
        """Why the endpoint cannot be used as given ("" when it can): a URL without its scheme would
        only fail after every retry, with a message that does not say why."""
        url = self.anthropic_base_url
        if url and not url.lower().startswith(("http://", "https://")):
            url = redact_url(url)               # never shown: a URL's password
            return (f"ANTHROPIC_BASE_URL={url!r} has no scheme: write it as http://{url} (a local server) "
                    f"or https://{url}")
        return ""


class SettingsResult:
    """Settings plus the warnings met while reading them (one line each), and where each value that is
    not a default came from: `sources["ANTHROPIC_API_KEY"]` is "environment" or a settings file's path."""

    def __init__(self, settings: Settings, warnings: list[str], sources: dict[str, str] | None = None):
        self.settings = settings
        self.warnings = warnings
        self.sources = sources or {}

    def credential_source(self) -> str:
        """Where the key (or token) in use was found, e.g. "ANTHROPIC_API_KEY from the environment" or
        "ANTHROPIC_API_KEY from /home/me/project/.env" (any settings file records its own path)."""
        name = "ANTHROPIC_API_KEY" if self.settings.anthropic_api_key else "ANTHROPIC_AUTH_TOKEN"
        where = self.sources.get(name, "")
        return f"{name} from " + ("the environment" if where == "environment" else where) if where else name


def _parse(name: str, raw: str, kind: str, minimum):
    value: float
    if kind == "int":
        value = int(raw.strip().replace("_", ""))
    elif kind == "bool":
        word = raw.strip().lower()
        if word not in ("on", "off", "true", "false", "1", "0", "yes", "no"):
            raise ValueError("must be on or off")
        return "on" if word in ("on", "true", "1", "yes") else "off"
    elif kind == "demo":
        word = raw.strip().lower()
        words = {"auto": "auto", "on": "on", "true": "on", "yes": "on", "1": "on",
                 "off": "off", "false": "off", "no": "off", "0": "off"}
        if word not in words:
            raise ValueError("must be auto, on or off")
        return words[word]
    elif kind == "price":
        try:
            parts = [float(p) for p in raw.replace(" ", "").split(",")]
        except ValueError:
            parts = []
        if len(parts) != 2 or not all(math.isfinite(p) and p >= 0 for p in parts):
            raise ValueError("must be two numbers: input,output (USD per million tokens)")
        return raw.strip()
    elif kind == "ttl":
        word = raw.strip().lower()
        if word not in ("5m", "1h", "prefix", "auto"):
            raise ValueError("must be 5m, 1h, prefix or auto")
        return word
    elif kind == "provider":
        word = raw.strip().lower()
        if word not in PROVIDER_NAMES:
            raise ValueError(f"must be one of {', '.join(PROVIDER_NAMES)}")
        return word
    elif kind == "mode":
        word = raw.strip().lower().replace("-", "_")
        if word not in APPROVAL_MODES:
            raise ValueError(f"must be one of {', '.join(APPROVAL_MODES)}")
        return word
    elif kind == "sandbox":
        word = raw.strip().lower().replace("_", "-")
        if word not in SANDBOX_MODES:
            raise ValueError(f"must be one of {', '.join(SANDBOX_MODES)}")
        return word
    elif kind == "float":
        value = float(raw.strip())
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
    else:
        return raw.strip()
    if minimum is not None and value < minimum:
        raise ValueError(f"must be at least {minimum:g}")
    return value


def _dotenv_problems(path: Path, text: str) -> list[str]:
    """Lines of a .env file that python-dotenv could not parse (it skips them quietly)."""
    return [f"{path.name} line {b.original.line}: could not parse {_shown_line(b.original.string)}"
            for b in parse_stream(io.StringIO(text)) if b.error]


def _shown_line(line: str) -> str:
    """A bad .env line as a warning may show it: never the value of a secret setting."""
    name = next((n for n in SECRET_SETTINGS if n in line), None)
    return f"the {name} line (value not shown)" if name else repr(line.strip()[:40])


def secret_problem(name: str, value: str) -> str | None:
    """Why a key or token cannot be used as one: anything but printable ASCII (a control character
    would end up in an HTTP header, and the error about it could print the key)."""
    if all("\x21" <= ch <= "\x7e" for ch in value):
        return None
    return f"{name} contains control characters, spaces or non-ASCII characters; it is ignored (check the value)"


def _read_file(path: Path, warnings: list[str]) -> dict[str, str]:
    try:
        text = read_settings_text(path)        # a regular file, bounded: a FIFO or /dev/zero is refused
    except OSError as exc:
        warnings.append(f"cannot read {path}: {exc.strerror or exc}")
        return {}
    warnings += _dotenv_problems(path, text)
    values = dotenv_values(stream=io.StringIO(text), interpolate=False)     # literal: no ${VAR} from the environment
    return {k: v for k, v in values.items() if v is not None}


def _label(path: Path, workspace_env: Path) -> str:
    """How a warning names a settings file: `.env` for the workspace's, the path for the others."""
    return ".env" if path == workspace_env else str(path)


def load_settings(workspace: Path, env_file: Path | None = None,
                  environ: dict[str, str] | None = None, user_file: Path | None = None,
                  not_from_env_file: tuple[str, ...] = (),
                  in_user_file: Mapping[str, str | None] | None = None) -> SettingsResult:
    """Read every setting; never raises for a bad value. `user_file` defaults to user_settings_file().
    The names in `not_from_env_file` are not taken from the workspace file (the person declined the
    endpoint it names: access/model_access.py); the environment, the user-level file or the default decide them.
    `in_user_file` replaces values of the user-level file (None: not set there): those changed behind
    s08's back and not agreed to (access/user_file_guard.py)."""
    if environ is None:
        environ = process_environ()
    environ = dict(environ)
    warnings: list[str] = []
    env_path = env_file or workspace / ".env"
    user_path = user_file or user_settings_file(environ)
    layers: list[tuple[str, dict[str, str]]] = [("environment", environ)]
    if env_path.is_file():
        layer = _read_file(env_path, warnings)
        layers.append((str(env_path), {k: v for k, v in layer.items() if k not in not_from_env_file}))
    elif env_file is not None:
        warnings.append(f"env file {env_file} not found; using the environment only")
    if user_path.is_file() and user_path != env_path:
        layer = _read_file(user_path, warnings)
        for name, value in (in_user_file or {}).items():
            if value is None:
                layer.pop(name, None)
            else:
                layer[name] = value
        layers.append((str(user_path), layer))

    folder = str(env_path) if env_file is None else None      # a file the person named is theirs
    values, sources, ignored = {}, {}, []
    for f in fields(Settings):
        name = f.name.upper()
        candidates = [(source, layer[name]) for source, layer in layers
                      if name in layer and layer[name].strip() != ""]     # empty means "not set" (.env.example)
        if candidates and candidates[0][0] == folder:
            why = _folder_refusal(f, candidates[0][1], candidates[1:])
            if why is not None:
                ignored.append(f"{name}={_shown_value(candidates[0][1])}{why}")
                candidates = candidates[1:]
        if not candidates:
            continue
        source, raw = candidates[0]
        if name in SECRET_SETTINGS and secret_problem(name, raw.strip()):
            warnings.append(f"{secret_problem(name, raw.strip())} (from {source})")
            continue
        try:
            values[f.name] = _parse(name, raw, f.metadata["kind"], f.metadata["min"])
            sources[name] = source
        except ValueError as exc:
            reason = str(exc) if str(exc).startswith("must") else \
                f"must be a {'whole ' if f.metadata['kind'] == 'int' else ''}number"
            default = repr(f.default) if f.default != "" else "(none)"
            where = source if source == "environment" else _label(Path(source), env_path)
            own = _persons_value(f, candidates[1:]) if source == folder else None
            if own is not None:         # a folder's bad value (`KEEP_DAYS=-1`) does not reset the person's own
                values[f.name], sources[name] = own[1], own[0]
                warnings.append(f"{name}={raw!r} (from {where}) {reason}; using yours, {own[2]}")
            else:
                warnings.append(f"{name}={raw!r} (from {where}) {reason}; using the default {default}")
    if ignored:
        warnings.append(folder_ignored(ignored, user_path))
    settings = Settings(**values)
    if settings.context_limit >= settings.context_window and "CONTEXT_LIMIT" in sources:   # the default follows the window (room.py)
        warnings.append(f"CONTEXT_LIMIT ({settings.context_limit:,}) is not below CONTEXT_WINDOW "
                        f"({settings.context_window:,}): compaction starts only when a request would not fit the window "
                        "with room for the answer")
    if settings.endpoint_problem:
        warnings.append(settings.endpoint_problem)
    return SettingsResult(settings, warnings, sources)


def _persons_value(f, persons: list[tuple[str, str]]) -> tuple[str, object, str] | None:
    """(source, value, raw) of the person's own value of setting `f` below a folder's, if one parses."""
    for source, raw in persons:
        try:
            return source, _parse(f.name.upper(), raw, f.metadata["kind"], f.metadata["min"]), raw.strip()
        except ValueError:
            continue
    return None


def _folder_refusal(f, raw: str, persons: list[tuple[str, str]]) -> str | None:
    """Why the workspace `.env`'s value of setting `f` is not taken (None: it is), by the setting's
    `folder` rule. `persons`: the values of the person's own files below it, best first."""
    rule = f.metadata["folder"]
    if rule == "ask":
        return None
    if rule == "no":
        return ""
    if rule == "tighter":
        own = persons[0][1].strip().lower().replace("_", "-") if persons else f.default
        return None if own in (f.default, raw.strip().lower().replace("_", "-")) else f" (yours, {own}, is kept)"
    def number(text: str):                  # on/off settings compare as 1/0: "lower" means off
        value = _parse(f.name.upper(), text, f.metadata["kind"], f.metadata["min"])
        return (value == "on") if f.metadata["kind"] == "bool" else value
    try:
        value = number(raw)
    except ValueError:
        return None                     # not a value at all: said as any bad value is, and the default is used
    own = number(f.default) if f.metadata["kind"] == "bool" else f.default
    if persons:
        try:
            own = number(persons[0][1])
        except ValueError:
            pass
    shown = ("on" if own else "off") if f.metadata["kind"] == "bool" else f"{own:g}"
    if rule == "lower" and value > own:
        return f" (only a value up to yours, {shown}, is taken)"
    if rule == "higher" and value < own:
        return f" (only a value of at least yours, {shown}, is taken)"
    return None


def _shown_value(raw: str) -> str:
    raw = raw.strip()
    return raw if len(raw) <= 40 and raw.isprintable() and " " not in raw else repr(raw[:40])


def folder_ignored(ignored: list[str], user_file: Path) -> str:
    """The one line that names what a workspace's `.env` tried to set and was not taken."""
    return (f"s08: ignoring {', '.join(ignored)} from this folder's .env: a repository's settings may not change "
            f"what s08 runs, what it costs or what it keeps. To use them, set them in the environment, pass "
            f"--env-file .env, or put them in {user_file}.")


def user_settings_file(environ: Mapping[str, str] | None = None) -> Path:
    """The user-level settings file: `$XDG_CONFIG_HOME/s08/.env`, else `~/.config/s08/.env`."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base).expanduser() / USER_SETTINGS_FOLDER / ".env"


def missing_key_message(workspace: Path, environ: dict[str, str] | None = None) -> str:
    return (f"No API key configured. Run /login in the REPL, or put ANTHROPIC_API_KEY=sk-ant-... in "
            f"{workspace / '.env'} or {user_settings_file(environ)} (or export it; ANTHROPIC_AUTH_TOKEN "
            "works for compatible endpoints).")


def describe_settings() -> list[tuple[str, object, str]]:
    """(NAME, default, doc) for every setting — used by tests to keep .env.example complete."""
    return [(f.name.upper(), f.default, f.metadata["doc"]) for f in fields(Settings)]

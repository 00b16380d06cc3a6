"""Settings from the environment and .env: precedence, bad values, and a complete .env.example."""

from __future__ import annotations

import os
from pathlib import Path

from dataclasses import fields

from config import DEFAULT_MODEL, Settings, describe_settings, load_settings

ROOT = Path(__file__).resolve().parent.parent


def bare(workspace: Path) -> dict:
    """An environment with nothing set, and a home of its own (no user-level settings file)."""
    return {"HOME": str(workspace.parent / "home")}


def test_defaults(workspace):
    s = load_settings(workspace, environ=bare(workspace)).settings
    assert s.model_id == DEFAULT_MODEL and s.max_tokens == 8000 and s.bash_timeout == 120
    assert s.base_url == "https://api.anthropic.com" and not s.has_credentials


def test_dotenv_is_read_and_environment_wins(workspace):
    (workspace / ".env").write_text("MODEL_ID=from-file\nMAX_TOKENS=1234\nANTHROPIC_API_KEY=file-key\n"
                                    "ANTHROPIC_BASE_URL=http://127.0.0.1:9/\n")
    result = load_settings(workspace, environ={"MODEL_ID": "from-env", **bare(workspace)})
    s = result.settings
    assert (s.model_id, s.max_tokens, s.anthropic_api_key) == ("from-env", 1234, "file-key")
    assert s.base_url == "http://127.0.0.1:9" and not result.warnings
    assert "ANTHROPIC_API_KEY" not in os.environ or os.environ["ANTHROPIC_API_KEY"] != "file-key"


def test_bad_values_become_one_line_warnings_and_defaults(workspace):
    (workspace / ".env").write_text("MAX_TOKENS=lots\nBASH_TIMEOUT=-5\nAPI_MAX_RETRIES=2.5\n")
    result = load_settings(workspace, environ=bare(workspace))
    s = result.settings
    assert (s.max_tokens, s.bash_timeout, s.api_max_retries) == (8000, 120, 2)
    text = "\n".join(result.warnings)
    assert "MAX_TOKENS='lots' (from .env) must be a whole number" in text
    assert "BASH_TIMEOUT='-5' (from .env) must be at least 0.1" in text
    assert "API_MAX_RETRIES" in text
    assert all("\n" not in w for w in result.warnings)


def test_unparseable_dotenv_line_is_reported(workspace):
    (workspace / ".env").write_text("MODEL_ID=ok\nthis is not a setting\nMAX_TOKENS=10\n")
    result = load_settings(workspace, environ=bare(workspace))
    assert result.settings.model_id == "ok" and result.settings.max_tokens == 10
    assert any("line 2" in w for w in result.warnings)


def test_env_example_documents_every_setting():
    example = (ROOT / ".env.example").read_text()
    for name, _default, _doc in describe_settings():
        assert f"{name}=" in example, f"{name} is missing from .env.example"


def test_non_finite_numbers_and_bad_bytes_are_refused_not_crashed_on(workspace):
    (workspace / ".env").write_bytes(b"BASH_TIMEOUT=nan\nPREPARE_AT=inf\nMODEL_ID=caf\xff\n")
    result = load_settings(workspace, environ=bare(workspace))
    s = result.settings
    assert (s.bash_timeout, s.prepare_at) == (120, 0.6) and s.model_id == "caf\ufffd"
    assert sum("must be a finite number" in w for w in result.warnings) == 2


def test_precedence_environment_then_workspace_then_user_file_then_defaults(workspace):
    from config import user_settings_file
    env = {**bare(workspace), "MODEL_ID": "from-env"}
    user = user_settings_file(env)
    user.parent.mkdir(parents=True)
    user.write_text("MODEL_ID=from-user\nMAX_TOKENS=111\nBASH_TIMEOUT=7\nANTHROPIC_API_KEY=user-key\n")
    (workspace / ".env").write_text("MAX_TOKENS=100\nBASH_TIMEOUT=\n")      # empty = not set: the user file's
    result = load_settings(workspace, environ=env)
    s = result.settings
    assert (s.model_id, s.max_tokens, s.bash_timeout, s.anthropic_api_key) == ("from-env", 100, 7, "user-key")
    assert result.sources == {"MODEL_ID": "environment", "MAX_TOKENS": str(workspace / ".env"),
                              "BASH_TIMEOUT": str(user), "ANTHROPIC_API_KEY": str(user)}
    assert s.context_limit == 50_000 and "CONTEXT_LIMIT" not in result.sources      # a default has no source


def test_user_file_under_xdg_config_home_and_bad_values_name_it(workspace):
    from config import user_settings_file
    env = {**bare(workspace), "XDG_CONFIG_HOME": str(workspace.parent / "xdg")}
    user = user_settings_file(env)
    assert user == workspace.parent / "xdg" / "s08" / ".env"
    user.parent.mkdir(parents=True)
    user.write_text("MAX_TOKENS=many\nDEMO=sometimes\n")
    result = load_settings(workspace, environ=env)
    assert result.settings.max_tokens == 8000 and result.settings.demo == "auto"
    assert any(f"MAX_TOKENS='many' (from {user})" in w for w in result.warnings)
    assert any("DEMO='sometimes'" in w and "must be auto, on or off" in w for w in result.warnings)


def test_values_are_taken_literally_never_expanded_from_the_environment(workspace):
    (workspace / ".env").write_text("MODEL_ID=${ANTHROPIC_API_KEY}\nANTHROPIC_AUTH_TOKEN='tok-$HOME'\n")
    env = {**bare(workspace), "ANTHROPIC_API_KEY": "sk-secret-value"}
    s = load_settings(workspace, environ=env).settings
    assert s.model_id == "${ANTHROPIC_API_KEY}" and s.anthropic_auth_token == "tok-$HOME"


# ---- a workspace's .env is an allowlist (config.FOLDER_RULES) -----------------------------------------------
def test_every_setting_has_a_folder_rule_and_the_harmful_ones_are_not_taken_as_they_are():
    from config import FOLDER_RULES
    rules = {f.name.upper(): f.metadata["folder"] for f in fields(Settings)}
    assert set(rules.values()) <= set(FOLDER_RULES)
    for name in ("DEMO", "MODEL_PRICE", "PROVIDER", "CACHE_TTL", "PROMPT_CACHE", "API_TIMEOUT", "API_TOTAL_TIMEOUT",
                 "MICRO_CLEAR_AT_LEAST"):
        assert rules[name] == "no"
    for name in ("MAX_TOKENS", "BASH_TIMEOUT", "CONTEXT_LIMIT", "API_MAX_RETRIES", "SUMMARY_MAX_TOKENS"):
        assert rules[name] == "lower"
    for name in ("KEEP_DAYS", "PREPARE_AT", "COLD_COMPACT_AT"):       # lower: more deleted, more summary calls
        assert rules[name] == "higher"
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "MODEL_ID", "APPROVAL_MODE", "ALLOW_COMMANDS"):
        assert rules[name] == "ask"


def test_a_folder_env_lowers_but_never_raises_and_names_what_it_ignored_in_one_line(workspace):
    from config import user_settings_file
    env = bare(workspace)
    user = user_settings_file(env)
    user.parent.mkdir(parents=True)
    user.write_text("CONTEXT_LIMIT=30000\nKEEP_DAYS=10\n")
    (workspace / ".env").write_text("CONTEXT_LIMIT=40000\nMAX_TOKENS=500\nKEEP_DAYS=5\nDEMO=on\nPREPARE_AT=0.8\n"
                                    "BACKGROUND_COMPACT=off\n")
    result = load_settings(workspace, environ=env)
    s = result.settings
    assert (s.context_limit, s.max_tokens, s.keep_days, s.demo, s.prepare_at) == (30000, 500, 10, "auto", 0.8)
    assert s.background_compact == "off"
    [line] = [w for w in result.warnings if "this folder's .env" in w]
    for shown in ("CONTEXT_LIMIT=40000 (only a value up to yours, 30000", "KEEP_DAYS=5", "DEMO=on", str(user)):
        assert shown in line
    named = load_settings(workspace, env_file=workspace / ".env", environ=env).settings   # --env-file: the person's
    assert (named.context_limit, named.keep_days, named.demo) == (40000, 5, "on")


def test_the_folder_settings_page_names_every_setting_in_its_rules_row():
    page = (Path(__file__).resolve().parent.parent / "docs" / "folder-settings.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in page.splitlines() if line.startswith("| ")}
    for f in fields(Settings):
        assert f"`{f.name.upper()}`" in rows[f.metadata["folder"]], f.name


def test_a_folder_value_that_does_not_parse_never_replaces_the_persons_own(workspace):
    """A .env value the rule cannot compare (`KEEP_DAYS=-1` under the minimum, `CONTEXT_LIMIT=1e9` not a
    whole number) is ignored like a refused one: the person's own value stays, not the default (which
    would shorten their 365 days of sessions to 30, or raise their lowered limit)."""
    from config import user_settings_file
    env = bare(workspace)
    user = user_settings_file(env)
    user.parent.mkdir(parents=True)
    user.write_text("CONTEXT_LIMIT=20000\nKEEP_DAYS=365\nBASH_TIMEOUT=30\nPREPARE_AT=0.9\n")
    (workspace / ".env").write_text("CONTEXT_LIMIT=1e9\nKEEP_DAYS=-1\nBASH_TIMEOUT=nan\nPREPARE_AT=0.01\n")
    result = load_settings(workspace, environ=env)
    s = result.settings
    assert (s.context_limit, s.keep_days, s.bash_timeout, s.prepare_at) == (20000, 365, 30.0, 0.9)
    text = "\n".join(result.warnings)
    assert "KEEP_DAYS='-1' (from .env) must be at least 0; using yours, 365" in text
    assert "CONTEXT_LIMIT='1e9' (from .env) must be a whole number; using yours, 20000" in text


def test_a_folder_sandbox_setting_never_loosens_the_persons_own(workspace):
    """SANDBOX=workspace in the person's file confines every command they approve (yolo's too); a folder's
    SANDBOX=off or read-only would let those write anywhere. From the default (read-only) both only tighten."""
    from config import user_settings_file
    env = bare(workspace)
    user = user_settings_file(env)
    user.parent.mkdir(parents=True)
    for own, folder, kept in (("workspace", "off", "workspace"), ("workspace", "read-only", "workspace"),
                              ("off", "read-only", "off"), ("off", "workspace", "off"), ("off", "off", "off"),
                              (None, "workspace", "workspace"), (None, "off", "off")):
        user.write_text(f"SANDBOX={own}\n" if own else "")
        (workspace / ".env").write_text(f"SANDBOX={folder}\n")
        result = load_settings(workspace, environ=env)
        assert result.settings.sandbox == kept, (own, folder)
        assert (kept == folder) != any(f"SANDBOX={folder}" in w for w in result.warnings), (own, folder)


def test_a_folder_value_written_another_way_is_judged_as_the_value_it_is(workspace):
    """Attack review (held): `export`, a duplicate key (the last wins, for the rule too), Arabic-Indic digits,
    underscores and a DEMO spelled `TRUE` are compared as the values they parse to."""
    (workspace / ".env").write_text("export CONTEXT_LIMIT=1000\nCONTEXT_LIMIT=\u0669\u0669\u0669\u0669\u0669\u0669\n"
                                    "KEEP_DAYS=90\nKEEP_DAYS=0\nMAX_TOKENS=8_000_000\nDEMO=TRUE\nBASH_TIMEOUT=1e3\n")
    s = load_settings(workspace, environ=bare(workspace)).settings
    assert (s.context_limit, s.keep_days, s.max_tokens, s.demo, s.bash_timeout) == (50_000, 30, 8000, "auto", 120)


def test_a_small_context_window_alone_warns_of_nothing_but_a_limit_past_it_does(workspace):
    """CONTEXT_WINDOW=8192 with the default CONTEXT_LIMIT: the limit follows the window by itself (compaction
    starts where a request would no longer fit), so a local-model setup is not told off at every start;
    a CONTEXT_LIMIT the person set past the window is."""
    alone = load_settings(workspace, environ={**bare(workspace), "CONTEXT_WINDOW": "8192"})
    assert not [w for w in alone.warnings if "CONTEXT_LIMIT" in w]
    past = load_settings(workspace, environ={**bare(workspace), "CONTEXT_WINDOW": "8192", "CONTEXT_LIMIT": "9000"})
    assert [w for w in past.warnings if "CONTEXT_LIMIT (9,000) is not below CONTEXT_WINDOW (8,192)" in w]

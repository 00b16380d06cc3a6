"""What a folder's `.env` may decide only with the person's consent, and the one question that asks.

A workspace's `.env` is a file anyone may have written: a cloned repository ships one, a model in an
earlier session can write one. Two kinds of its settings are used only if the person agrees:

    the endpoint    ANTHROPIC_BASE_URL other than the default API (session_settings.needs_consent):
                    whoever runs it receives everything in the session, with the key, and drives the agent
    relaxations     APPROVAL_MODE other than default and ALLOW_COMMANDS (commands that run without
                    asking), S08_HISTORY_FILE (where what the person types is kept: outside the workspace),
                    MODEL_ID other than the default (the model every request goes to, and its price),
                    SANDBOX_NETWORK and MAX_PROCESSES (what the bash tool's sandbox and bound allow)
                    (config.py's table: the settings whose `folder` rule is "ask")
The rest of what a folder's .env may set, and what it may not, is that table's rule (config.FOLDER_RULES).

The environment, a file named with --env-file and the user-level file are the person's own: nothing
from them is asked about. access/model_access.py asks one question about all of a folder's pending items; yes is
remembered per folder and values (credentials.remember_values; a changed value asks again), no
ignores them for the session. With nobody to ask (-p, piped input) the endpoint sends nothing and the
relaxations are ignored, each said in one line.

    relaxations(result, workspace_env)        NAME → value of the relaxing settings used from that .env
    question(folder, endpoint, relax, fallback)   the text of the question
    relaxations_ignored(relax, user_file)     the line -p and piped input show instead
    after_change(trust, demo_on, demo_stays)  what a yes to a mid-session change of the endpoint means
    foreign_log_question(id, why) / foreign_log_refused(id, why)
                                              resuming a session log written in another workspace (its header)
"""

from __future__ import annotations

from dataclasses import fields

from config import Settings
from access.pins import shown

ENDPOINT_SETTINGS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")   # access/pins.py's trust rule
RELAXING = tuple(f.name.upper() for f in fields(Settings)                                # config.py's folder="ask"
                 if f.metadata["folder"] == "ask" and f.name.upper() not in ENDPOINT_SETTINGS)
SHOWN_FOLDER_CHARS = 200
SHOWN_VALUE_CHARS = 1000             # a relaxing value is shown whole up to here: the person judges it
MEANING = {"APPROVAL_MODE": {"yolo": "every command and file change runs without asking",
                             "auto_edit": "file changes run without asking"},
           "ALLOW_COMMANDS": "commands that start with these run without asking",
           "S08_HISTORY_FILE": "what you type at the prompt is kept in that file",
           "MODEL_ID": "every request goes to this model, at its price",
           "SANDBOX_NETWORK": "commands may use the network under SANDBOX=workspace",
           "MAX_PROCESSES": "how many processes one command may run at once"}
ENDPOINT_RISK = ("Whoever runs that endpoint receives the key and everything in this session, and its model "
                 "drives this agent: it can run commands that only read (ls, cat, grep, …) here without asking, "
                 "ask you for others, and read any file you can read, ~/.ssh/* included.")
WHO_COULD = ("Anyone who could write this folder (a cloned repository, a model in an earlier session) could "
             "have set {what}.")


def relaxations(result, workspace_env: str | None) -> dict[str, str]:
    """The settings in use from the workspace's `.env` (not another file) that relax approvals or keep
    files outside the workspace. A default value (APPROVAL_MODE=default, as in a copied .env.example)
    relaxes nothing, nor does APPROVAL_MODE=plan (it only restricts)."""
    if workspace_env is None:
        return {}
    defaults = {f.name: f.default for f in fields(Settings)}
    found = {}
    for name in RELAXING:
        value = getattr(result.settings, name.lower())
        if result.sources.get(name) == workspace_env and value not in (defaults[name.lower()], "plan"):
            found[name] = str(value)
    return found


def _value(value: str) -> str:
    if len(value) <= SHOWN_VALUE_CHARS:
        return shown(value, SHOWN_VALUE_CHARS)
    return shown(value, SHOWN_VALUE_CHARS) + f" ({len(value):,} characters: read .env before you answer)"


def _meaning(name: str, value: str) -> str:
    meaning = MEANING[name]
    return meaning.get(value, "") if isinstance(meaning, dict) else meaning


def question(folder: str, endpoint: tuple[str, str] | None, relax: dict[str, str], fallback: str = "") -> str:
    """`endpoint`: (the URL as shown, where the key comes from) when the endpoint is asked about;
    `relax`: the relaxing settings asked about; `fallback`: the endpoint a no falls back to."""
    headline = "relaxes what s08 may do without asking you" if set(relax) - {"MODEL_ID"} else \
        "chooses the model s08 uses"
    lines = [("This folder's .env points s08 at an endpoint you have not agreed to" if endpoint else
              f"This folder's .env {headline}")
             + (f", and {headline}:" if endpoint and relax else ":"),
             f"  folder    {shown(folder, SHOWN_FOLDER_CHARS)}"]
    if endpoint:
        lines += [f"  endpoint  {endpoint[0]}   (ANTHROPIC_BASE_URL in .env)", f"  key       {endpoint[1]}"]
    lines += [f"  {name}={_value(value)}   ({_meaning(name, value)})" for name, value in relax.items()]
    if endpoint:
        lines.append(ENDPOINT_RISK)
    lines.append(WHO_COULD.format(what="it" if not relax or not endpoint and len(relax) == 1 else "them"))
    if endpoint and not relax:
        lines.append(f"Use this endpoint? Yes is remembered for this folder and this URL; no uses {fallback} instead.")
    elif relax and not endpoint:
        lines.append("Use " + ("this setting" if len(relax) == 1 else "these settings") + "? Yes is remembered for "
                     "this folder and these values (a change asks again); no ignores them for this session.")
    else:
        lines.append(f"Use them? Yes is remembered for this folder and these values (a change asks again); no uses "
                     f"{fallback} instead of the endpoint and ignores the other settings for this session.")
    return "\n".join(lines)


def relaxations_ignored(relax: dict[str, str], user_file) -> str:
    """One line for -p and piped input, which cannot ask."""
    names = ", ".join(f"{name}={shown(value, 60)}" for name, value in relax.items())
    return (f"s08: ignoring {names} from this folder's .env: settings that relax approvals, keep files outside "
            f"the workspace or choose the model are used from it only with your consent. To allow them, set them in the environment, "
            f"pass --env-file .env, put them in {user_file}, or run s08 here once in a terminal and answer yes.")


def foreign_log_question(session_id: str, why: str) -> str:
    """The question before resuming a session log s08 did not write here (`why`: session/file.written_elsewhere)."""
    where = shown(why, SHOWN_FOLDER_CHARS + 20)
    return (f"Session {shown(session_id, 60)} was not written in this workspace: {where}. A cloned repository "
            "can ship a .sessions/ log: resuming it sends its whole history to the model as this conversation, "
            "with the messages it records as typed by you, and they may hold instructions you never wrote. "
            "The model it names is not used (/model switches). Resume it?")


def foreign_log_refused(session_id: str, why: str) -> str:
    """The one line -p and piped input show instead of asking."""
    where = shown(why, SHOWN_FOLDER_CHARS + 20)
    return (f"s08: not resuming session {shown(session_id, 60)}: it was not written in this workspace ({where}), "
            "and nobody can be asked here. Resume it once in a terminal and answer yes, or start a new session.")


def after_change(trust: bool, demo_on: bool, demo_stays: bool) -> str:
    """The end of the question about a settings file changed mid-session: `trust`, the new endpoint is
    named by this folder's .env (a yes is the consent, remembered); the demo model may keep answering."""
    text = ""
    if trust:
        text += (f"\nThe new endpoint is named by this folder's .env. {ENDPOINT_RISK} Yes is remembered for this "
                 "folder and this URL.")
    if demo_on:
        text += "\nThe demo model keeps answering this session (--demo or DEMO=on)."
    elif demo_stays:
        text += "\nThe demo model keeps answering until a key is configured."
    return text

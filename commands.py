"""The slash commands: each registers itself like a tool does (tools/registry.py), with a name, one
line of help and a handler `fn(app, arg)`.

    @command("/name", "what it does")      one entry in COMMANDS; /help and Tab completion list it
    def _name(app, arg): ...               returns None, or UNUSABLE when it needs the REPL

    dispatch(app, text)   one line of input: QUIT, a command (None, UNKNOWN or UNUSABLE), or a turn
                          (its TurnResult). "//etc" sends "/etc" to the model; "!cmd" runs the
                          person's own shell command (loop/own_command.py); a /name that is not
                          s08's own may be a custom command (prompts/commands.py): its prompt is a turn.

Commands say everything through events (app.emit); the UI decides how it looks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from loop.model_choice import pick_model
from session.undo import resume_other, rewind, undo
from compaction.tokens import breakdown
from events import (CleanReport, ContextReport, CostReport, HelpReport, HooksReport, McpReport, MemoryReport, Notice,
                    Question, ShowToolResult, TaskList, TimelineReport)
from prompts.commands import CustomCommand, find_commands

QUIT = "quit"
UNKNOWN = "unknown command"
UNUSABLE = "command needs the REPL"      # a command -p and piped input cannot run (nobody to ask): fails the run
EXIT_WORDS = {"exit", "q", "quit"}
QUIT_COMMANDS = ("/quit", "/exit")


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    handler: Callable[[Any, str], Any]


COMMANDS: dict[str, Command] = {}


def command(name: str, help_text: str):
    """Register `fn(app, arg)` as the slash command `name` (in /help in the order of registration)."""
    def register(fn):
        COMMANDS[name] = Command(name, help_text, fn)
        return fn
    return register


def custom_commands(app) -> dict[str, CustomCommand]:
    """The custom commands (prompts/commands.py) as the folders hold them now; built-in names win."""
    workspace = getattr(app, "workspace", None)
    if workspace is None:
        return {}
    return {n: c for n, c in find_commands(workspace, getattr(app, "environ", None)).items() if n not in COMMANDS}


def help_entries(app=None) -> list[tuple[str, str]]:
    """(name, help text) of every command, in order, then the custom ones: for /help and the REPL's completion."""
    return [(c.name, c.help) for c in COMMANDS.values()] + [(c.name, c.help()) for c in custom_commands(app).values()]


def run_custom(app, found: CustomCommand, arg: str):
    """A custom command: its prompt, sent as the person's message (the same approvals for what follows)."""
    ignored = [f"{key}: {value}" for key, value in (("model", found.model), ("allowed-tools", found.allowed_tools))
               if value]
    if ignored:
        app.emit(Notice(f"[{found.name}: not used: {'; '.join(ignored)[:120]} — a command is a prompt; approvals and "
                        "the model stay as they are]", "info"))
    return app.turn(found.expand(arg))


def dispatch(app, text: str, message: bool = False):
    """One line of input: QUIT, a slash command (returns None, or UNKNOWN / UNUSABLE), or a turn
    (returns its result). `message`: the input is text for the model whatever it starts with (a paste
    the REPL folded: its `!` or `/` was not typed by the person as a command)."""
    text = text.strip()
    if not text:
        return None
    if message:
        return app.turn(text)
    word, _, arg = text.partition(" ")
    if text.lower() in EXIT_WORDS or word in QUIT_COMMANDS:
        return QUIT
    if word.startswith("//"):
        return app.turn(text[1:])                    # "//etc" sends "/etc"
    if text.startswith("!"):
        from loop.own_command import run_own_command
        return run_own_command(app, text[1:])     # the person's own command: no model call (a TurnResult)
    if word.startswith("/") and "/" not in word[1:]:
        found = COMMANDS.get(word)
        custom = custom_commands(app).get(word) if found is None else None
        if custom is not None:
            return run_custom(app, custom, arg.strip())
        if found is None:
            app.emit(Notice(f"unknown command {word}; /help lists the commands (start with // to send "
                            "a message that begins with /)", "warning"))
            return UNKNOWN
        return UNUSABLE if found.handler(app, arg.strip()) == UNUSABLE else None
    return app.turn(text)


# ---- the commands, in /help's order ---------------------------------------------------------------
@command("/help", "show commands and keys")
def _help(app, _arg: str) -> None:
    app.emit(HelpReport(help_entries(app)))


@command("/clear", "start a new, empty conversation")
def _clear(app, _arg: str) -> None:
    app.clear()


@command("/retry", "send the conversation again (after an error or Ctrl-C)")
def _retry(app, _arg: str) -> None:
    app.retry()


@command("/compact", "summarize the conversation now: /compact [focus]")
def _compact(app, arg: str) -> None:
    app.compact(arg)


@command("/plan", "plan mode on or off: only reading, the model plans (/plan on|off; Shift-Tab cycles the modes)")
def _plan(app, arg: str) -> None:
    app.set_plan_mode({"on": True, "off": False}.get(arg.lower(), app.approvals.mode != "plan"))


@command("/context", "how full the context is, by part")
def _context(app, _arg: str) -> None:
    agent = app.agent
    agent.refresh_instructions()
    parts = breakdown(app.messages, agent.base_system, agent.tools, agent.instructions.prompt_section(),
                      agent.skills.prompt_section() if agent.skills else "")
    total = agent.compactor.measure(app.messages) if app.messages else sum(parts.values())
    if hasattr(app, "probe_window"):
        app.probe_window()                  # the server's word on the window, if it came in meanwhile
    window = agent.compactor.window
    sandbox = getattr(app, "sandbox", None)
    if hasattr(app, "start_servers"):
        app.start_servers()                 # the tools the next request sends include theirs
    servers = getattr(app, "servers", None)
    mcp, note = {}, ""
    if servers is not None and servers.tools:
        mcp, report = servers.schema_tokens(), servers.report()
        note = (f"deferred: all schemas would take {report.total_tokens:,} tokens, over MCP_SCHEMA_BUDGET "
                f"{report.budget:,}; {report.loaded} loaded, {report.rewrites} cache rewrites") if report.deferred \
            else f"within MCP_SCHEMA_BUDGET {report.budget:,}"
    app.emit(ContextReport(parts, total, window.limit, window.tokens, window.source,
                           sandbox.status() if sandbox is not None else "", agent.compactor.endpoint.usage_doubt,
                           agent.compactor.background.describe() if app.settings.background_compact == "on" else "",
                           mcp, note,
                           app.delegator.context_line() if getattr(app, "delegator", None) else "",
                           window.shrunk))


@command("/mcp", "the MCP servers: their state, tools and what their schemas cost (docs/mcp.md)")
def _mcp(app, _arg: str) -> None:
    app.start_servers()
    app.emit(McpReport(app.servers.report()))


@command("/hooks", "the hooks in use, from which settings file, and those waiting for your agreement")
def _hooks(app, _arg: str) -> None:
    hooks = app.hooks
    app.emit(HooksReport(hooks.listing(), list(hooks.problems), hooks.changed_since_start()))


@command("/cost", "tokens and estimated cost of this session (and of the whole run)")
def _cost(app, _arg: str) -> None:
    ledger = app.ledger
    run = ledger.run if ledger.run.calls != ledger.session.calls else None
    app.emit(CostReport(app.settings.model_id, app.price, ledger.session, run,
                        ledger.children if ledger.children.calls else None))


@command("/tasks", "the sub-agents of this session (task tool): status, cost and their steps")
def _tasks(app, _arg: str) -> None:
    delegator = getattr(app, "delegator", None)
    app.emit(TaskList(list(delegator.children) if delegator is not None else []))


@command("/last", "the whole result of the latest tool call, in a pager")
def _last(app, _arg: str) -> None:
    app.emit(ShowToolResult(app.last_tool))


@command("/memory", "what s08 keeps through every compaction: AGENTS.md, your messages, the work ledger")
def _memory(app, _arg: str) -> None:
    agent, keep = app.agent, app.continuity
    agent.refresh_instructions()
    app.emit(MemoryReport(agent.instructions, [e.text for e in keep.typed.entries], keep.user_budget,
                          keep.ledger, keep.ledger.render(keep.ledger_budget), keep.ledger_budget))


@command("/model", "choose the model: /model NAME (a list of the known ones without NAME)")
def _model(app, arg: str):
    return pick_model(app, arg)


@command("/resume", "go on with another saved session: /resume [ID] (a list without ID)")
def _resume(app, arg: str):
    return resume_other(app, arg)


@command("/undo", "put back the files the last turn changed (file tools only, not shell commands)")
def _undo(app, _arg: str) -> None:
    undo(app)


@command("/rewind", "back to before one of your messages, files (and conversation): /rewind [N [files|all]]")
def _rewind(app, arg: str):
    return rewind(app, arg)


@command("/timeline", "this session's context per request and its compactions: /timeline [N] shows event N")
def _timeline(app, arg: str) -> None:
    from session.timeline import event_detail, read_timeline
    log = app.messages.log
    if log is None or not log.path.exists():
        app.emit(Notice("nothing recorded in this session yet", "info"))
        return
    timeline = read_timeline(log.path, app.agent.compactor.limit)
    if not arg:
        app.emit(TimelineReport(timeline))
    elif arg.isdigit() and 1 <= int(arg) <= len(timeline.events):
        app.emit(TimelineReport(timeline, event_detail(timeline, app.workspace, int(arg))))
    else:
        app.emit(Notice(f"/timeline N takes an event number from 1 to {len(timeline.events)}" if timeline.events
                        else "this session has no compaction events yet", "warning"))


@command("/clean", "what s08's folders take; remove sessions older than KEEP_DAYS: /clean [--yes]")
def _clean(app, arg: str):
    from session.clean import plan, remove, survey
    log = app.messages.log
    chosen = plan(survey(app.workspace, log.id if log is not None else None), app.settings.keep_days)
    app.emit(CleanReport(chosen))
    if not chosen.count:
        return None
    if arg not in ("--yes", "-y"):
        if app.ask is None:
            app.emit(Notice("nothing removed: /clean --yes removes them without asking", "warning"))
            return UNUSABLE
        answer = app.ask(Question(f"Remove {chosen.count} file(s)?"))
        if (answer or "").strip().lower() not in ("y", "yes"):
            app.emit(Notice("nothing removed", "info"))
            return None
    app.emit(CleanReport(chosen, remove(chosen)))
    return None


@command("/login", "check an API key and store it in your user-level settings file")
def _login(app, _arg: str):
    return app.login()


@command("/logout", "remove the stored API key")
def _logout(app, _arg: str) -> None:
    app.logout()


@command("/quit", "leave s08")
def _quit(_app, _arg: str) -> None:
    """Never reached through dispatch (which returns QUIT first); listed for /help and completion."""

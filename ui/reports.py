"""Reports made of numbers: the status line after a turn, /context's bar and /cost's table."""

from __future__ import annotations

from rich.text import Text

from compaction.tokens import estimate_text
from session.costs import READ_FACTOR, WRITE_1H_FACTOR, WRITE_FACTOR
from events import HooksReport, ContextReport, CostReport, HelpReport, McpReport, MemoryReport, TurnStatus
from .sanitize import safe, safe_line

PART_STYLES = {"system": "blue", "instructions": "magenta", "skills": "bright_magenta", "tools": "cyan", "messages": "green",
               "tool results": "yellow"}
BAR_WIDTH = 60


def plural(count: int, word: str, many: str = "") -> str:
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def status_line(event: TurnStatus, width: int | None = None) -> str:
    """One line after a turn; on a narrow terminal the longer wordings give way to shorter ones, so it
    never wraps (`width`: the terminal's, None for no limit)."""
    rate = "—" if event.hit_rate is None else f"{event.hit_rate:.0%}"
    context = f"context {event.context:,}/{event.limit:,}"
    cost = "unknown (MODEL_PRICE)" if event.cost is None else f"${event.cost:.4f}"
    mode = safe_line(event.mode)
    if event.demo:
        forms = [["offline demo model (scripted replies; /login for a real one)", context, f"turn cache hit {rate}"],
                 ["demo model (/login for a real one)", context, f"cache hit {rate}"],
                 ["demo model", context]]
    else:
        hit = "cache off" if not event.caching else f"turn cache hit {rate}"
        forms = [[context, hit, f"session {cost}"], [context, hit.replace("turn ", ""), cost],
                 [context, cost]]
    forms = [form + [f"approvals {mode}"] for form in forms] if mode else forms
    forms = [form + [safe_line(event.preparing)] for form in forms] if event.preparing else forms
    lines = [" · ".join(form) for form in forms]
    return next((line for line in lines if width is None or len(line) <= width), lines[-1])


def context_report(event: ContextReport, width: int = BAR_WIDTH) -> Text:
    """A bar of the prompt by part against the window, with | at CONTEXT_LIMIT, and a legend. System
    and tools are estimates; the conversation's parts are scaled so the whole is the measured total."""
    width = max(10, min(BAR_WIDTH, width))
    parts = {name: tokens for name, tokens in event.parts.items() if tokens or name not in ("instructions", "skills")}
    fixed = sum(tokens for name, tokens in parts.items() if name not in ("messages", "tool results"))
    talk = parts["messages"] + parts["tool results"]
    scale = max(0, event.total - fixed) / talk if talk else 0
    parts["messages"], parts["tool results"] = round(parts["messages"] * scale), round(parts["tool results"] * scale)
    span = min(event.window, max(2 * event.limit, event.total))    # enough room to see the limit clearly
    out = Text(f"context {event.total:,} tokens · compaction at {event.limit:,} "
               f"({'75% of the window' if event.window_shrunk else 'CONTEXT_LIMIT'}) · window {event.window:,} "
               f"({safe_line(event.window_source, 80)}) · the bar spans {span:,}\n")
    bar, used, running = Text("["), 0, 0
    for name, tokens in parts.items():
        running += tokens
        end = min(width, round(running / span * width))     # cumulative, so the cells add up to the total
        bar.append("█" * (end - used), style=PART_STYLES[name])
        used = max(used, end)
    limit_at = min(width - 1, round(event.limit / span * width))
    for cell in range(used, width):
        bar.append("|" if cell == limit_at else "·", style="red" if cell == limit_at else "dim")
    out.append(bar.append("]\n"))
    for name, tokens in parts.items():
        out.append("■ ", style=PART_STYLES[name]).append(f"{name} {tokens:,}  ")
    if event.total > event.limit:
        out.append("· over CONTEXT_LIMIT: compaction runs before the next call", style="yellow")
    else:
        out.append(f"· {event.limit - event.total:,} free before compaction", style="dim")
    if event.mcp:
        shares = ", ".join(f"{safe_line(name, 40)} {tokens:,}" for name, tokens in event.mcp.items())
        out.append(f"\nMCP schemas (in tools): {shares}", style="dim")
        if event.mcp_note:
            out.append(f" · {safe_line(event.mcp_note)}", style="dim")
    if event.summary:
        out.append(f"\nsummary prepared in the background: {safe_line(event.summary)}", style="dim")
    if event.tasks:
        out.append(f"\n{safe_line(event.tasks)}", style="dim")
    if event.sandbox:
        out.append("\n").append(safe_line(event.sandbox), style="yellow" if "every command asks" in event.sandbox
                                 else "dim")
    if event.usage_doubt:
        out.append("\n").append(safe_line(event.usage_doubt), style="yellow")
    return out


def _per_million(price) -> str:
    if price is None:
        return "price unknown: set MODEL_PRICE=input,output (USD per million tokens)"
    if price == (0.0, 0.0):
        return "free"
    return f"${price[0]:g} / ${price[1]:g} per million input / output tokens"


def _usd(value: float | None) -> str:
    return "?" if value is None else f"{value:.4f}"


def cost_report(event: CostReport) -> Text:
    """The session's tokens, what they bill as (input-token equivalents) and what they cost — each call at
    the price of the model that served it; then the whole run's total when it holds more than the session."""
    t = event.tally
    models = t.models or {event.model: [0, event.price]}
    if len(models) == 1:
        [(model, (_calls, price))] = models.items()
        out = Text(f"session cost — {safe(model)} ({_per_million(price)})\n", style="bold")
    else:
        out = Text("session cost — each call at the price of the model that answered it\n", style="bold")
        for model, (calls, price) in models.items():
            out.append(f"  {safe(model)}: {plural(calls, 'call')} ({_per_million(price)})\n")
    out.append(f"{'':16}{'tokens':>12}{'billed as':>14}{'USD':>10}\n", style="dim")
    write_billed = (t.writes - t.writes_1h) * WRITE_FACTOR + t.writes_1h * WRITE_1H_FACTOR
    rows = [("uncached input", t.uncached, t.uncached, "uncached"), ("cache writes", t.writes, write_billed, "writes"),
            ("cache reads", t.reads, t.reads * READ_FACTOR, "reads"), ("output", t.output, None, "output")]
    for name, tokens, billed, part in rows:
        usd = None if t.unpriced else t.usd[part]
        out.append(f"{name:16}{tokens:>12,}{'' if billed is None else f'{billed:,.0f}':>14}{_usd(usd):>10}\n")
    out.append(f"{'total':16}{'':>12}{t.billed_input:>14,.0f}{_usd(t.cost):>10}\n", style="bold")
    hit = "—" if t.hit_rate is None else f"{t.hit_rate:.0%}"
    summaries = plural(t.summary_calls, "summary", "summaries")
    out.append(f"{plural(t.calls, 'model call')} ({summaries}) · cache hit rate {hit}", style="dim")
    if event.children is not None:
        c = event.children
        out.append(f"\nof which sub-agents (task tool): {plural(c.calls, 'model call')} · {c.prompt_tokens + c.output:,} "
                   f"tokens · {_usd(c.cost)}; the main context: {plural(t.calls - c.calls, 'model call')} · "
                   f"{_usd(None if t.cost is None or c.cost is None else t.cost - c.cost)}", style="dim")
    if event.run is not None:
        out.append(f"\nthis run, all its sessions: {plural(event.run.calls, 'model call')} · "
                   f"{'?' if event.run.cost is None else f'${event.run.cost:.4f}'}", style="bold")
    return out


def memory_report(event: MemoryReport) -> Text:
    """What survives every compaction: the project instructions, the person's messages, the ledger."""
    ins = event.instructions
    out = Text("What s08 keeps through every compaction\n", style="bold")
    if ins.path is None:
        out.append("project instructions: none (put standing rules in AGENTS.md in the workspace root)\n")
    else:
        out.append(f"project instructions: {ins.path.name} ({ins.size:,} bytes, ~{estimate_text(ins.text):,} tokens)"
                   " in the system prompt, re-read when it changes\n")
        if ins.warning:
            out.append(f"  {safe(ins.warning)}\n", style="yellow")
    tokens = sum(estimate_text(t) for t in event.typed)
    out.append(f"your messages: {len(event.typed)} ({plural(tokens, 'token')}), kept verbatim up to "
               f"{event.typed_budget:,} tokens (newest first; older ones shortened)\n")
    ledger = event.ledger
    outputs = sum(w == "output" for w, _ in ledger.saved.values())
    out.append(f"work ledger: {plural(len(ledger.files), 'file')}, {plural(ledger.command_count, 'command')}, "
               f"{plural(len(ledger.transcripts()), 'transcript')}, {plural(outputs, 'saved output')} "
               f"(~{estimate_text(event.ledger_text):,} of {event.ledger_budget:,} tokens)")
    if event.ledger_text:
        out.append("\n" + safe(event.ledger_text), style="dim")
    return out


HELP_KEYS = ("  Enter sends · Alt-Enter / Esc Enter newline · ↑ history · Tab completes commands and @paths · Esc or Ctrl-C "
             "interrupts the turn (Ctrl-C at the prompt clears the line) · Shift-Tab cycles the approval mode "
             "(default → auto_edit → plan, where nothing changes) · Ctrl-O the sub-agents' steps · Ctrl-D exits")
HELP_HABITS = ("  !cmd runs your own shell command (the model sees it with your next message) · @path attaches a "
               "workspace file (Tab completes it) · /undo and /rewind cover write_file / edit_file, not shell "
               "commands")


def hooks_report(event: HooksReport) -> Text:
    """/hooks: what runs, from where; what waits for the person's agreement; what could not be used."""
    out = Text("Hooks", style="bold")
    if not event.rows:
        out.append("\n  none (the \"hooks\" key of ~/.config/s08/settings.json or .s08/settings.json)")
    for state, hook, where in event.rows:
        out.append("\n  ").append(f"{state:<11}", style="green" if state == "active" else "yellow")
        out.append(f" {safe_line(hook)}").append(f"   {safe_line(where)}", style="dim")
    for problem in event.problems:
        out.append("\n  ").append(safe_line(problem), style="yellow")
    for path in event.changed:
        out.append("\n  ").append(f"{safe_line(path)} changed since this session started: its hooks are read "
                                   "again in the next session", style="yellow")
    return out


def help_report(event: HelpReport) -> Text:
    """/help: the commands (as registered in commands.py), the exit words, the keys."""
    out = Text("Commands", style="bold")
    rows = [(safe_line(name), safe_line(help_text)) for name, help_text in event.entries]
    rows.append(("exit, q", "leave (as do Ctrl-D and /quit)"))
    width = max(10, *(len(name) for name, _ in rows))
    for name, help_text in rows:
        out.append("\n").append(f"  {name:<{width}}", style="cyan").append(f" {help_text}")
    out.append("\n").append("Keys", style="bold").append(HELP_KEYS)
    return out.append("\n").append("Typed", style="bold").append(HELP_HABITS)


def mcp_report(event: McpReport) -> Text:
    """/mcp: each server with its state, its tools and what their schemas cost; then the budget."""
    r = event.report
    if not r.servers:
        return Text("no MCP servers configured: `s08 mcp add NAME -- COMMAND ARGS…`, or a .mcp.json in the "
                    "workspace (docs/mcp.md)")
    out = Text("MCP servers\n", style="bold")
    for s in r.servers:
        style = {"running": "green", "failed": "red"}.get(s.state, "yellow")
        out.append(f"  {safe_line(s.name, 40)}", style="bold").append(f"  {s.scope}  ")
        out.append(safe_line(s.state, 40), style=style)
        if s.state == "running":
            out.append(f"  {s.tools} tool{'s' * (s.tools != 1)}, {s.tokens:,} tokens of schemas")
        out.append(f"\n    {safe_line(s.shown, 100)}", style="dim")
        if s.problem:
            out.append(f"\n    {safe_line(s.problem, 200)}", style="red")
        if s.stderr:
            out.append(f"\n    stderr: {safe_line(s.stderr, 200)}", style="dim")
        out.append("\n")
    how = (f"deferred: over MCP_SCHEMA_BUDGET {r.budget:,}, only names are sent; {r.loaded} loaded by the model, "
           f"{r.rewrites} cache rewrite{'s' * (r.rewrites != 1)}") if r.deferred else \
        f"all sent in full (within MCP_SCHEMA_BUDGET {r.budget:,})"
    out.append(f"schemas {r.total_tokens:,} tokens in all · {how}", style="dim")
    for line in r.problems[:10]:
        out.append(f"\n{safe_line(line, 200)}", style="yellow")
    return out

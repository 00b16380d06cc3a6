"""`!command`: the person's own shell command, run at once — no model call, no approval question.

    run_own_command(app, command)

The person typed it, so nothing asks; the accident guard of the bash tool (tools/bash_guard.py:
`rm -rf /`, `mkfs`, fork bombs, …) still refuses the few catastrophic commands, with a line saying so
(a slip of the keyboard is as likely here as anywhere; a person who means it has their own shell).
It runs like a bash command the person approved (the workspace as its folder, no key in its environment,
BASH_TIMEOUT, MAX_PROCESSES, the whole process group killed by Esc / Ctrl-C; in the kernel sandbox only
with SANDBOX=workspace, tools/sandbox.py) and shows with the same tool view
(a `●` line, the live tail, the exit code; /last shows it all).

Then it enters the context as what the person ran and saw, so the model knows it at the next turn:
a user text `[you ran] $ cmd` with the (redacted) output and how it ended — an output over the
persist threshold goes to `.task_outputs/tool-results/` and the text keeps its head, tail and path,
as tool_result_budget does for a tool's. The work ledger lists the command ("you ran it").
"""

from __future__ import annotations

import secrets
import time

from events import Notice, ToolFinished, ToolOutput, ToolStarted
from loop.agent_loop import TurnResult
from messages import add_user_text, close_dangling_tool_uses
from storage import TASK_OUTPUTS_DIR, persisted_block, relative, write_output
from tools.bash import MAX_PROCESSES, CommandInterrupted, run_command
from tools.bash_guard import dangerous_reason
from tools.sandbox import APPROVED, Sandbox

YOU_RAN = "[you ran] $ "
COMMAND_CHARS = 160


def _bounded(app, text: str) -> str:
    """The output as it enters the context: whole, or (over the persist threshold) saved with a preview."""
    agent = app.agent
    threshold = agent.compactor.window.persist_threshold(app.settings.persist_threshold)
    if len(text) <= threshold:
        return text
    try:
        path = write_output(app.workspace, "you-ran", text)
    except OSError:
        half = app.settings.preview_chars // 2
        return text[:half] + f"\n[… {len(text) - 2 * half:,} chars left out; the disk refused to save them …]\n" \
            + text[-half:]
    shown = relative(app.workspace, path)
    agent.continuity.saved(shown, "output")
    half = app.settings.preview_chars // 2
    return persisted_block(shown, len(text), text.count("\n") + 1, text[:half], text[-half:])


def run_own_command(app, command: str) -> TurnResult:
    """Run it, show it, put it in the context. The result's text is the output (what `-p '!cmd'` prints);
    ok when the command exited 0."""
    command = command.strip()
    if not command:
        app.emit(Notice("! runs a shell command of yours: !ls -la (the model sees what it printed)", "warning"))
        return TurnResult(ok=False, error="no command")
    reason = dangerous_reason(command)
    if reason:
        app.emit(Notice(f"not run: {reason} — s08's accident guard refuses this even from you; run it in "
                        "your own shell if you mean it", "error"))
        return TurnResult(ok=False, error="refused")
    agent, call_id = app.agent, f"you_{secrets.token_hex(6)}"
    ctx, started = agent.tool_ctx, time.monotonic()
    app.emit(ToolStarted(call_id, "bash", {"command": command}))
    meta: dict = {}
    sandbox = getattr(ctx, "sandbox", None) or Sandbox.for_session(app.settings)
    try:        # as a command you approved: outside the sandbox, unless SANDBOX=workspace puts those in it
        captured = run_command(command, app.workspace, app.settings.bash_timeout, app.workspace / TASK_OUTPUTS_DIR,
                               ctx.secrets, ctx.jobs, lambda text: app.emit(ToolOutput(call_id, ctx.redact(text))),
                               sandbox, APPROVED, sandbox.max_processes or MAX_PROCESSES)
        text, is_error = captured.text, captured.timed_out
        meta = {"exit_code": captured.exit_code, "timed_out": captured.timed_out,
                "timeout": app.settings.bash_timeout, "bytes": captured.total_bytes, "saved": captured.saved}
        end = (f"timed out after {app.settings.bash_timeout:g}s" if captured.timed_out
               else f"exit {captured.exit_code}" if (captured.exit_code or 0) >= 0
               else f"killed by signal {-(captured.exit_code or 0)}")
    except CommandInterrupted as exc:
        text, is_error, end = exc.partial + "\n[interrupted by you]", True, "interrupted"
        meta = {"interrupted": True}
    content = ctx.redact(text)
    app.emit(ToolFinished(call_id, "bash", content, is_error, time.monotonic() - started, meta,
                          {"command": command}))
    messages = app.messages
    close_dangling_tool_uses(messages)
    add_user_text(messages, f"{YOU_RAN}{command}\n{_bounded(app, content)}")
    flat = " ".join(command.split())
    flat = flat if len(flat) <= COMMAND_CHARS else flat[:COMMAND_CHARS - 1] + "…"
    agent.continuity.ledger.record({"k": "cmd", "cmd": flat, "end": f"{end} (you ran it)",
                                    "turn": agent.continuity.turn})
    if captured_saved := meta.get("saved"):
        agent.continuity.saved(captured_saved, "output")
    return TurnResult(text=content, ok=meta.get("exit_code") == 0, interrupted=bool(meta.get("interrupted")),
                      error="" if meta.get("exit_code") == 0 else end)

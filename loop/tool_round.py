"""One round of tool calls: each approved (which may ask the person), run in order, its result in the
history as soon as it exists.

    run_tools(messages, calls, incomplete, agent, cut_off)

The results go into one user message that grows (and into the session log with it); what the person
typed when saying no follows the results, as their own words. On Ctrl-C the rest are answered as
interrupted (the call that was running) or not run (the one being asked about, and those after it),
so the history stays valid for the API. A call whose input was not a JSON object, or that names no tool
s08 has (loop/tool_names.py), is answered with an error at once, unrun and unasked.
"""

from __future__ import annotations

import time

from approvals.policy import PLAN_REFUSAL, Answer, Refusal
from events import Notice, ToolFinished, ToolOutput, ToolStarted
from messages import INTERRUPTED_RESULT, NOT_STARTED_RESULT, clean_text, tool_result
from tools import ToolResult, run_tool
from loop.tool_names import unknown_tool
from tools.preview import planned_change, target_path


def _not_run(limit, cut_off: bool) -> str:
    """The result of a call whose input never completed."""
    if cut_off:
        return (f"This call was cut off by the output limit (MAX_TOKENS={limit}) before its input was complete, "
                "so it was not run. Retry with smaller pieces (e.g. write a large file in parts).")
    return "The input of this call was not a valid JSON object (or was nested too deeply), so it was not run."


def _declined(call: dict, refusal, agent, add, typed: list[dict]) -> None:
    """The person (or the policy) said no: the refusal is the result; their words follow the results."""
    if refusal.notice:
        agent.emit(Notice(refusal.notice, "warning"))
    reason = clean_text(refusal.reason).strip()
    if reason:
        typed.append({"type": "text", "text": reason})
    content = agent.tool_ctx.redact(refusal.result)
    add(tool_result(call["id"], content, True), call)
    if reason:            # the person's own words: kept through every compaction, like a message
        agent.continuity.typed_message(reason)
    agent.emit(ToolFinished(call["id"], call["name"], content, True, 0.0, {"declined": refusal.shown},
                            call.get("input")))


def _approve(call: dict, agent, permission: str | None = None):
    """(refusal or None, the planned file change, how it runs): the approval, which may ask the person.
    `permission`: a PreToolUse hook's answer. "allow" answers the question the policy would ask (not one
    about a file that configures commands, and never a refusal: plan mode, the bash guard, the sandbox and
    the file tools' own refusals stay); "ask" asks the person even where the policy would not."""
    name, args = call["name"], call.get("input")
    change = planned_change(agent.tool_ctx, name, args)
    where = target_path(agent.tool_ctx, name, args)
    ask = agent.ask
    wanted = agent.approvals.needs_approval(name, args, where or getattr(change, "path", "") or "") \
        if permission == "allow" else None
    if permission == "allow" and (wanted is None or not wanted.sensitive):   # a file that configures
        def ask(_request):                                                  # commands asks the person always
            return Answer(True)
    asks = permission == "ask" and name in ("bash", "write_file", "edit_file")
    refusal, run_as = agent.approvals.decide(name, args, change, None if asks else ask, where)
    if asks and (refusal is None or refusal.result != PLAN_REFUSAL):
        refusal, run_as = agent.approvals.ask_anyway(name, args, change, agent.ask, "a PreToolUse hook asked"), ""
    return refusal, change, run_as


def _hook_refusal(name: str, reason: str) -> Refusal:
    return Refusal(f"Not run: a PreToolUse hook blocked this {name} call." + (f" Its reason: {reason}" if reason
                                                                              else ""), shown="not run: a hook blocked it")


def _run_one(call: dict, agent, run_as: str = "") -> ToolResult:
    """Run one approved call (`run_as`: "read-only" puts a command in the read-only sandbox); its output
    streams out as ToolOutput events."""
    agent.tool_ctx.progress = lambda text: agent.emit(ToolOutput(call["id"], agent.tool_ctx.redact(text)))
    agent.tool_ctx.run_as = run_as
    try:
        result = run_tool(call["name"], call.get("input"), agent.tool_ctx)
    finally:
        agent.tool_ctx.progress, agent.tool_ctx.run_as = None, ""
    if result.meta.get("sandbox_refused") == "read-only":      # the next identical call asks the person
        agent.approvals.sandbox_refused(call["input"]["command"])
    return result


def run_tools(messages: list[dict], calls: list[dict], incomplete: set, agent, cut_off: bool = True) -> None:
    """Approve and execute calls in order. Each result enters the history (and the session log) as soon
    as it exists, in one user message that grows; what the person typed when saying no follows the
    results in that message, as their own words. On Ctrl-C the rest are answered as interrupted (the
    call that was running) or not run (the one being asked about, and those after it)."""
    results: list[dict] = []
    typed: list[dict] = []

    def add(result: dict, call: dict, meta: dict | None = None) -> None:
        results.append(result)
        text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
        agent.continuity.tool_done(call, text, bool(result.get("is_error")), meta)
        message = {"role": "user", "content": list(results) + typed}
        if len(results) == 1:
            messages.append(message)
        else:
            messages[-1] = message

    agent.tool_ctx.round_calls = [dict(c) for c in calls if c["id"] not in incomplete]     # the task calls of one reply start together
    limit = getattr(agent.settings, "max_tokens", "?")
    running = asking = None
    started = time.monotonic()
    try:
        for call in calls:
            if call["id"] in incomplete:
                add(tool_result(call["id"], _not_run(limit, cut_off), True), call)
                if not cut_off:            # (a cut-off one is said with the cut)
                    agent.emit(Notice(f"[the model's {call['name']} call had input that is not a JSON object; "
                                      "it was not run and the model was told]", "warning"))
                continue
            agent.emit(ToolStarted(call["id"], call["name"], call.get("input")))
            unknown = unknown_tool(call["name"], agent)
            if unknown is not None:           # asks nobody, runs no hook: there is nothing to run
                add(tool_result(call["id"], unknown, True), call)
                agent.emit(ToolFinished(call["id"], call["name"], unknown, True, 0.0, {"unknown": True},
                                        call.get("input")))
                continue
            asking = call
            pre = agent.hooks.pre_tool(call) if agent.hooks else None
            if pre is not None and (pre.blocked or pre.permission == "deny" or pre.stop is not None):
                if pre.stop is not None:
                    agent.hook_stop = pre.stop
                _declined(call, _hook_refusal(call["name"], pre.reason or (pre.stop or "")), agent, add, typed)
                asking = None
                continue
            refusal, change, run_as = _approve(call, agent, pre.permission if pre is not None else None)
            asking = None
            if refusal is not None:
                _declined(call, refusal, agent, add, typed)
                continue
            running, started = call, time.monotonic()      # the time shown is the tool's, not the question's
            kept = agent.checkpoints.before(call["name"], call.get("input"), agent.continuity.turn) \
                if agent.checkpoints is not None else None      # what the file was, for /undo (session/checkpoints.py)
            result = _run_one(call, agent, run_as)
            if not result.is_error and agent.checkpoints is not None:
                agent.checkpoints.commit(kept)
            if agent.hooks:      # its hooks' words to the model (a formatter's, a check's) follow the output
                said, stop = agent.hooks.post_tool(call, result.content, result.is_error)
                result.content += said
                agent.hook_stop = stop if stop is not None else agent.hook_stop
            content = agent.tool_ctx.redact(result.content)     # the one point results enter the history
            block = tool_result(call["id"], content, result.is_error)
            if result.images:                                   # an MCP tool's images follow its text
                block["content"] = [{"type": "text", "text": block["content"]}] + result.images
            add(block, call, result.meta)
            running = None
            agent.emit(ToolFinished(call["id"], call["name"], content, result.is_error, time.monotonic() - started,
                                    {**result.meta, "change": change}, call.get("input")))
    except KeyboardInterrupt as exc:
        partial, stopped = agent.tool_ctx.redact(getattr(exc, "partial", "")), len(results)
        if running is not None:
            agent.emit(ToolFinished(running["id"], running["name"], partial, True, time.monotonic() - started,
                                    {"interrupted": True}, running.get("input")))
        elif asking is not None:         # stopped at the question: it never started
            agent.emit(ToolFinished(asking["id"], asking["name"], NOT_STARTED_RESULT, True, 0.0,
                                    {"declined": "not run: interrupted at the question"}, asking.get("input")))
        for call in calls[stopped:]:
            if running is not None and call is calls[stopped]:       # the call that was running
                note = INTERRUPTED_RESULT + (f"\nOutput before the interruption (tail):\n{partial}" if partial else "")
            else:
                note = NOT_STARTED_RESULT
            add(tool_result(call["id"], note, True), call)
        raise

"""The hooks' session events, as functions over an App (hooks/ runs them; the tool and compaction
events fire in loop/tool_round.py and compaction/pipeline.py).

    start(app, source)          the project's hooks asked about once, then SessionStart
                                (startup, resume, clear; "compact" fires from Hooks.post_compact)
    before_prompt(app, text)    UserPromptSubmit: the blocks to add after the message, None if refused
    after_turn(app, result)     Stop: a hook that blocks it sends the model back to work, at most
                                MAX_STOP_HOOK_TURNS times in a row (stop_hook_active says it is again)
    notifying(hooks, approver)  the approver, firing Notification before a question waits for the person
    end(app, reason)            SessionEnd: clear, resume, prompt_input_exit, other
"""

from __future__ import annotations

from events import Notice
from hooks.session import check_prompt
from loop.agent_loop import TurnResult, run_turn
from messages import add_user_text

MAX_STOP_HOOK_TURNS = 3


def start(app, source: str = "") -> None:
    hooks = app.hooks
    hooks.settle(app.ask, app.emit)
    log = app.messages.log
    hooks.session_id = log.id if log is not None else ""
    hooks.transcript = str(log.path) if log is not None else ""
    hooks.permission_mode = app.approvals.mode if app.approvals else "default"
    app.hooks_started = True
    hooks.start(source or ("resume" if app.resumed else "startup"))


def before_prompt(app, text: str | None) -> tuple[str, ...] | None:
    """The context SessionStart left and UserPromptSubmit gives, as text blocks after the message; None
    when a hook refused the prompt (said on screen; nothing is sent)."""
    if not app.hooks_started:
        start(app)
    added = [f"[SessionStart hook context]\n{c}" for c in app.hooks.take_context()]
    if text and text.strip():
        app.hooks.permission_mode = app.approvals.mode
        check = check_prompt(app.hooks, text)
        if check.refused is not None:
            app.emit(Notice(f"[your message was not sent: a UserPromptSubmit hook refused it: {check.refused}]",
                            "warning"))
            return None
        added += [f"[UserPromptSubmit hook context]\n{c}" for c in check.context]
    return tuple(added)


def after_turn(app, result: TurnResult) -> TurnResult:
    for again in range(MAX_STOP_HOOK_TURNS + 1):
        if not result.ok or result.interrupted:
            return result
        out = app.hooks.fire("Stop", {"stop_hook_active": again > 0})
        if not out.blocked or out.stop is not None or again == MAX_STOP_HOOK_TURNS:
            return result
        add_user_text(app.messages, f"[Stop hook] {out.reason}")
        result = run_turn(app.messages, None, app.agent)
    return result


def notifying(hooks, approver):
    if approver is None or not hooks:
        return approver

    def ask(request):
        hooks.fire("Notification", {"message": f"s08 needs your permission to use {request.tool}",
                                    "notification_type": "permission_prompt"}, "permission_prompt")
        return approver(request)
    return ask


def end(app, reason: str = "") -> None:
    if app.hooks_started:
        why = reason or app.end_reason
        app.hooks.fire("SessionEnd", {"reason": why}, why)
        app.hooks_started = False

"""The agent loop: model call → tools → model call … until the model stops asking for tools.

    run_turn(messages, text, agent)
      └─ agent_loop(messages, agent)
           ├─ messages[:] = compactor.prepare(messages)  # the four-layer pipeline, before every call
           ├─ reply = agent.ask_model(messages)          # text streams out as events
           │     ├─ FORM_REFUSED → the same request once in the plain form, kept for the endpoint
           │     ├─ ErrorKind.PROMPT_TOO_LONG → reactive compaction, retry once
           │     └─ silence (no content, 0 output tokens) → never an answer: an overflow where the window
           │        must have been (reactive compaction, retry once), else one error line
           ├─ messages.append(assistant reply)
           │     ├─ max_tokens far below MAX_TOKENS → the window cut it: said so, compacted
           │     └─ text looping on one piece → one copy kept, said so (llm/repetition.py)
           ├─ no tool calls, but one written as text → not run; the model told once (loop/written_calls.py)
           ├─ run every tool_use in order (each one approved first) → one user message of tool_results
           │     (loop/tool_round.py)
           └─ the compact tool asked? → compact now (once per turn), carry on from the summary

`messages` is one list of plain dicts, changed in place. It is valid for the
API after every step, and again after Ctrl-C or an error at any point:
unanswered tool calls get an "interrupted" result, a half-streamed answer is
never appended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from approvals.policy import Approvals
from loop.environment import environment_section
from loop.big_input import fit_input
from compaction import MAX_REACTIVE_RETRIES, Compactor, Continuity, estimate_tokens
from compaction.room import MIN_ANSWER_ROOM, answer_room
from events import Emit, Interrupted, Notice, RequestStarted, ResponseDone, Retrying
from messages import INTERRUPTED_MARK, add_user_text, clean_text, close_dangling_tool_uses, text_of
from messages import blocks as history_blocks
from loop.instructions import changed as instructions_changed, load_instructions
from llm import KNOWN_STOP_REASONS, ErrorKind, LLMError, ModelReply, Provider, Request
from loop.prompt_cache import CacheMarks
from redact import secret_values
from loop.tool_round import run_tools
from loop.written_calls import CORRECTION, written_call
from tools import REGISTRY, ToolContext, tool_schemas

MAX_CUT_OFF_ROUNDS = 3   # consecutive replies cut off by max_tokens inside a tool call before we stop
MAX_PAUSES = 5           # pause_turn continuations in a row before the turn ends
WINDOW_CUT_SHARE = 0.25  # max_tokens with less output than this share of MAX_TOKENS: the window cut it
NOTHING_SAID_TOKENS = 16  # an answer the window cut at this many output tokens or fewer said nothing yet

SYSTEM_PROMPT = """You are s08, a coding agent working in a terminal, in the workspace {workspace}.
Use the tools to read, write and edit files and to run commands there; file paths are relative to the
workspace. Read before you edit. Keep answers short: the person reads them in a terminal.
Very large tool outputs are saved under .task_outputs/ and replaced by a preview with the file's path.
Older parts of a long conversation may be compacted: the message that replaces them holds a summary, a
work ledger s08 keeps from the tool calls (files, commands, transcripts) and the user's own messages
verbatim; the whole conversation is saved under .transcripts/, where read_file or grep finds any detail."""


@dataclass
class Agent:
    """Everything one session needs: settings, the model (a Provider, llm/contract.py; None: no usable
    one), the tools' context, the compactor, where events go, the approval policy and how to ask the
    person (None: nobody can be asked). The prompt-cache marks are the conversation's (loop/prompt_cache.py)."""

    settings: object
    workspace: Path
    provider: Provider | None
    emit: Emit
    tools: list[dict] = field(default_factory=tool_schemas)
    base_system: str = ""
    continuity: Continuity | None = None
    compactor: Compactor | None = None        # an earlier agent's (settings reloaded): what it learned stays
    approvals: Approvals = field(default_factory=Approvals)
    ask: object = None
    secrets: tuple | None = None              # every credential to redact; None: the provider's (or the settings')
    checkpoints: Any = None                   # what files were before the file tools changed them (session/checkpoints.py)
    plain_form: bool = False                  # the endpoint refuses the system prompt as blocks (cache marks)
    remember_plain: Callable[[], str] | None = None   # records that for the endpoint; returns where ("" failed)
    hooks: Any = None                         # the session's hooks (hooks/session.py), or None
    hook_stop: str | None = None              # a hook said "continue": false — the turn ends (its stopReason)
    skills: Any = None                        # the skills found (prompts/skills.py), or None

    def __post_init__(self):
        # s08's own text, then the environment as it is now (loop/environment.py): once per session
        self.base_system = self.base_system or (SYSTEM_PROMPT.format(workspace=self.workspace)
                                                + environment_section(self.workspace))
        self.continuity = self.continuity or Continuity(workspace=self.workspace)
        self.instructions = load_instructions(self.workspace, self._window())
        self.cache_marks = CacheMarks()
        self.builtin_tools = list(self.tools)     # the MCP servers' part follows (sync_tools)
        if self.secrets is None:
            self.secrets = self.provider.secrets() if self.provider is not None else secret_values(self.settings)
        self.tool_ctx = ToolContext(workspace=self.workspace, settings=self.settings, secrets=self.secrets)
        if self.compactor is None:
            self.compactor = Compactor(self.settings, self.workspace, self.summarize, self._emit,
                                       self.system, self.tools, self.continuity)
            self.compactor.background_summarize = self.summarize
        else:
            c = self.compactor
            c.summarize, c.emit, c.system, c.tools, c.continuity = self.summarize, self._emit, self.system, \
                self.tools, self.continuity
            c.background_summarize = self.summarize
            c.use_settings(self.settings)

    def ask_model(self, messages: list[dict], purpose: str = "answer", emit: Emit | None = None,
                  max_tokens: int | None = None) -> ModelReply:
        """One model call with the conversation's system prompt and tools, and its cache marks. An
        endpoint that refuses them (FORM_REFUSED: a gateway in front of a server that takes only
        strings) gets the same request once more in the plain form — the system prompt a string, no
        cache_control — and the plain form from then on, remembered for the endpoint."""
        system, marked, done = self.system, messages, None
        cached = self.settings.caching and not self.plain_form
        if cached:
            system, marked, done = self.cache_marks.mark(system, messages, purpose, self.cache_ttl())
        request = Request(model=self.settings.model_id, system=system, messages=marked, tools=self.tools,
                          max_tokens=self.answer_room(messages, purpose, max_tokens or self.settings.max_tokens),
                          purpose=purpose)
        try:
            reply = self.provider.stream(request, self.emit if emit is None else emit)
        except LLMError as err:
            if err.kind is not ErrorKind.FORM_REFUSED or not cached:
                raise
            return self._ask_plain(request, messages, err, emit)
        if done is not None:
            done()
        return reply

    def sync_tools(self) -> None:
        """The tools list as the MCP servers want it now (a load of deferred schemas appends to it, see
        servers/deferral.py): a new list, the compactor's too, so that it measures what is sent."""
        servers = self.tool_ctx.servers
        wanted = self.builtin_tools + (servers.schemas() if servers is not None else [])
        if wanted != self.tools:
            self.tools = self.compactor.tools = wanted
            self.compactor.meter.forget()

    def answer_room(self, messages: list[dict], purpose: str, wanted: int) -> int:
        """max_tokens for a call: `wanted`, but within a window the endpoint stated, told or showed, or a small
        CONTEXT_WINDOW (many count the answer's room in the window: "you requested 4847 tokens (747 in the
        messages, 4100 in the completion)")."""
        learned = self.compactor.window.known       # stated, told by the server, or learned
        if not learned:           # a told window: the request was cut to keep answer_room free (compaction/room.py)
            window = self.compactor.window.tokens
            if wanted <= answer_room(window, wanted):
                return wanted
            learned = window       # MAX_TOKENS past a quarter of a small window: within what the prompt leaves
        prompt = self.compactor.measure(messages) if purpose == "answer" else \
            estimate_tokens(messages, self.system, self.tools)
        prompt = int(prompt * max(1.1, self.compactor.endpoint.scale)) + 32   # the endpoint counts its own way
        return max(MIN_ANSWER_ROOM, min(wanted, learned - prompt))

    def _ask_plain(self, request: Request, messages: list[dict], err: LLMError, emit: Emit | None) -> ModelReply:
        refused = (f"[the endpoint refused the system prompt as blocks with cache marks ({err.status}); "
                   "sent it plain, without prompt caching")
        self.plain_form = True
        plain = Request(model=request.model, system=self.system, messages=messages, tools=request.tools,
                        max_tokens=request.max_tokens, purpose=request.purpose)
        try:
            reply = self.provider.stream(plain, self.emit if emit is None else emit)
        except LLMError as again:
            self.emit(Notice(f"{refused}, which failed too]", "warning"))
            if again.kind is not ErrorKind.FORM_REFUSED:
                raise
            self.plain_form = False          # the form was not what it refused
            raise LLMError(str(again).split(" (if this endpoint", 1)[0] + " (in the plain form too)",
                           ErrorKind.BAD_REQUEST, again.status) from None
        where = self.remember_plain() if self.remember_plain is not None else ""
        self.emit(Notice(f"{refused}: the plain form is used for this endpoint from now on"
                         + (f", remembered in {where}]" if where else " in this session]"), "warning"))
        return reply

    def cache_ttl(self) -> str:
        """How long the prompt's cache breakpoints live (loop/prompt_cache.py): CACHE_TTL, where auto
        follows how the person pauses (compaction/window.py)."""
        ttl = self.settings.cache_ttl
        return ttl if ttl != "auto" else self.compactor.cache.auto_ttl()

    @property
    def system(self) -> str:
        """The system prompt: s08's own, the project's instructions (AGENTS.md), the skills' names and
        descriptions (prompts/skills.py), if any."""
        return self.base_system + self.instructions.prompt_section() + \
            (self.skills.prompt_section() if self.skills else "")

    def use_skills(self, skills) -> None:
        """The skills found: listed in the system prompt, the skill tool offered, loaded bodies kept."""
        self.skills = skills
        self.tool_ctx.extra["skills"] = skills
        self.tool_ctx.extra["skill_loaded"] = self.continuity.skill_loaded
        if skills and not any(t["name"] == "skill" for t in self.builtin_tools):
            names = {t["name"] for t in self.builtin_tools} | {"skill"}     # in the registry's order
            self.builtin_tools = tool_schemas([n for n in REGISTRY if n in names])
            servers = self.tool_ctx.servers
            self.tools = self.builtin_tools + (servers.schemas() if servers is not None else [])
        self.compactor.system, self.compactor.tools = self.system, self.tools

    def _window(self) -> int | None:
        """The model's window in use (AGENTS.md is cut to a share of a small one: loop/instructions.py)."""
        compactor = getattr(self, "compactor", None)
        return compactor.window.tokens if compactor is not None else getattr(self.settings, "context_window", None)

    def _emit(self, event) -> None:
        self.emit(event)      # late-bound: the UI may swap `emit` after construction

    def begin_turn(self) -> None:
        """A new user turn: project instructions changed on disk apply from now on."""
        self.tool_ctx.compact_request, self.tool_ctx.compact_done = None, False
        self.compactor.begin_turn(self.cache_ttl())
        self.refresh_instructions()

    def refresh_instructions(self) -> None:
        """Read AGENTS.md (or CLAUDE.md) again if it changed on disk, and say so."""
        if not instructions_changed(self.instructions, self.workspace):
            return
        before, self.instructions = self.instructions, load_instructions(self.workspace, self._window())
        self.compactor.system = self.system
        self.compactor.meter.forget()
        name = (self.instructions.path or before.path).name
        self.emit(Notice(f"[{name} {'changed' if self.instructions.path else 'removed'}: the project "
                         "instructions in the system prompt are updated from this turn]", "info"))
        if self.instructions.warning:
            self.emit(Notice(self.instructions.warning, "warning"))

    def summarize(self, request: list[dict], emit: Emit | None = None) -> tuple[str, str | None]:
        """The summary call: the same system prompt and tools as the conversation (and no tool_choice,
        which would invalidate the messages' cache), so the history's prefix is read from cache; the
        instruction asks for no tool calls, and only the reply's text is used. `emit`: where all its
        events go instead (the background job's, compaction/background.py, which keeps what matters)."""
        def quiet(event):     # show the spinner and retries, not the summary's text
            if isinstance(event, (RequestStarted, Retrying, ResponseDone)):
                self.emit(event)
        reply = self.ask_model(request, "summary", quiet if emit is None else emit, self.settings.summary_max_tokens)
        return text_of({"content": reply.content}), reply.stop_reason


@dataclass
class TurnResult:
    text: str = ""            # the final answer's text
    ok: bool = True           # False when the turn ended on an error
    interrupted: bool = False
    error: str = ""


def strip_trailing_space(messages: list[dict]) -> None:
    """The API refuses a final assistant message whose text ends in whitespace; trim it (or drop a block
    or message left empty)."""
    content = history_blocks(messages[-1])
    if content and content[-1].get("type") == "text":
        text = content[-1].get("text", "").rstrip()
        content = content[:-1] + ([{**content[-1], "text": text}] if text else [])
        if content:
            messages[-1] = {"role": "assistant", "content": content}
        else:
            messages[:] = list(messages)[:-1]


def silent(reply: ModelReply) -> bool:
    """A reply with no content and no output tokens: silence, which is never an answer."""
    return not reply.content and (reply.usage is None or reply.usage.output == 0) \
        and reply.stop_reason not in ("refusal", "pause_turn")


def _silence(messages: list[dict], agent: Agent, reply: ModelReply, may_retry: bool) -> list[dict]:
    """The endpoint answered with nothing. When the prompt was near or past the window s08 knows or
    estimates (some gateways answer an overflowing streamed request so: HTTP 200, nothing in it), it is
    an overflow: the window is at most this prompt, compact and retry once. Otherwise it is a failure."""
    compactor = agent.compactor
    size = max(compactor.measure(messages), reply.usage.prompt if reply.usage else 0)
    if may_retry and compactor.endpoint.silence_is_overflow(size, messages):
        compactor.endpoint.learn_window(size)
        return compactor.reactive(messages, maximum=size, why=(
            f"the endpoint answered with nothing to a prompt of about {size:,} tokens, larger than any it "
            "answered before: taking it as a context overflow; compacting and retrying once"))
    raise LLMError("The endpoint answered with nothing (no text, no tool call, 0 output tokens)"
                   + ("" if may_retry else ", again after compacting") + "; nothing was added to the history.",
                   ErrorKind.EMPTY)


def _call_model(messages: list[dict], agent: Agent) -> ModelReply:
    """One model call after the pipeline; a prompt too long — or silence where the window must have
    been — gets reactive compaction and one retry."""
    retries_left = MAX_REACTIVE_RETRIES
    while True:
        agent.sync_tools()
        prepared = agent.compactor.prepare(messages)
        if prepared is not messages:
            messages[:] = prepared
        try:
            reply = agent.ask_model(messages)
        except LLMError as err:
            if err.kind is not ErrorKind.PROMPT_TOO_LONG or retries_left <= 0:
                raise
            retries_left -= 1
            messages[:] = agent.compactor.reactive(messages, err.counted, err.maximum)
            continue
        if silent(reply):
            messages[:] = _silence(messages, agent, reply, retries_left > 0)
            retries_left -= 1
            continue
        if reply.stop_reason == "model_context_window_exceeded" and retries_left > 0:
            retries_left -= 1     # the answer was cut by the window: drop it, compact, ask again
            messages[:] = agent.compactor.reactive(messages)
            continue
        return reply


def _cut_by_window(messages: list[dict], agent: Agent, reply: ModelReply, calls: list[dict],
                   ask_again: bool = False) -> str:
    """max_tokens with output far below MAX_TOKENS: the context window cut the answer, not the limit. Say
    so; the window is at most this prompt and answer (learned when believable); compact now (before
    "continue" is suggested), or — mid tool call — at the next call, after the results. An answer cut
    before it said anything (`ask_again`: once a turn) is dropped and asked again on the compacted
    history: there is nothing to continue. "" (not the window), "cut", or "again"."""
    out = reply.usage.output if reply.usage else 0
    limit = agent.settings.max_tokens
    if not reply.usage or out >= limit * WINDOW_CUT_SHARE:
        return ""
    compactor = agent.compactor
    size = compactor.measure(messages)
    agent.emit(Notice(f"[the answer was cut off by the model's context window after {out:,} output tokens (far "
                      f"below MAX_TOKENS={limit:,}): the prompt and answer (~{size:,} tokens) filled it]", "warning"))
    compactor.endpoint.window_cut(size)
    if calls:
        return "cut"
    if ask_again and out <= NOTHING_SAID_TOKENS and messages:
        asked = messages[:-1] if messages[-1]["role"] == "assistant" else messages[:]   # the cut answer dropped
        messages[:] = compactor.reactive(asked, maximum=size, why="compacting, and asking again")
        return "again"
    messages[:] = compactor.reactive(messages, maximum=size, why="compacting, so that the answer can go on")
    agent.emit(Notice("[say \"continue\" to go on]", "info"))
    return "cut"


def _wrote_a_call(messages: list[dict], agent: Agent, reply: ModelReply, corrected: bool) -> bool:
    """An answer that wrote a tool call as text (loop/written_calls.py): never run; the first of the turn
    is answered with a one-line correction so the model makes the call (True: ask again), and the person
    is told either way."""
    if reply.repeated or reply.stop_reason == "max_tokens" or not messages or messages[-1]["role"] != "assistant":
        return False
    name = written_call(text_of({"content": reply.content}), [t["name"] for t in agent.tools])
    if name is None:
        return False
    if corrected:
        agent.emit(Notice(f"[the model wrote a call to {name} as text again; s08 did not run it]", "warning"))
        return False
    agent.emit(Notice(f"[the model wrote a call to {name} as text instead of making it; s08 did not run it and "
                      "asked the model once to make the call]", "warning"))
    add_user_text(messages, CORRECTION.format(name=name))
    return True


def agent_loop(messages: list[dict], agent: Agent) -> ModelReply:
    """Call the model and run its tools until it answers without tool calls; return the last reply."""
    cut_off_rounds = pauses = 0
    corrected = False            # the model was told once this turn that a call written as text is not run
    asked_again = False          # an answer the window cut before it said anything was asked again this turn
    while True:
        reply = _call_model(messages, agent)
        sent = messages[:]          # the history as this call sent it (a summary may be prepared of it)
        if pauses and messages and messages[-1]["role"] == "assistant":
            # the continuation of a paused turn extends the paused answer (as one assistant turn)
            reply.content = history_blocks(messages[-1]) + reply.content
            messages[-1] = {"role": "assistant", "content": reply.content}
        elif reply.content:
            messages.append({"role": "assistant", "content": reply.content})
        agent.compactor.observe(messages, reply.usage)
        agent.compactor.after_reply(sent, messages, final=not any(b.get("type") == "tool_use" for b in reply.content))
        calls = [b for b in reply.content if b.get("type") == "tool_use"]
        limited = reply.stop_reason == "max_tokens" and not reply.repeated    # a loop cut to one copy: said
        window_cut = _cut_by_window(messages, agent, reply, calls, not asked_again) if limited else ""
        if window_cut == "again":
            asked_again = True
            continue
        if limited and not window_cut:
            cut_off_rounds += 1
            agent.emit(Notice(f"[response cut off: reached MAX_TOKENS={agent.settings.max_tokens}"
                              + ("" if calls else "; say \"continue\" to go on") + "]", "warning"))
        elif limited:
            cut_off_rounds += 1
        else:
            cut_off_rounds = 0
        if reply.stop_reason == "refusal":
            agent.emit(Notice("[the model declined to continue this request]", "warning"))
        if reply.stop_reason == "model_context_window_exceeded":
            agent.emit(Notice("[the answer was cut off by the model's context window]", "warning"))
        if reply.stop_reason is not None and reply.stop_reason not in KNOWN_STOP_REASONS:
            agent.emit(Notice(f"[the answer stopped for a reason s08 does not know: {reply.stop_reason}]", "warning"))
        pauses = pauses + 1 if reply.stop_reason == "pause_turn" and not calls else 0
        if 0 < pauses <= MAX_PAUSES:
            if messages and messages[-1]["role"] == "assistant":
                strip_trailing_space(messages)     # the API continues a paused turn from the answer sent back
            continue
        if pauses:
            agent.emit(Notice(f"[the endpoint paused this turn {pauses} times in a row; say \"continue\" to go on]",
                              "warning"))
        if not calls:
            if _wrote_a_call(messages, agent, reply, corrected):
                corrected = True
                continue
            return reply
        run_tools(messages, calls, reply.incomplete_tool_ids, agent, reply.stop_reason == "max_tokens")
        if agent.hook_stop is not None:
            agent.emit(Notice("[stopped by a hook" + (f": {agent.hook_stop}]" if agent.hook_stop else "]"), "warning"))
            agent.hook_stop = None
            return reply
        ctx = agent.tool_ctx
        if ctx.compact_request is not None:
            focus, ctx.compact_request, ctx.compact_done = ctx.compact_request, None, True
            messages[:] = agent.compactor.compact(messages, focus)
        if cut_off_rounds >= MAX_CUT_OFF_ROUNDS:
            agent.emit(Notice(f"[stopped: {cut_off_rounds} replies in a row were cut off by MAX_TOKENS]",
                              "error"))
            return reply


def run_turn(messages: list[dict], text: str | None, agent: Agent, attached: tuple[str, ...] = (),
             note: str = "") -> TurnResult:
    """One user turn. `text=None` re-runs the history as it is (/retry). Never raises for
    Ctrl-C or a failed model call: the history is left valid and the reason is emitted. `attached`:
    text blocks that follow the person's message (the files it mentions with @, loop/mentions.py);
    `note`: s08's own words to the model before the person's (approvals/plan_mode.py), not typed."""
    close_dangling_tool_uses(messages)   # repair anything an earlier, harder interruption left open
    agent.begin_turn()
    text = clean_text(text) if text is not None else None
    if text is not None and text.strip():
        text = fit_input(text, agent.compactor.window.tokens, agent.workspace, agent.emit)
        agent.continuity.typed_message(text)      # recorded as the person's, before it enters the history
        add_user_text(messages, note)
        add_user_text(messages, text)
        for block in attached:
            add_user_text(messages, block)
    try:
        reply = agent_loop(messages, agent)
        final = text_of({"content": reply.content}) if reply.content else ""
        return TurnResult(text=final)
    except KeyboardInterrupt:
        close_dangling_tool_uses(messages)
        add_user_text(messages, INTERRUPTED_MARK)
        agent.emit(Interrupted())
        return TurnResult(ok=False, interrupted=True, error="interrupted")
    except LLMError as err:
        close_dangling_tool_uses(messages)
        hint = " — still too long after compaction; try /compact with a focus, or /clear" \
            if err.kind is ErrorKind.PROMPT_TOO_LONG else ""
        agent.emit(Notice(f"{err}{hint}", "error"))
        return TurnResult(ok=False, error=str(err))

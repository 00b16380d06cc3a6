"""What the endpoint shows about its window and its counts, and what s08 takes from it.

The window (window.py) is CONTEXT_WINDOW, or what the endpoint showed instead:
  - the server's word when asked (`take_told`, the answer of llm/window_probe.py);
  - the window an error stated (`learn_window`, also a window resumed from the session log);
  - the one an empty answer bounds (`silence_is_overflow`): an empty answer to a prompt near the window,
    or larger than any this endpoint answered in the session, or after an empty one before, is taken as
    a context overflow — the window is then between the two prompts, in s08's own estimate;
  - the one an answer cut off bounds (`window_cut`).
A learned window is recorded (`on_window`, the session log's `window_record`) and, when CONTEXT_WINDOW
is set since, one an empty answer bounded is dropped (`forget_silence`).

Usage is checked, not trusted: some compatible endpoints report input tokens without the system prompt
and tools, or without what their own cache held (a gateway in front of llama.cpp reported 17 where the
model counted 525). A usage under USAGE_TRUST_SHARE of s08's own estimate of the same request is not
anchored on (`usage` says so, once: `usage_doubt`, which /context shows). A usage over the estimate
scales what must fit the window (`usage_scale`, like `api_scale` from a "prompt is too long" count).

EndpointWindow holds these decisions and what they remember; it is given the Window, s08's estimate of
a history, an emit, the limit, and `changed` (called when the window changed, so that what depends on
the limit is budgeted again).
"""

from __future__ import annotations

from typing import Callable

from events import Emit, Notice
from .window import API_STATED, Window

USAGE_TRUST_SHARE = 0.5             # a usage under half of s08's estimate is taken as incomplete
MAX_USAGE_SCALE = 2.0               # a usage over s08's estimate scales what must fit the window, up to this
MAX_API_SCALE = 4.0                 # the same, from the count a "prompt is too long" states
NEAR_WINDOW = 0.9                   # an empty answer to a prompt past this share of the window: an overflow


class EndpointWindow:
    def __init__(self, window: Window, estimate: Callable[[list[dict]], int], emit: Emit,
                 limit: Callable[[], int], changed: Callable[[], None]):
        self.window, self.estimate, self.emit, self.limit, self.changed = window, estimate, emit, limit, changed
        self.on_window: Callable[[dict], None] | None = None    # records a learned window (the session log)
        self.silent_at: int | None = None         # the empty answer's size the learned window came from
        self.window_probe = None                  # asking the server its window (llm/window_probe.py), or None
        self.usage_doubt = ""           # why the endpoint's usage is not trusted ("" while it is)
        self.largest_answered = 0       # the largest prompt (tokens) this endpoint answered in the session
        self.largest_estimate = 0       # the same prompt as s08 estimates it (the unit of a window an empty answer bounds)
        self.api_scale = 1.0            # the endpoint's count of a prompt over s08's estimate, when it said one
        self.usage_scale = 1.0          # the same, from the usage it reported (a log counts more than prose)
        self.silences = 0               # empty answers in a row

    @property
    def scale(self) -> float:
        """How much the endpoint's count exceeds s08's estimate, the largest it showed (at least 1)."""
        return max(1.0, self.api_scale, self.usage_scale)

    # ---- its counts ----------------------------------------------------------------------
    def usage(self, reported: int, estimate: int) -> bool:
        """A reply's usage (`reported` input tokens) for a request s08 estimates at `estimate`: True when
        the meter may anchor on it; far below the estimate it is not, and that is said once."""
        if reported < estimate * USAGE_TRUST_SHARE:
            if not self.usage_doubt:
                said = f"{reported:,} tokens reported" if reported else "no tokens reported"
                self.usage_doubt = (f"the endpoint's usage looks incomplete ({said} where s08 estimates "
                                    f"{estimate:,}); the meter and compaction use s08's estimate")
                self.emit(Notice(f"[{self.usage_doubt}]", "warning"))
            return False
        if estimate:
            self.usage_scale = max(self.usage_scale, min(reported / estimate, MAX_USAGE_SCALE))
        return True

    def answered(self, measured: int, estimate: int) -> None:
        """The endpoint answered a prompt that measures `measured` (as the next size is measured) and
        s08 estimates at `estimate`; a window the server told since is taken now."""
        self.largest_answered = max(self.largest_answered, measured)
        self.largest_estimate = max(self.largest_estimate, estimate)
        self.silences = 0
        self.take_told()

    def too_long(self, counted: int | None, estimate: int) -> float:
        """"Prompt is too long" with the endpoint's count of a request s08 estimates at `estimate`: the
        scale of this request (1 when it said no count); the largest one scales every budget from now on."""
        scale = counted / estimate if counted and estimate else 1.0
        if counted:
            self.api_scale = max(self.api_scale, min(scale, MAX_API_SCALE))
        return scale

    def resume_answered(self, tokens: int) -> None:
        """A resumed session: the largest prompt (and answer) the endpoint answered in it, from the log's
        usage records. A process that resumes has answered nothing itself; without this its first silence
        would have nothing to be larger than, and a history grown past the window would stay silent."""
        self.largest_answered = max(self.largest_answered, tokens)

    # ---- its window ----------------------------------------------------------------------
    def silence_is_overflow(self, size: int, messages: list[dict] | None = None) -> bool:
        """An empty answer to a prompt of `size` tokens (`messages`): a context overflow when the prompt is
        near the window s08 knows, or larger than any this endpoint answered in the session (a window s08
        does not know), or when the endpoint was silent the time before too (a resumed session may start
        past the window). Then the window is below this prompt and above the largest answered: learned
        (window.py, silence_bound) so that the next request fits — in s08's own estimate of both prompts,
        the unit compaction cuts to (the endpoint's count of the same text can be far higher, and it
        said none for the silent one)."""
        self.silences += 1
        overflow = size >= self.window.tokens * NEAR_WINDOW or 0 < self.largest_answered < size or self.silences > 1
        silent = self.estimate(messages) if messages is not None else size
        if overflow:
            answered = self.answered_estimate(size, silent)
            answered = answered if answered < silent else 0
            if self.window.bound(answered, silent):
                self.silent_at = silent
                self._changed(f"[the endpoint answered nothing to a prompt s08 estimates at ~{silent:,} "
                              "tokens" + (f", after answering ~{answered:,}" if answered else "")
                              + f": taking its context window as ~{self.window.tokens:,} tokens; "
                                f"compacting at {self.limit():,}]", quiet=False)
        return overflow

    def answered_estimate(self, size: int, silent: int) -> int:
        """The largest answered prompt in s08's own estimate. A resumed session answered nothing in this
        process yet: what its log says was answered (the endpoint's count, resume_answered) is scaled
        the way the silent prompt's estimate (`silent`) compares with its measure (`size`)."""
        if self.largest_estimate or not self.largest_answered or size <= 0:
            return self.largest_estimate
        return self.largest_answered * silent // size

    def forget_silence(self) -> bool:
        """The person set CONTEXT_WINDOW (a reloaded .env): it wins over a window an empty answer bounded
        before, which may have been one glitch (not over one the API stated). True when one was dropped."""
        if not self.silent_at:
            return False
        self.window.learned, self.window.learned_from, self.silent_at = None, API_STATED, None
        self.changed()
        return True

    def window_cut(self, size: int) -> None:
        """An answer the window cut off when prompt and answer measured `size` tokens: the window is at
        most that (at least MIN_WINDOW, window.py's cut), used for the rest of the session and recorded."""
        if self.window.cut(size):
            self.silent_at = None
            self._changed(f"[context window is {self.window.tokens:,} tokens for this model; compacting "
                          f"at {self.limit():,}]", quiet=False)

    def learn_window(self, maximum: int | None, quiet: bool = False, silent: int | None = None) -> None:
        """The API stated its window (or, `silent`, an earlier session learned it from an empty answer at
        that size): use it for the rest of the session, and say so once."""
        if not self.window.restore(maximum, silent):
            return
        self.silent_at = silent
        self._changed(f"[context window is {self.window.tokens:,} tokens for this model; compacting at "
                      f"{self.limit():,}]", quiet)

    def _changed(self, said: str, quiet: bool) -> None:
        self.changed()
        if self.on_window is not None and self.window.learned:
            self.on_window(self.window_record())
        if not quiet:
            self.emit(Notice(said, "warning"))

    def window_record(self) -> dict:
        """The session log's record of the learned window (resumed with learn_window)."""
        return {"t": "window", "tokens": self.window.learned,
                **({"silent": self.silent_at} if self.silent_at else {})}

    def take_told(self) -> None:
        """The window the server said when asked (llm/window_probe.py), once its answer is in: used
        from now on unless CONTEXT_WINDOW was set (the probe is not started then)."""
        probe, told = self.window_probe, None
        if probe is not None:
            told = probe.result()
        if told is None:
            return
        self.window_probe = None
        if self.window.tell(told.tokens, told.source):
            self.changed()
            self.emit(Notice(f"[context window {self.window.tokens:,} tokens ({self.window.source}); "
                             f"compacting at {self.limit():,}]", "info"))

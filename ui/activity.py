"""The live area at the bottom of the screen while the agent works.

    <the open tail of the answer, or the last lines of a running command>
    ⠹ running bash… 12s · esc to interrupt

One rich Live, redrawn a few times a second, transient (it leaves nothing behind when it stops).
Everything printed meanwhile goes above it. Nothing in it is untrusted text that was not made
safe first: the renderer sanitizes events before they get here.
"""

from __future__ import annotations

import time

from rich.console import Group
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

REFRESH_PER_SECOND = 8


class Activity:
    def __init__(self, console):
        self.console = console
        self.live: Live | None = None
        self.label, self.since, self.tail = "", 0.0, None
        self.spinner = Spinner("dots", style="cyan")
        self.aside = lambda: ""          # what else goes on, shown after the label ("preparing summary… 4s")

    @property
    def running(self) -> bool:
        return self.live is not None

    def show(self, label: str, since: float | None = None) -> None:
        """Show the spinner with `label` and the seconds since `since` (default: now)."""
        self.label, self.since = label, time.monotonic() if since is None else since
        self._start()

    def set_tail(self, renderable) -> None:
        self.tail = renderable
        if renderable is not None:
            self._start()
        elif self.live is not None and not self.label:
            self.stop()

    def _start(self) -> None:
        if self.live is None and self.console.is_terminal:
            self.live = Live(self, console=self.console, refresh_per_second=REFRESH_PER_SECOND, transient=True,
                             redirect_stdout=False, redirect_stderr=False)
            self.live.start()

    def stop(self) -> None:
        """Take the live area off the screen (it leaves no trace) and forget its contents."""
        self.label, self.tail = "", None
        if self.live is not None:
            live, self.live = self.live, None
            live.stop()

    def __rich__(self):
        parts = [self.tail] if self.tail is not None else []
        if self.label:
            elapsed = int(time.monotonic() - self.since)
            aside = self.aside()
            self.spinner.text = Text(f"{self.label} {elapsed}s · esc to interrupt" + (f" · {aside}" if aside else ""),
                                     style="dim")
            parts.append(self.spinner)
        return Group(*parts)

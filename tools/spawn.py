"""Starting a process that s08 must be able to kill: the signals that stop s08 are held while it starts.

    with signals_held() as held:
        try:
            proc = subprocess.Popen(...)
            while ...: held.hand_on(); …  # a Ctrl-C raises here, at a point the loop chose
        except BaseException:
            kill proc                     # a Ctrl-C pressed again, or sent by what is killed, waits for the kill
            raise

A Ctrl-C (or Esc, or SIGTERM/SIGHUP) that arrives while Popen creates the child would raise inside
Popen, after the fork, before Popen returns the process: the child runs on and nobody holds it to kill.
On a busy machine that window is long: the child's bash can start, fork and run for a while before
Popen returns (seen: a hook's `sleep 300 &` left running in 9 of 40 tries beside three CPU-bound
processes). So the handlers are swapped for ones that note the signal, and when Popen is done the noted
signal is handed to the handler that was there before, which raises as it would have (KeyboardInterrupt,
SystemExit) at the end of the `with`, where the caller's try can kill what was started. Several held
signals are handed on a stop (SIGTERM, SIGHUP) first: the first handler that raises wins, and a Ctrl-C
that came with a SIGTERM never hides it. A signal that comes while the handlers are put back is handed
on at once, even to a `note` that is still in place.

A command or a hook is run, waited for and killed holding them (tools/bash.py run_command, hooks/process.py
run_hook): its wait hands them on every round, and a Ctrl-C pressed again, or SIGINT sent to s08 again and
again by what is being killed, cannot stop the kill half way (the same signal again is dropped).

Only the main thread receives signals in Python; in another thread nothing is swapped.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

STOPPING = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)   # held ones are handed on in this order: a stop first


class Held:
    """The signals that came while held. A loop inside the `with` calls hand_on() to act on them at a point of
    its choosing (its except then kills what it started, the signals still held)."""

    def __init__(self):
        self.came: dict = {}                     # signum → the frame it came in
        self.previous: dict = {}                 # signum → the handler before
        self.handed: set[int] = set()            # handed on already: the same signal again adds nothing

    def hand_on(self) -> None:
        """Hand what came to the handlers before, a stop first: the first that raises wins (KeyboardInterrupt,
        SystemExit); one that ignores it raises nothing."""
        came, self.came = self.came, {}
        for signum in STOPPING:
            if signum in came and signum in self.previous and signum not in self.handed:
                self.handed.add(signum)
                _hand_on(signum, came[signum], self.previous[signum])


@contextmanager
def signals_held():
    held = Held()
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    holding = [True]

    def note(signum, frame):
        if holding[0]:
            held.came.setdefault(signum, frame)
        else:           # the `with` is over (even if putting the handlers back stopped half way): act as before
            _hand_on(signum, frame, held.previous[signum])

    try:
        for signum in STOPPING:
            if signal.getsignal(signum) is not None:        # None: set outside Python, and it could not be put back
                held.previous[signum] = signal.signal(signum, note)
        yield held
    finally:
        holding[0] = False
        for signum, handler in held.previous.items():
            signal.signal(signum, handler)
        held.hand_on()          # raises what the handler before would have raised (KeyboardInterrupt, SystemExit)


def _hand_on(signum: int, frame, handler) -> None:
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)             # the default action

"""Starting a process that s08 must be able to kill: the signals that stop s08 are held while it starts.

    with signals_held():
        proc = subprocess.Popen(...)      # inside the caller's try, whose except kills `proc` if it exists

A Ctrl-C (or Esc, or SIGTERM/SIGHUP) that arrives while Popen creates the child would raise inside
Popen, after the fork, before Popen returns the process: the child runs on and nobody holds it to kill.
On a busy machine that window is long: the child's bash can start, fork and run for a while before
Popen returns (seen: a hook's `sleep 300 &` left running in 9 of 40 tries beside three CPU-bound
processes). So the handlers are swapped for ones that note the signal, and when Popen is done the noted
signal is handed to the handler that was there before, which raises as it would have (KeyboardInterrupt,
SystemExit) at the end of the `with`, where the caller's try can kill what was started.

Only the main thread receives signals in Python; in another thread nothing is swapped.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def signals_held():
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list = []

    def note(signum, frame):
        held.append((signum, frame))

    previous = {}
    try:
        for signum in STOPPING:
            previous[signum] = signal.signal(signum, note)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if held:
            signum, frame = held[0]
            handler = previous.get(signum)
            if callable(handler):
                handler(signum, frame)          # raises what it would have raised (KeyboardInterrupt, SystemExit)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)     # the default action, now that it is restored

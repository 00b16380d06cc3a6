"""Run `python agent.py` in a pseudo-terminal without paying for a new interpreter's imports.

Importing the model SDK alone costs about two CPU-seconds, and the pty suites start s08 about a
hundred times. So `spawn_agent` (conftest.py) forks the test worker — which has already imported the
SDK, rich, prompt_toolkit and s08's modules (once_per_worker.warm_up) — inside pexpect's own pty fork, and the child runs
agent.py's `run()` where a new interpreter would have exec'd it. Everything after the imports is the
real path: a real process on its own pseudo-terminal (session leader, controlling tty, Ctrl-C and
resize from the terminal), its own argv, environment, working folder and standard streams, and the
key handed over exactly as access/keyguard.py's re-exec hands it (the key never in the environment).

What a fork does not show — a new interpreter's imports, the key guard's own re-exec, what
/proc/<pid>/environ says — is covered by the tests that start `python agent.py` for real
(`fresh=True`: test_key_protection, test_every_secret_hidden's key-guard test, the first-run README
command, test_install). `run_agent`/`popen_agent` (conftest.py) do the same for a process on pipes
(-p and piped input), through subprocess's preexec_fn.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import traceback

MAX_FD = 4096
DEFAULT_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP, signal.SIGWINCH,
                   signal.SIGCHLD, signal.SIGALRM, signal.SIGUSR1, signal.SIGUSR2)


def run_agent_here(agent_path: str, args: list[str], env: dict[str, str]) -> None:
    """The child's side (called by ptyprocess after the pty fork, in place of exec): never returns."""
    code = 1
    try:
        os.closerange(3, MAX_FD)          # the worker's sockets and ptyprocess's exec-error pipe (EOF = "exec'd")
        for signum in DEFAULT_SIGNALS:
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in (signal.SIGPIPE, signal.SIGXFSZ):   # as Python sets them at start (subprocess reset them)
            signal.signal(signum, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        from access.keyguard import handover_environ
        handed = handover_environ(env)    # what keyguard's re-exec would have started with
        env = handed[0] if handed else env
        os.environ.clear()
        os.environ.update(env)
        sys.argv = [agent_path, *args]
        # the streams a new interpreter opens under LC_ALL=C.UTF-8 and PYTHONUNBUFFERED=1 (tests' base_env)
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8",
                                                     errors="surrogateescape")
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                                       errors="surrogateescape", line_buffering=os.isatty(1),
                                                       write_through=True)
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                                       errors="backslashreplace", line_buffering=os.isatty(2),
                                                       write_through=True)
        from prompt_toolkit.application.current import AppSession, _current_app_session
        _current_app_session.set(AppSession())      # not the worker's: its input and output are the tests'
        import agent
        try:
            agent.run()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:                 # what a new interpreter would print before exiting 1
        try:
            sys.stderr.write(traceback.format_exc())
        except Exception:
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)

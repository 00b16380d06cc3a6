"""Keep the key out of reach of the commands the agent runs.

A command can read its parent's environment (`cat /proc/$PPID/environ`), and that file shows the
environment the process was *started* with — removing a variable later does not change it. So when
s08 starts with ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in its environment, it starts itself
again at once (same pid, same arguments) without them, and hands their values over through an
inherited pipe that is read and closed before anything else runs:

    python agent.py            (key in the environment)
      └─ exec python agent.py  (environment without the key; S08_KEY_FD=<pipe> holds it, read once)

The process is also made non-dumpable, so another process of the same (non-root) user cannot read
its memory. Root can still read everything of every process: that is outside what s08 can prevent.
config.process_environ() is the environment as it was, key included, for reading the settings.
"""

from __future__ import annotations

import json
import os
import stat
import sys

from redact import SECRET_SETTINGS

HANDOVER_VAR = "S08_KEY_FD"
MAX_HANDOVER_BYTES = 60_000       # below a pipe's buffer, so writing before exec never blocks
PR_SET_DUMPABLE = 4

def keep_key_from_children() -> None:
    """Call first thing in the program: receive a handed-over key, or re-exec to hand it over."""
    if HANDOVER_VAR in os.environ:
        _receive(os.environ.pop(HANDOVER_VAR))
    elif any(os.environ.get(name) for name in SECRET_SETTINGS) and sys.platform.startswith("linux"):
        _reexec_without_secrets()          # returns only if the exec could not happen
    _make_undumpable()


def handover_environ(environ) -> tuple[dict[str, str], int] | None:
    """`environ` without the secrets, with HANDOVER_VAR naming an inheritable pipe that holds them, and
    that pipe's read end; None when there is no secret or too much to hand over."""
    secrets = {name: environ[name] for name in SECRET_SETTINGS if environ.get(name)}
    data = json.dumps(secrets).encode("utf-8", "surrogateescape")
    if not secrets or len(data) > MAX_HANDOVER_BYTES:
        return None
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)
        os.set_inheritable(read_end, True)
    except OSError:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    env = {k: v for k, v in environ.items() if k not in SECRET_SETTINGS}
    env[HANDOVER_VAR] = str(read_end)
    return env, read_end


def _reexec_without_secrets() -> None:
    if not sys.executable:
        return
    try:
        handed = handover_environ(os.environ)
    except OSError:
        return
    if handed is None:
        return
    env, read_end = handed
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, list(sys.orig_argv), env)
    except OSError:
        os.close(read_end)


def _receive(value: str) -> None:
    """Read the secrets from the inherited pipe and close it. Only a pipe above stdio counts, so a
    stray variable can never make s08 swallow its own input."""
    try:
        fd = int(value)
        if fd < 3 or not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
    except (ValueError, OSError):
        return
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        received = json.loads(b"".join(chunks).decode("utf-8", "surrogateescape"))
    except ValueError:
        return
    if isinstance(received, dict):
        from config import hand_over        # here, not at the top: the process that re-execs needs none of config
        hand_over({k: v for k, v in received.items() if k in SECRET_SETTINGS and isinstance(v, str)})


def _make_undumpable() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass

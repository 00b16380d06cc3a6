"""Scenes of processes s08 runs side by side, played in a process of their own that is a child subreaper as
s08 is (tools/background.py enable_adoption; a test process must not become one):

    python tests/support/claims_scenes.py SCENE FOLDER      prints one JSON object

    hook-then-command   a hook starts, then a command; the hook ends while the command still runs
    server-during-hook  a hook starts, then an MCP server (the tests' edge server); the hook ends
    count-beside        a command with a process limit runs while another command starts many processes
    exit-codes-beside-looks  hooks and commands end while another agent's Jobs looks at /proc without pause
    retagged-timeout    a command that times out has started a process in a session of its own with a tag
                        of its choosing (S08_JOB=elsewhere)
    own-orphans-count   a command with a process limit leaves orphans in sessions of their own, `(setsid sleep &)`
                        in a loop: s08 adopts them, with the command's tag, and counts them
    sigint-spammer      a command starts, in a session of its own, a process that sends SIGINT to s08 without pause
                        (a Ctrl-C pressed again and again): the first one interrupts the command, the others
                        come while it is killed
    task-ends-beside    a sub-agent (its own Jobs, as delegation/child.py has) ends while another one's command runs
    orphan-of-a-task    a sub-agent's command leaves an orphan while a command of the main agent runs, which ends
    server-beside-task  an MCP server runs; a sub-agent runs a command and ends
    start-after-end     a command starts with a Jobs that has already ended (a sub-agent stopped by Esc while it
                        started a command, s08 exiting while a sub-agent's thread started one)

Each step waits for the one before by a file it writes, never for a time. What each prints is what one
process's end claimed of the other's (it should claim nothing) and whether the other one lived on.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from hooks.process import run_hook  # noqa: E402
from tools.background import Jobs, enable_adoption  # noqa: E402
from tools.bash import run_command  # noqa: E402
from support.processes import gone  # noqa: E402

BOUND = 120.0         # seconds: only a scene that went wrong waits this long


def wait_for(path: Path) -> str:
    return f"for i in $(seq {int(BOUND * 100)}); do [ -e {path} ] && break; sleep 0.01; done"


def appeared(path: Path) -> None:
    deadline = time.monotonic() + BOUND
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def edge_servers(folder: Path):
    """The person's MCP servers: the tests' edge server, which writes its pid to marks/pid (not started yet)."""
    from servers.manager import Servers
    from support.mcp_servers import config_dir, edge_entry, user_servers
    home, marks = folder / "home", folder / "marks"
    marks.mkdir()
    user_servers(home, {"edge": edge_entry(EDGE_MARKS=str(marks))})
    environ = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    settings = SimpleNamespace(mcp_timeout=60.0, mcp_tool_timeout=60.0, mcp_schema_budget=0, context_limit=200_000)
    return Servers(folder, settings, environ, (), config_dir(home) / ".env", folder / "logs"), marks


def beside(after: Path, command: str, folder: Path, jobs: Jobs) -> tuple[threading.Thread, dict]:
    """`command` run with `jobs` in a thread of its own (started) once `after` exists; its text: got["text"]."""
    got: dict = {}

    def run() -> None:
        appeared(after)
        got["text"] = run_command(command, folder, BOUND, folder, jobs=jobs).text
    runner = threading.Thread(target=run)
    runner.start()
    return runner, got


def hook_then_command(folder: Path, jobs: Jobs) -> dict:
    hook_started, command_started, hook_ended = folder / "hook.started", folder / "command.started", folder / "hook.ended"
    runner, got = beside(hook_started, f"touch {command_started}; {wait_for(hook_ended)}; echo finished", folder, jobs)
    hook = run_hook(f"touch {hook_started}; {wait_for(command_started)}", b"{}", folder, BOUND, dict(os.environ),
                    jobs=jobs)
    hook_ended.touch()
    runner.join(BOUND)
    return {"hook_left": hook.left, "command": got.get("text", "")}


def server_during_hook(folder: Path, jobs: Jobs) -> dict:
    servers, marks = edge_servers(folder)
    up = folder / "server.up"
    hook_started, got = folder / "hook.started", {}

    def start_the_server() -> None:
        appeared(hook_started)
        servers.start(lambda question: "y", lambda notice: None)
        up.touch()
    starter = threading.Thread(target=start_the_server)
    starter.start()
    try:
        hook = run_hook(f"touch {hook_started}; {wait_for(up)}", b"{}", folder, BOUND, dict(os.environ), jobs=jobs)
        starter.join(BOUND)
        pid = int((marks / "pid").read_text())
        got = {"hook_left": hook.left, "server_alive": not gone(pid),
               "echo": servers.run("mcp__edge__echo", {"text": "still here"}, None).content}
    finally:
        servers.close()
    return got


def count_beside(folder: Path, jobs: Jobs) -> dict:
    limited_started, many_up, limited_done = folder / "limited.started", folder / "many.up", folder / "limited.done"
    runner, _ = beside(limited_started, f"for i in 1 2 3 4 5 6 7 8; do sleep {int(BOUND)} & done; touch {many_up}; "
                                        f"{wait_for(limited_done)}; kill $(jobs -p)", folder, jobs)
    # the limited command lives a while after the others are up, so it counts its processes many times
    limited = run_command(f"touch {limited_started}; {wait_for(many_up)}; sleep 2; echo finished", folder, BOUND,
                          folder, jobs=jobs, max_processes=6).text
    limited_done.touch()
    runner.join(BOUND)
    return {"limited": limited}


def retagged_timeout(folder: Path, jobs: Jobs) -> dict:
    pid_file = folder / "moved.pid"
    text = run_command(f"S08_JOB=elsewhere setsid sleep {int(4 * BOUND)} & echo $! > {pid_file}; sleep {int(BOUND)}",
                       folder, 2, folder, jobs=jobs).text
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + BOUND / 2          # the kill was sent: the kernel's time to finish it
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return {"text": text, "moved_alive": not gone(pid)}


def own_orphans_count(folder: Path, jobs: Jobs) -> dict:
    never = folder / "never"
    text = run_command(f"for i in $(seq 20); do (setsid sleep {int(4 * BOUND)} &); done; {wait_for(never)}", folder,
                       BOUND, folder, jobs=jobs, max_processes=8).text
    return {"text": text}


def sigint_spammer(folder: Path, jobs: Jobs) -> dict:
    import signal
    pid_file, never = folder / "spammer.pid", folder / "never"

    def interrupt(signum, frame) -> None:       # Ctrl-C while a command runs; outside one (the scene's own
        while frame is not None:                # lines after it) the SIGINTs the spammer still sends are ignored
            if frame.f_code is run_command.__code__:
                raise KeyboardInterrupt
            frame = frame.f_back
    signal.signal(signal.SIGINT, interrupt)
    raised = ""
    try:
        run_command(f"setsid bash -c 'echo $$ > {pid_file}.new; mv {pid_file}.new {pid_file}; "
                    f"while kill -INT {os.getpid()}; do :; done' & {wait_for(never)}", folder, BOUND, folder, jobs=jobs)
    except KeyboardInterrupt as exc:
        raised = type(exc).__name__
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + BOUND / 2          # a kill that was sent: the kernel's time to finish it
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return {"raised": raised, "spammer_alive": not gone(pid)}


def task_ends_beside(folder: Path, jobs: Jobs) -> dict:
    started, ended = folder / "other.started", folder / "task.ended"
    task, other, got = Jobs(), Jobs(), {}

    def other_command() -> None:
        got["other"] = run_command(f"touch {started}; {wait_for(ended)}; echo finished", folder, BOUND, folder,
                                   jobs=other).text
    runner = threading.Thread(target=other_command)
    runner.start()
    appeared(started)
    run_command("echo done", folder, BOUND, folder, jobs=task)
    claimed = task.end_all()                  # the sub-agent ends (delegation/child.py: finished, or stopped)
    ended.touch()
    runner.join(BOUND)
    return {"claimed": [p.command for p in claimed], "other": got.get("other", "")}


def orphan_of_a_task(folder: Path, jobs: Jobs) -> dict:
    started, pid_file = folder / "main.started", folder / "orphan.pid"
    task = Jobs()
    runner, got = beside(started, f"(setsid sleep {int(4 * BOUND)} & echo $! > {pid_file}.new; mv {pid_file}.new "
                                  f"{pid_file})", folder, task)
    text = run_command(f"touch {started}; {wait_for(pid_file)}; echo finished", folder, BOUND, folder, jobs=jobs).text
    runner.join(BOUND)
    pid = int(pid_file.read_text())
    try:
        return {"main": text, "task": got.get("text", ""), "orphan_alive": not gone(pid), "orphan": pid}
    finally:
        task.end_all()


def server_beside_task(folder: Path, jobs: Jobs) -> dict:
    servers, marks = edge_servers(folder)
    try:
        servers.start(lambda question: "y", lambda notice: None)
        task = Jobs()
        run_command("echo done", folder, BOUND, folder, jobs=task)
        claimed = task.end_all()
        pid = int((marks / "pid").read_text())
        return {"claimed": [p.command for p in claimed], "server_alive": not gone(pid),
                "echo": servers.run("mcp__edge__echo", {"text": "still here"}, None).content}
    finally:
        servers.close()


def start_after_end(folder: Path, jobs: Jobs) -> dict:
    pid_file = folder / "left.pid"
    task = Jobs()
    task.end_all()
    try:
        text = run_command(f"setsid sleep {int(4 * BOUND)} & echo $! > {pid_file}.new; mv {pid_file}.new {pid_file}",
                           folder, BOUND, folder, jobs=task).text
        raised = ""
    except KeyboardInterrupt:
        text, raised = "", "KeyboardInterrupt"
    pid = int(pid_file.read_text()) if pid_file.exists() else 0
    deadline = time.monotonic() + BOUND / 2          # a kill that was sent: the kernel's time to finish it
    while pid and not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return {"text": text, "raised": raised, "left_alive": bool(pid) and not gone(pid)}


def exit_codes_beside_looks(folder: Path, jobs: Jobs) -> dict:
    """Hooks that exit 2 (block) and commands that exit 3, while another agent's Jobs looks at /proc without
    pause (each look reaps the adopted orphans that ended)."""
    other, stop = Jobs(), threading.Event()

    def look() -> None:
        while not stop.is_set():
            other.find(other.token + "-")
    looker = threading.Thread(target=look)
    looker.start()
    try:
        hooks = [run_hook("exit 2", b"{}", folder, BOUND, dict(os.environ), jobs=jobs).code for _ in range(40)]
        commands = [run_command("exit 3", folder, BOUND, folder, jobs=jobs).text for _ in range(40)]
    finally:
        stop.set()
        looker.join(BOUND)
    return {"hooks": sorted(set(hooks), key=str), "commands": sorted({c.splitlines()[-1] for c in commands})}


SCENES = {"hook-then-command": hook_then_command, "server-during-hook": server_during_hook,
          "count-beside": count_beside, "retagged-timeout": retagged_timeout,
          "exit-codes-beside-looks": exit_codes_beside_looks,
          "own-orphans-count": own_orphans_count, "sigint-spammer": sigint_spammer, "task-ends-beside": task_ends_beside,
          "orphan-of-a-task": orphan_of_a_task, "server-beside-task": server_beside_task,
          "start-after-end": start_after_end}


def main() -> None:
    enable_adoption()
    jobs = Jobs(whole=True)         # as JOBS, s08's own: its end ends every child
    scene, folder = sys.argv[1], Path(sys.argv[2])
    try:
        print(json.dumps(SCENES[scene](folder, jobs)))
    finally:
        jobs.end_all()


if __name__ == "__main__":
    main()

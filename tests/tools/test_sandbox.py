"""The bash tool's kernel sandbox, run for real: real bash under real Landlock on this kernel.

Every write attack of issue 19 run in the read-only sandbox leaves every file byte-identical; no TCP
connection reaches a local listener; the read-only commands the README lists give the same output
inside as outside; generated commands never change a prepared tree; SANDBOX=workspace confines writes
to the workspace; a loop of background jobs ends with a clear error; where the sandbox is unavailable
(S08_SANDBOX_UNAVAILABLE=1) every command asks; a command the sandbox refused asks the next time.
Tests that need the kernel's sandbox are marked `kernel` and skipped where it is missing; the others
(the simulated absence, the policy) run everywhere.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from approvals.policy import Answer
from config import Settings
from events import Notice, ToolFinished
from tools.bash import run_command
from tools.sandbox import APPROVED, READ_ONLY, Sandbox, probe, probe_mounts
from support.processes import sleepers

ABI, PROBLEM = probe({})
kernel = pytest.mark.skipif(bool(PROBLEM), reason=f"no kernel sandbox here: {PROBLEM}")

RO = Sandbox.for_session(Settings(), {})
WORKSPACE = Sandbox.for_session(Settings(sandbox="workspace"), {})
WORKSPACE_NET = Sandbox.for_session(Settings(sandbox="workspace", sandbox_network="on"), {})


def digest(root: Path) -> dict[str, str]:
    """Every file and link under `root` (a .git folder included) with a hash of its bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            found[rel] = "dir"
    return found


def ro(command: str, cwd: Path, tmp_path: Path, sandbox: Sandbox = RO, kind: str = READ_ONLY, timeout: float = 20):
    return run_command(command, cwd, timeout, tmp_path / "spill", sandbox=sandbox, kind=kind)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A workspace with files, a git repository, a fake user-level settings file under a temp HOME and
    a file outside the workspace; returns (root of all of it, workspace)."""
    root = tmp_path / "all"
    ws = root / "ws"
    (ws / "u").mkdir(parents=True)
    (ws / "victim.txt").write_text("victim\n")
    (ws / "u" / "a.txt").write_text("a\nb\n")
    (ws / "u" / "b.txt").write_text("keep me\n")
    (ws / ".gia").mkdir()
    (ws / ".gia" / "config").write_text("[diff]\n\texternal = ./evil.sh\n")
    home = root / "home"
    (home / ".config" / "s08").mkdir(parents=True)
    (home / ".config" / "s08" / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-test\n")
    (root / "outside.txt").write_text("outside\n")
    monkeypatch.setenv("HOME", str(home))
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], cwd=ws, check=True)
    subprocess.run(git + ["add", "-A"], cwd=ws, check=True)
    subprocess.run(git + ["commit", "-qm", "first"], cwd=ws, check=True)
    return root, ws


ATTACKS = [
    "echo X 1<victim.txt >/dev/stdout",
    "echo X 1<victim.txt >>/dev/stdout",
    "echo X 2<victim.txt >/dev/stderr",
    "echo X 2<victim.txt 1>&2 >>/dev/stderr",
    "exec 1<victim.txt; echo X >/dev/stdout",
    "exec 3<victim.txt; echo X >/proc/self/fd/3",
    "echo X 1<../outside.txt >/dev/stdout",
    "printf '\\nANTHROPIC_BASE_URL=http://evil.example\\nAPPROVAL_MODE=yolo\\n' 1<~/.config/s08/.env >>/dev/stdout",
    "uniq u/?.txt",
    "uniq .gi[at]/config",
    "cp .gia/config .git/config",
    "touch new.txt; mkdir d; rm victim.txt; mv u/a.txt u/c.txt; ln -s victim.txt l",
    "sed -i s/victim/X/ victim.txt; truncate -s0 victim.txt; echo X | tee -a victim.txt",
    "echo X > /dev/shm/s08-test-sandbox; echo X > /tmp/s08-test-sandbox",
    "git config user.name X; git commit --allow-empty -qm x; git tag x; git stash",
    "python3 -c \"open('victim.txt', 'a').write('X')\"",
]


@kernel
@pytest.mark.parametrize("command", ATTACKS)
def test_each_write_attack_changes_nothing_in_the_read_only_sandbox(tree, tmp_path, command):
    root, ws = tree
    outside = [Path("/tmp/s08-test-sandbox"), Path("/dev/shm/s08-test-sandbox")]
    for path in outside:
        path.unlink(missing_ok=True)
    before = digest(root)
    captured = ro(command, ws, tmp_path)
    assert digest(root) == before, captured.text
    assert not Path("/tmp/s08-test-sandbox").exists() and not Path("/dev/shm/s08-test-sandbox").exists()


@kernel
def test_a_refused_write_says_so_in_plain_words(tree, tmp_path):
    from tools.registry import ToolContext, run_tool
    ws = tree[1]
    ctx = ToolContext(workspace=ws, settings=Settings(), sandbox=RO, run_as=READ_ONLY)
    result = run_tool("bash", {"command": "echo X 1<victim.txt >/dev/stdout"}, ctx)
    assert result.is_error and "read-only sandbox" in result.content and "ask the person" in result.content
    assert result.meta["sandbox_refused"] == READ_ONLY
    ok = run_tool("bash", {"command": "cat victim.txt"}, ctx)
    assert not ok.is_error and "sandbox" not in ok.content


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def accepted(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def connects(port: int) -> list[str]:
    return [f"echo hi > /dev/tcp/127.0.0.1/{port}",
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\"",
            "python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\" "
            "&& echo BOUND"]


@kernel
def test_no_tcp_connection_leaves_the_read_only_sandbox(tree, tmp_path, listener):
    ws, port = tree[1], listener.getsockname()[1]
    for command in connects(port):
        captured = ro(command, ws, tmp_path)
        assert captured.exit_code != 0 and "BOUND" not in captured.text, (command, captured.text)
        assert not accepted(listener), command
    plain = ro(connects(port)[0], ws, tmp_path, sandbox=RO, kind=APPROVED)     # the listener does work
    assert plain.exit_code == 0 and accepted(listener)


@kernel
def test_no_udp_datagram_nor_unix_socket_connection_leaves_the_read_only_sandbox(tree, tmp_path):
    ws = tree[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "s.sock"))
    unix.listen(4)
    unix.setblocking(False)
    try:
        send = (f"python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'k', "
                f"('127.0.0.1', {udp.getsockname()[1]}))\"")
        join = f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{tmp_path / 's.sock'}')\""
        for command in (send, join, f"echo k | nc -u -w1 127.0.0.1 {udp.getsockname()[1]}"):
            ro(command, ws, tmp_path)
        with pytest.raises(BlockingIOError):
            udp.recv(10)
        assert not accepted(unix)
        assert ro(join, ws, tmp_path, kind=APPROVED).exit_code == 0 and accepted(unix)     # they do work outside
    finally:
        udp.close()
        unix.close()


@kernel
def test_a_root_command_has_no_capabilities_in_the_sandbox(tree, tmp_path):
    for sandbox, kind in ((RO, READ_ONLY), (WORKSPACE, APPROVED)):
        captured = ro("grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status", tree[1], tmp_path, sandbox, kind)
        assert captured.text.count("0000000000000000") == 3, captured.text


READ_ONLY_COMMANDS = [
    "ls -la", "ls -R u", "cat victim.txt u/a.txt", "grep -rn a u", "grep -c victim victim.txt",
    "find . -name '*.txt' -not -path './.git/*'", "find u -type f", "wc -l u/a.txt victim.txt", "head -n1 u/a.txt",
    "tail -n1 u/a.txt", "git status", "git status --short", "git log --oneline", "git diff", "git diff --stat HEAD",
    "git show --stat HEAD", "git show HEAD:victim.txt", "git blame victim.txt", "git rev-parse --show-toplevel",
    "git ls-files", "git branch", "python3 -c \"print(open('u/a.txt').read().upper())\"", "sort u/a.txt | uniq",
    "diff u/a.txt u/b.txt; echo $?", "stat -c %s victim.txt", "du -s u", "echo hello >/dev/null && echo ok",
    "tr a-z A-Z < victim.txt", "sed -n 1p u/a.txt", "awk '{print $1}' u/a.txt", "xargs echo < u/a.txt",
    "file victim.txt || true", "tree u || true", "grep -E '^Sig(Ign|Blk)' /proc/self/status",
    "yes | head -n 2; echo ${PIPESTATUS[@]}", "git grep -n a", "git shortlog -sn HEAD", "git describe --always",
    "git log -p -1", "diff <(cat u/a.txt) u/b.txt", "cat <<< 'here'", "ls ~/.config/s08",
    "jq -n 1 2>/dev/null || echo no jq",
] + (["rg -n a u", "rg --files"] if shutil.which("rg") else [])


@kernel
@pytest.mark.parametrize("command", READ_ONLY_COMMANDS)
def test_read_only_commands_give_the_same_output_inside(tree, tmp_path, command):
    root, ws = tree
    (ws / "u" / "a.txt").touch()            # the index's stat data is stale: git must not need to refresh it
    os.utime(ws / "victim.txt", (1, 1))
    before = digest(root)
    outside = ro(command, ws, tmp_path, kind=APPROVED, sandbox=Sandbox(problem="off"))
    before = digest(root)
    inside = ro(command, ws, tmp_path)
    assert output(inside.text) == output(outside.text) and inside.exit_code == outside.exit_code
    assert digest(root) == before


def output(text: str) -> str:
    """What the command printed, without the trailer naming what it left running: the `cat` of a
    `<(…)` may outlive bash for a moment on a busy machine, inside the sandbox or not."""
    return text.split("\n[still running in the background:")[0]


@kernel
def test_the_private_temporary_folder_is_writable_and_removed(tree, tmp_path):
    captured = ro('echo $TMPDIR; echo x > "$TMPDIR/f" && cat "$TMPDIR/f" && mktemp', tree[1], tmp_path)
    lines = captured.text.splitlines()
    assert lines[1] == "x" and lines[2].startswith(lines[0] + "/") and captured.exit_code == 0
    assert not Path(lines[0]).exists()


TARGETS = ["victim.txt", "u/a.txt", "u/?.txt", "u/*", "../outside.txt", "~/.config/s08/.env", "/dev/stdout",
           "/dev/stderr", "/proc/self/fd/1", "/proc/self/fd/3", "/dev/fd/1", "'victim.txt'", '"u/b.txt"',
           ".gi[at]/config", "$HOME/.config/s08/.env", "new.txt", ".git/config", "/dev/null"]
REDIRECTS = ["<", ">", ">>", "1<", "2<", "3<", "1<>", ">|", "&>", "&>>", "2>", "3>"]
PROGRAMS = ["echo X", "cat", "uniq", "sort -o", "tee", "tee -a", "cp victim.txt", "mv", "touch", "rm -f", "ln -sf x",
            "truncate -s0", "sed -i s/a/b/", "dd of=/dev/stdout if=victim.txt", "git checkout --", "exec", ":"]
DUPS = ["", " 1>&2", " 2>&1", " 1>&3", " 3>&1", " >&2"]


@st.composite
def commands(draw):
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        program = draw(st.sampled_from(PROGRAMS))
        operand = draw(st.sampled_from(TARGETS))
        redirect = draw(st.sampled_from(REDIRECTS)) + draw(st.sampled_from(TARGETS))
        extra = draw(st.sampled_from(["", " <<< 'X'", " <<< \"$(cat victim.txt)\"", " " + redirect]))
        parts.append(f"{program} {operand} {redirect}{extra}{draw(st.sampled_from(DUPS))}")
    return draw(st.sampled_from(["; ", " && ", " | ", " || "])).join(parts)


@kernel
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=commands())
def test_generated_commands_never_change_a_file_in_the_read_only_sandbox(tree, tmp_path, command):
    root, ws = tree
    before = digest(root)
    captured = ro(command, ws, tmp_path, timeout=2)      # `cat /dev/stdout` reads its own output pipe: it waits
    assert digest(root) == before, (command, captured.text)


@kernel
@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=commands())
def test_generated_commands_never_change_a_file_outside_the_workspace_in_workspace_mode(tree, tmp_path, command):
    root, ws = tree
    outside = {name: value for name, value in digest(root).items() if not name.startswith("ws/") and name != "ws"}
    captured = ro(command, ws, tmp_path, WORKSPACE, APPROVED, timeout=2)
    after = {name: value for name, value in digest(root).items() if not name.startswith("ws/") and name != "ws"}
    assert after == outside, (command, captured.text)


@kernel
def test_workspace_mode_writes_only_in_the_workspace(tree, tmp_path, listener):
    root, ws = tree
    port = listener.getsockname()[1]
    inside = ro("touch ./x && echo y > u/y.txt && mkdir d && rm victim.txt", ws, tmp_path, WORKSPACE, APPROVED)
    assert inside.exit_code == 0 and (ws / "x").exists() and (ws / "u" / "y.txt").exists()
    assert not (ws / "victim.txt").exists()
    outside = ro("touch ../x", ws, tmp_path, WORKSPACE, APPROVED)
    assert outside.exit_code != 0 and not (root / "x").exists()
    before = digest(root / "home")
    ro("echo X >> ~/.config/s08/.env", ws, tmp_path, WORKSPACE, APPROVED)
    assert digest(root / "home") == before
    for command in connects(port)[:2]:
        assert ro(command, ws, tmp_path, WORKSPACE, APPROVED).exit_code != 0 and not accepted(listener)
    assert ro(connects(port)[0], ws, tmp_path, WORKSPACE_NET, APPROVED).exit_code == 0 and accepted(listener)
    read_only = ro("touch ./z", ws, tmp_path, WORKSPACE, READ_ONLY)   # unasked commands stay read-only
    assert read_only.exit_code != 0 and not (ws / "z").exists()


@kernel
@pytest.mark.parametrize("loop", ["for i in $(seq 5000); do sleep 987 & done",     # (`while true` the guard refuses)
                                  "for i in {1..5000}; do setsid sleep 987 & done"])
def test_a_loop_of_background_jobs_ends_with_a_clear_error(tree, tmp_path, loop):
    from tools.registry import ToolContext, run_tool
    ws = tree[1]
    for sandbox, kind in ((RO, READ_ONLY), (RO, APPROVED)):
        ctx = ToolContext(workspace=ws, settings=Settings(), sandbox=replace(sandbox, max_processes=40), run_as=kind)
        result = run_tool("bash", {"command": loop}, ctx)
        assert result.is_error and "more than 40 processes" in result.content and "MAX_PROCESSES" in result.content
        assert "too many processes" in result.content
        assert result.meta["exit_code"] is None and not result.meta["timed_out"]
        assert not sleepers(), sleepers()


def bash_call(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


@pytest.mark.scripted
def test_without_a_sandbox_every_command_asks(app_for, standin, workspace):
    (workspace / "a.txt").write_text("hello\n")
    standin.queue(bash_call("cat a.txt"), {"text": "DONE"})
    app, events = app_for(approval_mode="default", s08_sandbox_unavailable="1")
    assert "S08_SANDBOX_UNAVAILABLE" in app.sandbox.problem and app.approvals.sandbox_problem
    asked = []
    app.set_asker(lambda request: asked.append(request.command) or Answer(True))
    assert app.turn("read it").text == "DONE"
    assert asked == ["cat a.txt"]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert "hello" in finished[0].content and not finished[0].is_error

    standin.queue(bash_call("cat a.txt"), {"text": "NOT RUN"})
    app.set_asker(None)
    assert app.turn("again").text == "NOT RUN"
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any(n.startswith("[approval needed] bash `cat a.txt`") and "S08_SANDBOX_UNAVAILABLE" in n for n in notices)


@kernel
@pytest.mark.scripted
def test_with_the_sandbox_read_only_commands_run_unasked_and_a_refusal_asks_next_time(app_for, standin, workspace):
    (workspace / "victim.txt").write_text("victim\n")
    attack = "echo X 1<victim.txt >/dev/stdout"
    standin.queue(bash_call("cat victim.txt"), bash_call(attack), bash_call(attack), {"text": "DONE"})
    app, events = app_for(approval_mode="default")
    asked = []
    app.set_asker(lambda request: asked.append(request.command) or Answer(False))
    assert app.turn("go").text == "DONE"
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert (workspace / "victim.txt").read_text() == "victim\n" and "victim" in finished[0].content
    assert not finished[0].meta.get("declined")
    if asked == [attack]:         # the classifier let the attack run: the sandbox refused it, the retry asked
        assert "read-only sandbox" in finished[1].content and finished[2].meta.get("declined")
    else:                         # the classifier asks at once: both were declined
        assert asked == [attack, attack]


def test_a_command_the_sandbox_refused_asks_the_next_time():
    from approvals.policy import Approvals
    policy = Approvals()
    call = {"command": "cat victim.txt"}
    assert policy.decide("bash", call, None, None) == (None, READ_ONLY)
    policy.sandbox_refused("cat victim.txt")
    refusal, how = policy.decide("bash", call, None, None)
    assert refusal is not None and "refused it before" in refusal.notice and how == ""
    asked = []
    policy.decide("bash", call, None, lambda request: asked.append(request) or Answer(True))
    assert asked[0].why == "asked because the read-only sandbox refused it before: a yes runs it outside the sandbox"
    from ui.approve import question_lines
    assert "refused it before" in "".join(line.plain for line in question_lines(asked[0], 120))
    assert policy.decide("bash", {"command": "cat other.txt"}, None, None) == (None, READ_ONLY)
    policy.sandbox_problem = "no Landlock"
    assert policy.decide("bash", {"command": "cat other.txt"}, None, None)[0] is not None
    assert Approvals("yolo").decide("bash", {"command": "cat a"}, None, None) == (None, "")
    assert Approvals(allow_commands=("touch",)).decide("bash", {"command": "touch a"}, None, None) == (None, "")


@kernel
def test_the_banner_and_context_say_why_every_command_asks(tmp_path, workspace):
    import io

    from rich.console import Console

    from commands import dispatch
    from support.agents import base_env
    from events import ContextReport
    from support.helpers import make_app
    from ui.sessions_view import print_banner
    for extra, shown in (({"S08_SANDBOX_UNAVAILABLE": "1"}, "S08_SANDBOX_UNAVAILABLE is set"),
                         ({"SANDBOX": "off"}, "SANDBOX=off: no kernel sandbox, so every command asks"),
                         ({"SANDBOX": "workspace"}, "every command writes only in the workspace")):
        app, events = make_app(workspace, {**base_env(tmp_path, None, approval_mode="default"), **extra}, demo="on")
        out = io.StringIO()
        print_banner(Console(file=out, width=300), app)
        assert shown in out.getvalue()
        dispatch(app, "/context")
        assert isinstance(events[-1], ContextReport) and shown in events[-1].sandbox
        app.close()


@kernel
def test_the_status_line_says_what_holds():
    assert f"Landlock ABI {ABI}" in RO.status() and "read-only" in RO.status()
    assert "workspace" in WORKSPACE.status() and "no TCP" in WORKSPACE.status()
    off = Sandbox.for_session(Settings(sandbox="off"), {})
    assert not off.available and "every command asks" in off.status()
    gone = Sandbox.for_session(Settings(sandbox="workspace"), {"S08_SANDBOX_UNAVAILABLE": "1"})
    assert "S08_SANDBOX_UNAVAILABLE" in gone.status() and "not in force" in gone.status()


def test_a_folders_env_relaxes_the_sandbox_only_with_consent(tmp_path, workspace):
    from support.agents import base_env
    from support.helpers import make_app
    (workspace / ".env").write_text("SANDBOX=workspace\nSANDBOX_NETWORK=on\nMAX_PROCESSES=100000\n")
    app, _ = make_app(workspace, base_env(tmp_path, None, approval_mode="default"), demo="on")
    assert app.access.relax_pending == {"SANDBOX_NETWORK": "on", "MAX_PROCESSES": "100000"}   # SANDBOX only tightens
    assert app.sandbox.mode == "workspace" and not app.sandbox.network and app.settings.max_processes == 512
    app.close()


@kernel
def test_when_the_launcher_cannot_set_up_the_sandbox_the_command_does_not_run(tmp_path):
    from tools.sandbox import FAILED, LAUNCHER, SETUP_FAILED
    launch = [sys.executable, "-S", "-I", str(LAUNCHER), "--write", str(tmp_path / "missing"), "--", "touch", "ran"]
    done = subprocess.run(launch, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == SETUP_FAILED and done.stderr.startswith(FAILED) and "is not a folder" in done.stderr
    assert not (tmp_path / "ran").exists()


FORKS = """
import os, time
n = 0
try:
    for i in range(60):
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
except OSError as e:
    print('stopped at', n, e.strerror)
"""


@kernel
@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"), reason="needs root to switch to a plain user")
def test_for_a_plain_user_the_kernel_bounds_the_processes_too():
    import tempfile

    from tools.sandbox import LAUNCHER
    tmp_path = Path(tempfile.mkdtemp(prefix="s08-nproc-"))       # pytest's own folders are root's only
    os.chmod(tmp_path, 0o777)
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    launch = [sys.executable, "-S", "-I", str(LAUNCHER), "--write", str(tmp_path), "--nproc", "20", "--",
              "python3", "-c", FORKS]
    done = subprocess.run(as_nobody + launch, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.startswith("stopped at") and "Resource temporarily unavailable" in done.stdout, done
    assert int(done.stdout.split()[2]) < 20
    root = subprocess.run(launch, capture_output=True, text=True, timeout=60, cwd=tmp_path)    # root: no bound
    shutil.rmtree(tmp_path)
    assert root.stdout == "", root


# --- issue 28, class 1: metadata and other processes' limits -------------------------------------------

MOUNTS_PROBLEM = probe_mounts({}) if not PROBLEM else PROBLEM
namespaces = pytest.mark.skipif(bool(MOUNTS_PROBLEM), reason=f"no read-only mounts for SANDBOX=workspace here "
                                                             f"(unprivileged user namespaces?): {MOUNTS_PROBLEM}")
RAW = Path(__file__).resolve().parents[1] / "support" / "raw_syscalls.py"


def metadata(root: Path) -> dict[str, tuple]:
    """Every path under `root` with its mode, owner, modification time and extended attributes."""
    found = {}
    for path in sorted([root, *root.rglob("*")]):
        info = path.lstat()
        xattrs = sorted((name, os.getxattr(path, name)) for name in os.listxattr(path)) if not path.is_symlink() else []
        found[str(path.relative_to(root))] = (info.st_mode, info.st_uid, info.st_gid, info.st_mtime_ns, xattrs,
                                              file_flags(path))
    return found


def file_flags(path: Path) -> str:
    """What `lsattr` says (chattr's flags), "" where the file system has none or lsattr is missing."""
    if not shutil.which("lsattr") or path.is_symlink():
        return ""
    done = subprocess.run(["lsattr", "-d", str(path)], capture_output=True, text=True)
    return done.stdout.split(" ")[0] if done.returncode == 0 else ""


@pytest.fixture
def meta_tree(tree):
    """`tree` with the key file 0600 and an extended attribute on a workspace file and on the outside one."""
    root, ws = tree
    os.chmod(root / "home" / ".config" / "s08" / ".env", 0o600)
    for path in (ws / "victim.txt", root / "outside.txt"):
        os.setxattr(path, "user.s08", b"kept")
    return root, ws


def py(code: str) -> str:
    return f"python3 -c \"import os; {code}\""


METADATA_ATTACKS = [
    "chmod 644 ~/.config/s08/.env", "chmod 644 $HOME/.config/s08/.env", "chmod 4777 victim.txt",
    "chmod 4777 ../outside.txt", "chmod -R a+rwx ..", "chmod 700 .", "touch -d 2000-01-01 victim.txt",
    "touch -d 2000-01-01 ../outside.txt", "touch -m -d @0 u/a.txt", "touch -h -d @0 ~/.config/s08/.env",
    py("os.chmod('victim.txt', 0o4777)"), py("os.chmod(os.open('../outside.txt', os.O_RDONLY), 0o777)"),
    py("os.utime('victim.txt', (0, 0))"), py("os.utime(os.open('../outside.txt', os.O_RDONLY), (0, 0))"),
    py("os.setxattr('victim.txt', 'user.s08', b'X')"), py("os.setxattr('../outside.txt', 'user.new', b'X')"),
    py("os.removexattr('victim.txt', 'user.s08')"), py("os.removexattr('../outside.txt', 'user.s08')"),
    py("os.setxattr(os.open('victim.txt', os.O_RDONLY), 'user.s08', b'X')"),
    py("os.chown('victim.txt', os.getuid(), 65534)"), py("os.lchown('victim.txt', 65534, 65534)"),
    "find . ../outside.txt -exec chmod 777 {} +", "cp -p ../outside.txt /dev/null; chmod 777 ../outside.txt",
    "chattr +A +d ../outside.txt victim.txt",                  # flags through a descriptor opened for reading
] + [f"python3 {RAW} {how} {target} 4777" for how in ("int80-chmod", "x32-chmod", "fchmodat2")
     for target in ("victim.txt", "../outside.txt", "$HOME/.config/s08/.env")] + (
    ["setfattr -n user.s08 -v X victim.txt", "setfattr -x user.s08 ../outside.txt"] if shutil.which("setfattr") else [])


@kernel
@pytest.mark.parametrize("command", METADATA_ATTACKS)
def test_no_metadata_changes_in_the_read_only_sandbox(meta_tree, tmp_path, command):
    root, ws = meta_tree
    before = metadata(root)
    captured = ro(command, ws, tmp_path)
    assert metadata(root) == before, captured.text
    assert captured.exit_code != 0 or "EPERM" in captured.text or "EACCES" in captured.text, captured.text


@kernel
def test_a_chown_to_the_same_owner_is_refused_too(tree, tmp_path):
    """A chown that would change nothing succeeds outside; inside the whole family is refused."""
    command = py("os.chown('victim.txt', os.getuid(), os.getgid()); print('CHANGED')")
    assert "CHANGED" in ro(command, tree[1], tmp_path, kind=APPROVED, sandbox=Sandbox(problem="off")).text
    captured = ro(command, tree[1], tmp_path)
    assert "CHANGED" not in captured.text and "Operation not permitted" in captured.text


@pytest.fixture
def sleeper():
    """A process of the person's (the test's), in a process group of its own, that the sandbox must not touch."""
    proc = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    yield proc.pid
    proc.kill()
    proc.wait()


def limits_of(pid: int) -> dict:
    import resource
    return {"limits": [resource.prlimit(pid, r) for r in (resource.RLIMIT_CPU, resource.RLIMIT_NOFILE,
                                                          resource.RLIMIT_MSGQUEUE, resource.RLIMIT_CORE)],
            "nice": os.getpriority(os.PRIO_PROCESS, pid), "cpus": os.sched_getaffinity(pid),
            "policy": os.sched_getscheduler(pid),
            "io": subprocess.run(["ionice", "-p", str(pid)], capture_output=True, text=True).stdout}


OTHER_PROCESS_ATTACKS = [
    "prlimit --pid {pid} --cpu=1", "prlimit --pid {pid} --nofile=3:3", "prlimit --pid {pid} --core=0:0",
    "renice -n 10 -p {pid}", "renice -n 10 -g {pid}", "taskset -p 1 {pid}", "chrt -i -p 0 {pid}",
    "ionice -c 3 -p {pid}", "ionice -c 3 -P {pid}",
    py("os.setpriority(os.PRIO_PGRP, {pid}, 12)"), py("os.sched_setaffinity({pid}, {{0}})"),
    "(prlimit --pid {pid} --cpu=1 &); wait", "sh -c 'renice -n 10 -p {pid}'",
]


@kernel
@pytest.mark.parametrize("command", OTHER_PROCESS_ATTACKS)
def test_no_other_process_limits_or_scheduling_change_in_the_read_only_sandbox(tree, tmp_path, sleeper, command):
    before = limits_of(sleeper)
    captured = ro(command.format(pid=sleeper), tree[1], tmp_path)
    assert limits_of(sleeper) == before, captured.text
    assert "Operation not permitted" in captured.text or captured.exit_code != 0, captured.text


@kernel
def test_s08s_own_limits_do_not_change_from_the_read_only_sandbox(tree, tmp_path):
    import resource
    before = resource.getrlimit(resource.RLIMIT_MSGQUEUE)
    try:
        captured = ro(f"prlimit --pid {os.getpid()} --msgqueue=4321: ; prlimit --pid $PPID --msgqueue=4321:",
                      tree[1], tmp_path)
        assert resource.getrlimit(resource.RLIMIT_MSGQUEUE) == before, captured.text
    finally:
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, before)


@kernel
def test_a_command_may_still_set_its_own_limits_and_priority(tree, tmp_path):
    command = ("ulimit -n 200 && ulimit -t 500 && nice -n 5 true && prlimit --cpu=400 true && taskset -c 0 true && "
               "chrt -b 0 true && ionice -c 3 true && "
               "python3 -c \"import os; os.sched_setaffinity(0, {0}); os.setpriority(os.PRIO_PROCESS, 0, 7)\" "
               "&& prlimit --pid $PPID --cpu | tail -n1 && echo OWN-OK")
    captured = ro(command, tree[1], tmp_path)
    assert captured.exit_code == 0 and "OWN-OK" in captured.text, captured.text
    by_pid = ro("renice -n 1 -p $$", tree[1], tmp_path)          # its own pid is refused: once the command has
    assert by_pid.exit_code != 0 and "Operation not permitted" in by_pid.text     # ended, it may be another's


@kernel
def test_the_refusal_note_names_metadata(tree, tmp_path):
    from tools.registry import ToolContext, run_tool
    ctx = ToolContext(workspace=tree[1], settings=Settings(), sandbox=RO, run_as=READ_ONLY)
    result = run_tool("bash", {"command": "chmod 600 victim.txt"}, ctx)
    assert result.is_error and "file modes, times or owners" in result.content
    assert result.meta["sandbox_refused"] == READ_ONLY


WORKSPACE_OUTSIDE_ATTACKS = [
    "chmod 600 ../outside.txt", "chmod 644 ~/.config/s08/.env", "chmod 4777 ../outside.txt",
    "touch -d 2000-01-01 ../outside.txt", "touch -m -d @0 ~/.config/s08/.env",
    py("os.setxattr('../outside.txt', 'user.new', b'X')"), py("os.removexattr('../outside.txt', 'user.s08')"),
    py("os.chmod(os.open('../outside.txt', os.O_RDONLY), 0o777)"),
    py("os.utime(os.open('../outside.txt', os.O_RDONLY), (0, 0))"),
    "ln ../outside.txt hard; chmod 777 hard; touch -d @0 hard",              # a hard link into the workspace
    "ln -s ../outside.txt soft; chmod 777 soft; touch -d @0 soft",
    "chmod 777 /proc/$PPID/root$(realpath ../outside.txt) /proc/$PPID/cwd/../outside.txt",
    "unshare -Urm sh -c 'mount -o remount,rw / ; chmod 777 ../outside.txt'",
    "unshare -Urm sh -c 'mount --bind .. ws-up && chmod 777 ws-up/outside.txt'",
    "chattr +A +d ../outside.txt",
] + [f"python3 {RAW} {how} ../outside.txt 777" for how in ("int80-chmod", "x32-chmod", "fchmodat2")]


@kernel
@namespaces
@pytest.mark.parametrize("command", WORKSPACE_OUTSIDE_ATTACKS)
def test_workspace_mode_changes_no_metadata_outside_the_workspace(meta_tree, tmp_path, command):
    root, ws = meta_tree
    outside = {k: v for k, v in metadata(root).items() if not k.startswith("ws")}
    captured = ro(command, ws, tmp_path, WORKSPACE, APPROVED)
    assert {k: v for k, v in metadata(root).items() if not k.startswith("ws")} == outside, captured.text


@kernel
@namespaces
def test_workspace_mode_still_changes_metadata_inside_the_workspace(meta_tree, tmp_path):
    root, ws = meta_tree
    command = ("chmod +x victim.txt && touch -d 2000-01-01 u/a.txt && mkdir -p d && chmod 700 d && "
               "python3 -c \"import os; os.setxattr('u/b.txt', 'user.new', b'Y')\" && echo x > $TMPDIR/t && "
               "chmod 600 $TMPDIR/t && id -u && echo ALL-OK")
    captured = ro(command, ws, tmp_path, WORKSPACE, APPROVED)
    assert captured.exit_code == 0 and "ALL-OK" in captured.text, captured.text
    assert f"\n{os.getuid()}\n" in "\n" + captured.text                   # the same user inside the namespace
    assert os.stat(ws / "victim.txt").st_mode & 0o111 and (ws / "d").stat().st_mode & 0o777 == 0o700
    assert (ws / "u" / "a.txt").stat().st_mtime < 1e9 and os.getxattr(ws / "u" / "b.txt", "user.new") == b"Y"


SET_ID_ATTACKS = [
    "chmod 4777 victim.txt", "chmod u+s victim.txt", "chmod g+s u", "install -m 4755 victim.txt evil",
    "cp victim.txt evil; chmod 6755 evil", py("os.close(os.open('evil', os.O_CREAT | os.O_WRONLY, 0o4755))"),
    py("os.mknod('evil', 0o104755)"), f"python3 {RAW} openat2-create evil 4755",
    f"python3 {RAW} fchmodat2 victim.txt 4755", f"python3 {RAW} int80-chmod victim.txt 4755",
]


@kernel
@pytest.mark.parametrize("command", SET_ID_ATTACKS)
def test_no_set_id_bit_in_the_workspace_under_workspace_mode(tree, tmp_path, command):
    """A set-user-ID file of the person's in the workspace would run as them for every local user."""
    ws = tree[1]
    captured = ro(command, ws, tmp_path, WORKSPACE, APPROVED)
    for path in [ws, *ws.rglob("*")]:
        assert not path.lstat().st_mode & 0o6000, (path, captured.text)


@kernel
def test_the_ways_past_a_seccomp_filter_are_closed(tree, tmp_path):
    """io_uring (its operations skip seccomp) and openat2 (its mode sits in memory) are refused in both modes."""
    for sandbox, kind in ((RO, READ_ONLY), (WORKSPACE, APPROVED)):
        assert ro(f"python3 {RAW} io_uring x 0", tree[1], tmp_path, sandbox, kind).text.startswith("EACCES")
        assert ro(f"python3 {RAW} openat2-create new 644", tree[1], tmp_path, sandbox, kind).text.startswith("ENOSYS")


def test_workspace_mode_without_namespaces_says_metadata_outside_is_not_covered():
    degraded = Sandbox("workspace", False, 6, "", 0, "namespaces setup failed: unshare: Operation not permitted")
    assert "NOT covered: file modes and times outside it (namespaces setup failed" in degraded.status()
    argv = degraded.launch(APPROVED, "true", "/tmp", Path("/ws"))
    assert "--read-only-mounts" not in argv and "--read-only-mounts" in replace(degraded, mounts_problem="").launch(
        APPROVED, "true", "/tmp", Path("/ws"))


@kernel
@namespaces
@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"), reason="needs root to switch to a plain user")
def test_for_a_plain_user_workspace_mode_keeps_metadata_outside_too():
    """The user namespace maps the person's own uid: `chmod +x` in the workspace works, outside it is EROFS."""
    import tempfile

    from tools.sandbox import LAUNCHER
    root = Path(tempfile.mkdtemp(prefix="s08-plain-"))           # pytest's own folders are root's only
    try:
        for folder in (root / "ws", root / "tmp"):
            folder.mkdir()
        (root / "outside.txt").write_text("outside\n")
        for path in (root, root / "ws", root / "tmp", root / "outside.txt"):
            os.chown(path, 65534, 65534)
        before = metadata(root / "outside.txt")
        python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
        launch = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-S", "-I", str(LAUNCHER),
                  "--write", str(root / "ws"), "--write", str(root / "tmp"), "--read-only-mounts", "--",
                  "bash", "-c", "id -u; echo x > f && chmod +x f && echo INSIDE-OK; chmod 600 ../outside.txt; "
                                "touch -d @0 ../outside.txt"]
        done = subprocess.run(launch, capture_output=True, text=True, timeout=60, cwd=root / "ws")
        assert done.stdout.split() == ["65534", "INSIDE-OK"], done
        assert (root / "ws" / "f").stat().st_mode & 0o111 and "Read-only file system" in done.stderr
        assert metadata(root / "outside.txt") == before
    finally:
        shutil.rmtree(root)


@kernel
def test_no_process_outside_can_be_traced_to_change_its_limits_from_within(tree, tmp_path, sleeper):
    """ptrace would let a command make another process call prlimit itself: Landlock keeps it to the sandbox."""
    attach = ("python3 -c \"import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
              f"print('ATTACHED' if libc.ptrace(16, {sleeper}, 0, 0) == 0 else 'REFUSED', ctypes.get_errno())\"")
    for sandbox, kind in ((RO, READ_ONLY), (WORKSPACE, APPROVED)):
        captured = ro(attach, tree[1], tmp_path, sandbox, kind)
        assert "REFUSED 1" in captured.text, captured.text

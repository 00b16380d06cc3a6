"""The bash guard: the trivial variants of what it refuses, what it must still let through, and
linear work on huge commands (checked in a subprocess with a generous limit, never a timed assert)."""

from __future__ import annotations


import pytest
from hypothesis import given, strategies as st

from tools import ToolContext, run_tool
from tools.bash_guard import MAX_COMMAND_BYTES, dangerous_reason, normalize


@pytest.mark.parametrize("command", [
    "rm -rf /./", "rm -rf //", "rm -rf /usr/../", "rm -rf /.", "rm -rf ~/", "rm -rf ~/.", 'rm -rf "$HOME"/',
    "rm -rf /home/*/", "rm -Rf /etc/", "rm --recursive --force /", "rm -rf -- /", "rm -r -f /*",
    "cd / && rm -rf *", "cd /usr; rm -rf .", "cd /usr/local && rm -rf ../*", "cd && rm -rf *", "cd ~; rm -rf ./*",
    "env -i rm -rf /", "env -u PATH rm -rf /", "sudo -u root rm -rf /", "sudo -i rm -rf /", "nice -n 5 rm -rf /",
    "busybox rm -rf /", "exec -a x rm -rf /", "timeout -s KILL 5 rm -rf /", "setsid rm -rf /",
    "if true; then rm -rf /; fi", "env -S 'rm -rf /'", "su -c 'rm -rf /'",
    "kill -9 -1", "kill -- -1", "kill -s KILL -1", "kill -KILL -1", "/bin/kill -1 -1", "killall5 -9", "pkill -9 .",
    "find / -delete", "find /. -delete", "cd / && find . -delete", "find / -type f -delete",
    "find /usr -exec rm -rf {} +", "chmod -R 777 /", "chown -R nobody:nogroup /usr", "chmod -R a-rwx ~",
    "mv / /tmp/x", "mv /usr /dev/null", "mkswap /dev/sda2", "blkdiscard /dev/nvme0n1", "truncate -s 0 /dev/sda",
    "echo c > /proc/sysrq-trigger", "echo b >/proc/sysrq-trigger",
    "fork() { fork | fork & }; fork", "bomb () {\n bomb | bomb &\n}\nbomb",
])
def test_trivial_variants_are_refused(command):
    assert dangerous_reason(command), command


@pytest.mark.parametrize("command", [
    "rm -rf ./build", "rm -rf build/", "cd /tmp/work && rm -rf *", "cd build && rm -rf *", "(cd / && ls); rm -rf ./x",
    "kill -1 1234", "kill -9 1234", "kill -- 1234", "kill -l", "pkill -f 'python server.py'",
    "find . -name '*.pyc' -delete", "find / -name '*.pyc' -delete", "find /tmp/x -delete", "find / -name x -print",
    "chmod -R 755 ./scripts", "chmod 755 /usr/local/bin/tool", "chown -R me ./out", "mv /tmp/a /tmp/b",
    "env -i PATH=/bin ls", "sudo -u me ls /", "echo 'kill -9 -1'", "grep -r 'rm -rf /' docs/",
    "cat /proc/cpuinfo", "echo hi > /tmp/x", "function build { make; }; build",
])
def test_ordinary_commands_still_run(command):
    assert dangerous_reason(command) is None, command


@pytest.mark.parametrize("path,cwd,expected", [
    ("/./", None, "/"), ("//usr//", None, "/usr"), ("/usr/../etc/./", None, "/etc"), ("~", None, "~"),
    ("~/..", None, "/"), ("$HOME/x", None, "~/x"), ("x", None, None), ("*", "/", "/*"), ("..", "/usr", "/"),
    ("y", "~", "~/y"),
])
def test_paths_are_normalized(path, cwd, expected):
    assert normalize(path, cwd) == expected


def test_commands_over_the_kernel_limit_are_refused_before_the_guard_runs(workspace):
    r = run_tool("bash", {"command": "echo " + "a" * MAX_COMMAND_BYTES}, ToolContext(workspace=workspace))
    assert r.is_error and "limit is" in r.content and "Write long scripts to a file" in r.content


SHELLS = ["sh", "bash", "dash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "ash", "/bin/sh", "busybox sh"]


@pytest.mark.parametrize("shell", SHELLS)
def test_every_shell_s_command_string_is_looked_into(shell):
    for form in (f"{shell} -c 'rm -rf /'", f"{shell} -lc 'cd / && rm -rf *'", f"{shell} -e -c \"rm -rf /\"",
                 f"sudo {shell} -c 'rm -rf /'", f"{shell} <<< 'rm -rf /'", f"{shell} <<'EOF'\nrm -rf /\nEOF",
                 f"echo 'rm -rf /' | {shell}", f"cat <<EOF | {shell}\nrm -rf /\nEOF"):
        assert dangerous_reason(form), form
    assert dangerous_reason(f"{shell} -c 'rm -rf ./build'") is None
    assert dangerous_reason("fish --command='rm -rf /'")


@pytest.mark.parametrize("command", [
    "while true; do sleep 100 & done", "while :; do :& done", "until false; do sleep 1 & done",
    "while true; do (sleep 100 &); done", "bash -c 'while true; do sleep 1 & done'",
])
def test_an_endless_loop_of_background_jobs_is_refused(command):
    assert dangerous_reason(command), command


@pytest.mark.parametrize("command", [
    "for i in 1 2 3; do sleep 1 & done; wait", "while true; do sleep 1 & break; done",
    "while read f; do gzip \"$f\" & done < list", "while true; do sleep 1; done &",
    "cat <<EOF\nrm -rf /\nEOF", "echo 'rm -rf /' | grep rm", "/opt/tools/env ls",
])
def test_bounded_loops_and_text_that_only_mentions_a_command_run(command):
    assert dangerous_reason(command) is None, command


@given(st.text(st.sampled_from("ab $-{}=~*?./!:,[]@%^+();<>|&`'\"\\#\t\r\n\x0b\x0c\u00a0é中\x00"), max_size=60))
def test_the_guard_reads_any_text_without_failing(text):
    dangerous_reason(text)
    dangerous_reason(text + "; rm -rf /")



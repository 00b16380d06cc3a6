"""The bash guard: the trivial variants of what it refuses, what it must still let through, and
linear work on huge commands (checked in a subprocess with a generous limit, never a timed assert)."""

from __future__ import annotations


import pytest
from hypothesis import given, strategies as st

from tools import ToolContext, run_tool
from tools.bash_guard import MAX_COMMAND_BYTES, PLAIN_WORDS, _lex, dangerous_reason, normalize


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


@given(st.text(st.sampled_from("ab $-{}=~*?./!:,[]@%^+();<>|&`\t\r\n\x0b\x0c\u00a0é中\x00"), max_size=40))
def test_words_without_quotes_escapes_or_comments_split_as_shlex_splits_them(text):
    assert PLAIN_WORDS.findall(text) == _lex(text)



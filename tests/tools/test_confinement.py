"""File tools against races and links, and s08's own files out of their reach.

The race tests swap a path component for a link that leads out of the workspace *after* the path
was checked and before it is used — the moment a background command would need to hit — by
wrapping the check. Whatever the swap, nothing outside the workspace is read, created or changed.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading

import pytest

import tools.files
from tools import ToolContext, run_tool

KEY = "sk-ant-api03-confinement-test-key-abcdef0123456789"


@pytest.fixture
def ctx(workspace):
    return ToolContext(workspace=workspace, secrets=(KEY,))


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "f.txt").write_text("SECRET OUTSIDE\n")
    return folder


def call(ctx, name, **args):
    return run_tool(name, args, ctx)


def swap_after_check(monkeypatch, swap):
    """Run `swap()` right after the path check, before the file is opened."""
    original = tools.files.resolve_in_workspace

    def checked_then_swapped(workspace, path):
        target = original(workspace, path)
        swap()
        return target
    monkeypatch.setattr(tools.files, "resolve_in_workspace", checked_then_swapped)


def dir_to_link(folder, to):
    def swap():
        shutil.rmtree(folder)
        folder.symlink_to(to)
    return swap


@pytest.mark.parametrize("tool,args", [("read_file", {}), ("edit_file", {"old_text": "inside", "new_text": "X"}),
                                       ("write_file", {"content": "planted"})])
def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(ctx, workspace, outside, monkeypatch, tool, args):
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("inside SECRET OUTSIDE\n")
    swap_after_check(monkeypatch, dir_to_link(sub, outside))
    r = call(ctx, tool, path="sub/f.txt", **args)
    assert r.is_error and "path changed" in r.content
    assert (outside / "f.txt").read_text() == "inside SECRET OUTSIDE\n" and "SECRET" not in r.content
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]


def test_a_new_file_in_a_folder_swapped_for_a_link_is_not_created_outside(ctx, workspace, outside, monkeypatch):
    sub = workspace / "sub"
    sub.mkdir()
    swap_after_check(monkeypatch, dir_to_link(sub, outside))
    r = call(ctx, "write_file", path="sub/new.txt", content="planted")
    assert r.is_error and not (outside / "new.txt").exists()


def test_a_file_swapped_for_a_link_is_neither_read_nor_written_through(ctx, workspace, outside, monkeypatch):
    target = workspace / "f.txt"
    target.write_text("inside\n")

    def swap():
        target.unlink()
        target.symlink_to(outside / "f.txt")
    swap_after_check(monkeypatch, swap)
    r = call(ctx, "read_file", path="f.txt")
    assert r.is_error and "SECRET" not in r.content
    monkeypatch.undo()
    swap_after_check(monkeypatch, lambda: None)
    r = call(ctx, "edit_file", path="f.txt", old_text="SECRET", new_text="X")
    assert (outside / "f.txt").read_text() == "SECRET OUTSIDE\n"


def test_a_file_swapped_for_a_fifo_after_every_check_is_refused_without_waiting(ctx, workspace, monkeypatch):
    target = workspace / "f.txt"
    target.write_text("inside\n")
    original = tools.files._checked_file

    def checked_then_swapped(ctx, path):
        result = original(ctx, path)
        target.unlink()
        os.mkfifo(target)
        return result
    monkeypatch.setattr(tools.files, "_checked_file", checked_then_swapped)
    # an open() of a FIFO without a writer blocks for ever; should it happen, this writer ends the wait
    rescue = threading.Timer(30, lambda: os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK)))
    rescue.start()
    try:
        r = call(ctx, "read_file", path="f.txt")
    finally:
        rescue.cancel()
    assert r.is_error and "not a regular file" in r.content


def test_fifos_and_devices_are_not_replaced(ctx, workspace):
    os.mkfifo(workspace / "pipe")
    r = call(ctx, "write_file", path="pipe", content="x")
    assert r.is_error and stat.S_ISFIFO((workspace / "pipe").lstat().st_mode)
    try:
        os.mknod(workspace / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        return                                      # not root: no device node to test with
    r = call(ctx, "write_file", path="null", content="x")
    assert r.is_error and "not a regular file" in r.content
    assert stat.S_ISCHR((workspace / "null").lstat().st_mode)


def test_hard_linked_files_are_not_written_or_edited(ctx, workspace, outside):
    os.link(outside / "f.txt", workspace / "h.txt")
    for tool, args in (("write_file", {"content": "x"}), ("edit_file", {"old_text": "SECRET", "new_text": "x"})):
        r = call(ctx, tool, path="h.txt", **args)
        assert r.is_error and "hard links" in r.content
    assert (outside / "f.txt").read_text() == "SECRET OUTSIDE\n" and os.stat(outside / "f.txt").st_nlink == 2


def test_setuid_and_setgid_bits_are_dropped_when_a_file_is_rewritten(ctx, workspace):
    target = workspace / "tool"
    target.write_text("#!/bin/sh\necho old\n")
    os.chmod(target, 0o6755)
    assert not call(ctx, "edit_file", path="tool", old_text="old", new_text="new").is_error
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    os.chmod(target, 0o4755)
    assert not call(ctx, "write_file", path="tool", content="#!/bin/sh\n").is_error
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_links_that_stay_inside_still_work(ctx, workspace):
    (workspace / "real.txt").write_text("real\n")
    (workspace / "alias.txt").symlink_to("real.txt")
    assert call(ctx, "read_file", path="alias.txt").content == "real\n"
    assert not call(ctx, "edit_file", path="alias.txt", old_text="real", new_text="edited").is_error
    assert (workspace / "real.txt").read_text() == "edited\n" and (workspace / "alias.txt").is_symlink()


# ---- s08's own files ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", [".env", "./.env", ".sessions/20260101-000000-abcdef.jsonl", ".sessions/new.jsonl",
                                  "alias-to-env"])
def test_settings_files_and_session_logs_are_refused_to_the_writing_tools(ctx, workspace, path):
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    (workspace / ".sessions").mkdir()
    (workspace / ".sessions/20260101-000000-abcdef.jsonl").write_text("{}\n")
    (workspace / "alias-to-env").symlink_to(".env")
    for tool, args in (("write_file", {"content": "ANTHROPIC_BASE_URL=http://evil"}),
                       ("edit_file", {"old_text": "ANTHROPIC", "new_text": "X"})):
        r = call(ctx, tool, path=path, **args)
        assert r.is_error and ("settings file" in r.content or ".sessions/" in r.content), (tool, r.content)
    assert (workspace / ".env").read_text() == f"ANTHROPIC_API_KEY={KEY}\n"
    assert (workspace / ".sessions/20260101-000000-abcdef.jsonl").read_text() == "{}\n"
    assert not (workspace / ".sessions/new.jsonl").exists()


def test_the_env_file_in_use_and_the_user_settings_file_are_refused(workspace, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(workspace / "config"))
    (workspace / "config/s08").mkdir(parents=True)
    ctx = ToolContext(workspace=workspace, settings_files=(workspace / "conf/my.env",))
    for path in ("conf/my.env", "config/s08/.env"):
        r = call(ctx, "write_file", path=path, content="ANTHROPIC_BASE_URL=http://evil")
        assert r.is_error and "settings file" in r.content
    assert not (workspace / "conf/my.env").exists() and not (workspace / "config/s08/.env").exists()


def test_read_file_of_env_is_allowed_and_redacted(ctx, workspace):
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\nMODEL_ID=m\n")
    r = call(ctx, "read_file", path=".env")
    assert not r.is_error and KEY not in r.content
    assert r.content == "ANTHROPIC_API_KEY=[redacted]\nMODEL_ID=m\n"


def test_a_key_on_an_overlong_line_is_redacted_before_the_line_is_cut(ctx, workspace):
    from tools.files import MAX_LINE_CHARS
    (workspace / "long.txt").write_text("x" * (MAX_LINE_CHARS - 10) + KEY + "y" * 100 + "\n")
    r = call(ctx, "read_file", path="long.txt")
    assert KEY[:10] not in r.content


def test_a_file_holding_the_key_is_not_rewritten_whole_with_the_redacted_copy(ctx, workspace):
    (workspace / "config.json").write_text(f'{{"key": "{KEY}", "debug": false}}\n')
    seen = call(ctx, "read_file", path="config.json").content
    assert "[redacted]" in seen
    r = call(ctx, "write_file", path="config.json", content=seen.replace("false", "true"))
    assert r.is_error and "contains the API key" in r.content
    assert not call(ctx, "edit_file", path="config.json", old_text="false", new_text="true").is_error
    assert (workspace / "config.json").read_text() == f'{{"key": "{KEY}", "debug": true}}\n'

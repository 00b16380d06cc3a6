"""read_file, write_file, edit_file and workspace confinement — checked on real files."""

from __future__ import annotations

import os

import pytest

from tools import ToolContext, run_tool
from tools.files import READ_MAX_CHARS


@pytest.fixture
def ctx(workspace):
    return ToolContext(workspace=workspace)


def call(ctx, name, **args):
    return run_tool(name, args, ctx)


def test_write_creates_parents_and_read_returns_content(ctx, workspace):
    r = call(ctx, "write_file", path="deep/er/note.txt", content="alpha\nbeta\n")
    assert not r.is_error and "Created deep/er/note.txt" in r.content
    assert (workspace / "deep/er/note.txt").read_text() == "alpha\nbeta\n"
    assert call(ctx, "read_file", path="deep/er/note.txt").content == "alpha\nbeta\n"
    r = call(ctx, "write_file", path="deep/er/note.txt", content="gamma")
    assert "Overwrote" in r.content and (workspace / "deep/er/note.txt").read_text() == "gamma"


def test_write_is_atomic_and_keeps_mode(ctx, workspace):
    target = workspace / "run.sh"
    target.write_text("old")
    os.chmod(target, 0o755)
    call(ctx, "write_file", path="run.sh", content="#!/bin/sh\necho new\n")
    assert target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in workspace.iterdir()] == ["run.sh"]   # no temp file left behind


def test_read_in_pieces_with_offset_and_limit(ctx, workspace):
    (workspace / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    r = call(ctx, "read_file", path="big.txt", offset=10, limit=3)
    assert r.content.startswith("line 10\nline 11\nline 12\n")
    assert "offset=13" in r.content
    r = call(ctx, "read_file", path="big.txt", offset=99)
    assert r.content.startswith("line 99\nline 100\n") and "end of file" in r.content
    r = call(ctx, "read_file", path="big.txt", offset=500)
    assert r.is_error and "only 100 lines" in r.content


def test_read_caps_characters_per_call_and_says_where_to_continue(ctx, workspace):
    (workspace / "wide.txt").write_text("".join(f"{i:05d} " + "x" * 200 + "\n" for i in range(1000)))
    r = call(ctx, "read_file", path="wide.txt")
    assert len(r.content) <= READ_MAX_CHARS + 500
    assert "more follows" in r.content and "offset=" in r.content
    next_offset = int(r.content.rsplit("offset=", 1)[1].split()[0])
    r2 = call(ctx, "read_file", path="wide.txt", offset=next_offset, limit=1)
    assert r2.content.startswith(f"{next_offset - 1:05d} ")


def test_read_huge_single_line_is_cut_not_loaded(ctx, workspace):
    (workspace / "min.js").write_bytes(b"a" * 5_000_000)
    r = call(ctx, "read_file", path="min.js")
    assert not r.is_error and "cut at" in r.content and len(r.content) < 10_000


def test_read_binary_is_refused_clearly(ctx, workspace):
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    r = call(ctx, "read_file", path="img.png")
    assert r.is_error and "binary file" in r.content


def test_read_non_utf8_never_crashes(ctx, workspace):
    (workspace / "latin.txt").write_bytes("café naïve\n".encode("latin-1"))
    r = call(ctx, "read_file", path="latin.txt")
    assert not r.is_error and "caf\ufffd" in r.content and "not valid UTF-8" in r.content


def test_read_missing_and_directory(ctx, workspace):
    assert "no such file" in call(ctx, "read_file", path="nope.txt").content
    (workspace / "sub").mkdir()
    assert "is a directory" in call(ctx, "read_file", path="sub").content
    (workspace / "empty.txt").write_text("")
    assert "empty" in call(ctx, "read_file", path="empty.txt").content


@pytest.mark.parametrize("count, expected", [(0, "found 0 times"), (2, "found 2 times")])
def test_edit_requires_exactly_one_occurrence(ctx, workspace, count, expected):
    (workspace / "f.py").write_text("x = 1\n" * count + "y = 2\n")
    r = call(ctx, "edit_file", path="f.py", old_text="x = 1", new_text="x = 3")
    assert r.is_error and expected in r.content
    assert (workspace / "f.py").read_text() == "x = 1\n" * count + "y = 2\n"   # untouched


def test_edit_replaces_the_single_occurrence(ctx, workspace):
    (workspace / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    r = call(ctx, "edit_file", path="f.py", old_text="b = 2", new_text="b = 20\nb2 = 21")
    assert not r.is_error and "line 2" in r.content
    assert (workspace / "f.py").read_text() == "a = 1\nb = 20\nb2 = 21\nc = 3\n"


def test_edit_handles_crlf_files(ctx, workspace):
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    r = call(ctx, "edit_file", path="w.txt", old_text="one\ntwo", new_text="1\n2")
    assert not r.is_error
    assert (workspace / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_refuses_non_utf8_and_empty_old_text(ctx, workspace):
    (workspace / "l.txt").write_bytes("café\n".encode("latin-1"))
    assert "not valid UTF-8" in call(ctx, "edit_file", path="l.txt", old_text="caf", new_text="x").content
    (workspace / "ok.txt").write_text("hi\n")
    assert "old_text is empty" in call(ctx, "edit_file", path="ok.txt", old_text="", new_text="x").content


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "sub/../../outside.txt", "~/.bashrc"])
def test_paths_outside_the_workspace_are_refused(ctx, workspace, path):
    for name, extra in [("read_file", {}), ("write_file", {"content": "x"}),
                        ("edit_file", {"old_text": "a", "new_text": "b"})]:
        r = call(ctx, name, path=path, **extra)
        assert r.is_error and "outside the workspace" in r.content, (name, r.content)
    assert not (workspace.parent / "outside.txt").exists()


def test_symlink_leading_out_is_refused(ctx, workspace, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    (workspace / "link.txt").symlink_to(secret)
    (workspace / "linkdir").symlink_to(tmp_path)
    assert "outside the workspace" in call(ctx, "read_file", path="link.txt").content
    r = call(ctx, "write_file", path="linkdir/new.txt", content="x")
    assert r.is_error and not (tmp_path / "new.txt").exists()
    assert secret.read_text() == "top secret"


def test_absolute_path_inside_workspace_is_fine(ctx, workspace):
    (workspace / "in.txt").write_text("inside\n")
    assert call(ctx, "read_file", path=str(workspace / "in.txt")).content == "inside\n"


def test_new_files_follow_the_umask_and_read_only_files_are_not_replaced(ctx, workspace):
    call(ctx, "write_file", path="new.txt", content="x")
    mask = os.umask(0)
    os.umask(mask)
    assert (workspace / "new.txt").stat().st_mode & 0o777 == 0o666 & ~mask
    locked = workspace / "locked.txt"
    locked.write_text("keep me")
    os.chmod(locked, 0o444)
    r = call(ctx, "write_file", path="locked.txt", content="overwritten")
    assert r.is_error and "read-only" in r.content and locked.read_text() == "keep me"


def test_s08_folders_are_git_ignored(ctx, workspace):
    from tools.bash import MEMORY_CAP
    run_tool("bash", {"command": f"head -c {MEMORY_CAP + 10} /dev/zero | tr '\\\\0' x"}, ctx)
    ignore = workspace / ".task_outputs" / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "*"

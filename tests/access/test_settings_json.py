"""The JSON settings files: read as they are, and nothing a repository ships in their place can hang,
flood or crash the reader."""

import json
import os

from access import settings_json


def test_reads_claude_codes_schema(tmp_path):
    path = settings_json.project_file(tmp_path)
    path.parent.mkdir()
    path.write_text(json.dumps({"permissions": {"allow": ["mcp__time"]}, "hooks": {}}))
    assert settings_json.read(path).data["permissions"] == {"allow": ["mcp__time"]}
    assert settings_json.read(path).problem is None


def test_missing_is_empty_without_a_word(tmp_path):
    assert settings_json.read(tmp_path / "none.json") == settings_json.Loaded()


def test_user_file_follows_xdg(tmp_path):
    assert settings_json.user_file({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "s08" / "settings.json"


def test_link_fifo_device_big_and_bad_json_are_ignored_with_one_line(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text('{"permissions": {"allow": ["Bash"]}}')
    (tmp_path / "link.json").symlink_to(outside)
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "big.json").write_text("[" + "1," * settings_json.MAX_BYTES + "1]")
    (tmp_path / "nan.json").write_text('{"x": NaN}')
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "bytes.json").write_bytes(b"\xff\xfe{")
    for name in ("link.json", "fifo.json", "zero.json", "big.json", "nan.json", "list.json", "bytes.json"):
        loaded = settings_json.read(tmp_path / name)
        assert loaded.data == {} and loaded.problem and "\n" not in loaded.problem, name

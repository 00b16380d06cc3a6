"""What s08 learned to adapt for an endpoint (the plain form), kept in the consent file next to the folders'
consents: neither rewrites the other away, the URL is kept without its password, and a file someone
else could have written is not believed (access/credentials.py)."""

from __future__ import annotations

import os

from access.credentials import (agreed_values, consent_file, endpoint_adaptations, remember_adaptation,
                                remember_values)


def test_an_adaptation_and_a_folder_consent_live_side_by_side(tmp_path):
    user_file = tmp_path / "config" / "s08" / ".env"
    remember_adaptation(user_file, "http://gw.example:4000/", "plain_system")
    remember_values(user_file, tmp_path / "project", {"ANTHROPIC_BASE_URL": "http://gw.example:4000"})
    remember_adaptation(user_file, "http://other.example", "plain_system")
    assert endpoint_adaptations(user_file, "http://gw.example:4000") == {"plain_system"}
    assert endpoint_adaptations(user_file, "http://other.example/") == {"plain_system"}
    assert endpoint_adaptations(user_file, "https://api.anthropic.com") == set()
    assert agreed_values(user_file, tmp_path / "project") == {"ANTHROPIC_BASE_URL": "http://gw.example:4000"}
    assert oct(consent_file(user_file).stat().st_mode & 0o777) == "0o600"


def test_a_url_with_a_password_is_kept_without_it(tmp_path):
    user_file = tmp_path / ".env"
    remember_adaptation(user_file, "http://me:s3cret@gw.example", "plain_system")
    assert "s3cret" not in consent_file(user_file).read_text()
    assert endpoint_adaptations(user_file, "http://me:s3cret@gw.example") == {"plain_system"}


def test_a_file_others_could_write_is_not_believed(tmp_path):
    user_file = tmp_path / ".env"
    path = remember_adaptation(user_file, "http://gw.example", "plain_system")
    os.chmod(path, 0o666)
    assert endpoint_adaptations(user_file, "http://gw.example") == set()

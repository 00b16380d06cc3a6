"""The test lanes are drawn by path: tests that start processes live in tests/e2e/ and only those are
`slow` (tests/conftest.py marks them), so `pytest -m "not slow"` is the in-process lane."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
E2E = TESTS / "e2e"
STARTS_A_PROCESS = re.compile(r"\b(pexpect|spawn_agent|run_agent|popen_agent|AGENT)\b|\"-m\", \"standin\"")


def test_exactly_the_tests_under_e2e_are_slow(request):
    items = request.session.items
    assert items
    for item in items:
        assert (item.get_closest_marker("slow") is not None) == item.path.is_relative_to(E2E), item.nodeid


def test_no_test_outside_e2e_starts_s08():
    modules = [path for path in TESTS.rglob("test_*.py") if not path.is_relative_to(E2E) and path != Path(__file__)]
    assert len(modules) > 30
    starting = {str(path.relative_to(TESTS)): match.group() for path in modules
                if (match := STARTS_A_PROCESS.search(path.read_text()))}
    assert not starting, f"these start processes: move them to tests/e2e/ ({starting})"

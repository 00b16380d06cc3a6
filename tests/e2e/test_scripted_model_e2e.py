"""The provider seam in a new interpreter: importing it does not import the SDK."""

from __future__ import annotations

import subprocess
import sys

from support.agents import ROOT


def test_importing_the_seam_does_not_import_the_sdk():
    code = "import sys, llm, loop; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

"""A real LiteLLM proxy for the gateway lane (tests/e2e/test_gateway.py): s08 → LiteLLM's `/v1/messages` →
the stand-in speaking `/v1/chat/completions` (standin/openai_chat.py), as a company gateway in front of a
small local model would be set up.

    with LiteLLMGateway(backend_url, model="small-model") as gw:   gw.url is ANTHROPIC_BASE_URL for s08

The proxy comes from its own venv, made by .ci/gateway-venv (pinned in .ci/gateway-requirements.txt):
`.ci-venvs/litellm` in the clone, or the folder S08_GATEWAY_VENV names. Outside CI a missing venv
skips the lane with the reason; in CI (CI=true) it fails. It starts on a free loopback port, offline:
no cost map download, no telemetry, its home and config in a temporary folder.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from support.sockets import free_port

ROOT = Path(__file__).resolve().parents[2]
WINDOW = 4096               # the backend's context window (the default `backend` fixture)
MODEL = "small-model"       # the model name the proxy serves (the gateway fixture in tests/conftest.py)
START_TIMEOUT = 120.0       # seconds: it imports a lot, and CI's cores are shared


def gateway_venv() -> Path:
    return Path(os.environ.get("S08_GATEWAY_VENV") or ROOT / ".ci-venvs" / "litellm")


def litellm_program() -> Path:
    """The proxy's program; skips (fails in CI) when its venv is missing."""
    program = gateway_venv() / "bin" / "litellm"
    if not program.exists():
        reason = f"LiteLLM gateway venv missing ({program}): run bash .ci/gateway-venv to make it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return program


CONFIG = """model_list:
  - model_name: {model}
    litellm_params:
      model: openai/{model}
      api_base: {backend}/v1
      api_key: backend-key
litellm_settings:
  telemetry: false
"""


class LiteLLMGateway:
    def __init__(self, backend_url: str, folder: Path, model: str = "small-model"):
        self.backend_url, self.folder, self.model = backend_url, folder, model
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.log = folder / "litellm.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "LiteLLMGateway":
        program = litellm_program()
        self.folder.mkdir(parents=True, exist_ok=True)
        config = self.folder / "config.yaml"
        config.write_text(CONFIG.format(model=self.model, backend=self.backend_url))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.folder), "LANG": "C.UTF-8",
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False", "LITELLM_LOG": "ERROR",
               "NO_PROXY": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1"}
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([str(program), "--config", str(config), "--host", "127.0.0.1",
                                             "--port", str(self.port), "--num_workers", "1", "--telemetry", "False"],
                                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.folder,
                                            start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"litellm exited ({self.process.returncode}): {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health/liveliness", timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"litellm did not start in {START_TIMEOUT:g}s: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

"""The built-in demo model: s08 without a key.

When no key is configured anywhere (or with `--demo`), s08 starts the
stand-in's scripted brain (standin/brain.py) on a background thread, on a
free port of 127.0.0.1, and points itself at it. Nothing is short-circuited:
the agent talks to it through the real SDK, real HTTP and SSE streaming, and
the stand-in checks every request as strictly as the real API does.

    demo = DemoModel().start()
    settings = demo.settings_for(settings)     # base URL, a one-off key, the demo's model name
    ...
    demo.stop()

Every answer it gives starts with LABEL, and the UI says "offline demo model"
in the banner and the status line, so a scripted reply never passes for a
real model's.
"""

from __future__ import annotations

import dataclasses
import secrets

from standin import Brain, StandIn

DEMO_MODEL = "s08-demo"
LABEL = "[demo] "
STREAM_DELAY = 0.005       # seconds between streamed chunks: text appears as it would from a model


class DemoModel:
    """The in-process stand-in serving the demo brain."""

    def __init__(self):
        self.key = secrets.token_urlsafe(24)      # only this process can talk to it
        self.server: StandIn | None = None

    def start(self) -> "DemoModel":
        if self.server is None:
            # no admin endpoints: another local process (or a web page) must not queue the tool calls it runs
            self.server = StandIn(brain=Brain(label=LABEL), api_key=self.key, delay=STREAM_DELAY,
                                  record=False, admin=False).start()
        return self

    @property
    def url(self) -> str:
        return self.server.url if self.server else ""

    def settings_for(self, settings):
        """The same settings, pointed at the demo: its URL and key, its model name, price zero."""
        return dataclasses.replace(settings, anthropic_base_url=self.url, anthropic_api_key=self.key,
                                   anthropic_auth_token="", model_id=DEMO_MODEL, model_price="0,0")

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

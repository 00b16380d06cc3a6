"""Which model answers: one name per provider, picked by the PROVIDER setting.

Adding a provider is one module (a class with `stream(request, emit)` and `secrets()`, see
llm/contract.py) plus one line here; config.py's PROVIDER_NAMES lists the same names (config knows no provider class).
"""

from __future__ import annotations

from llm.anthropic_api import AnthropicProvider
from llm.scripted import ScriptedModel

PROVIDERS = {
    "anthropic": AnthropicProvider,
    "scripted": ScriptedModel,
}


def make_provider(settings, key_source: str = "", secrets: tuple | None = None):
    """The provider the settings name, configured (`secrets`: every credential to keep out of its lines)."""
    return PROVIDERS[getattr(settings, "provider", "anthropic")](settings, key_source, secrets)

"""The layer interface: what one cheap compaction layer is, and what it is given.

    class MicroCompact(SettingsLayer):                   one module per layer (micro.py, …)
        name = CompactionKind.MICRO_COMPACT              what its events say
        settings_class = MicroSettings                   its own settings, defaults = config.py's;
                                                         SettingsLayer gives __init__ and from_settings
        def __call__(self, messages, context) -> list    the identity contract (see __init__.py)

    pipeline.LAYERS = (ToolResultBudget, SnipCompact, MicroCompact)     the order they run in

A layer keeps nothing between calls: what must last (the snip transcript, the files it wrote, the
facts about each message) lives in the LayerContext the Compactor hands it, so reloading the
settings rebuilds the layers and loses nothing. A layer may raise OSError (a full disk): the
pipeline then skips it for that call and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from events import CompactionKind, Emit, ignore

if TYPE_CHECKING:
    from .continuity import Continuity
    from .index import MessageIndex
    from .window import Window


@dataclass
class LayerContext:
    """What the layers of one pipeline run share. `index` is in step with the messages a layer is
    given (the pipeline syncs it after a layer that changed the history). `snip_transcript`: the
    session's snip transcript — snip appends to it, or sets it when it starts one. `cold`: the turn
    started after the prompt cache expired, so old results are cleared whatever their batch size."""
    workspace: Path
    continuity: Continuity
    window: Window
    index: MessageIndex
    emit: Emit = ignore
    cold: bool = False
    snip_transcript: Path | None = None


class Layer(Protocol):
    name: ClassVar[CompactionKind]

    @classmethod
    def from_settings(cls, settings) -> Layer: ...

    def __call__(self, messages: list[dict], context: LayerContext) -> list[dict]: ...


class SettingsLayer:
    """What every layer with a settings dataclass shares: built from those settings (their defaults
    when none are given) or from the one Settings table (`settings_class.from_settings`)."""
    settings_class: ClassVar[Any]

    def __init__(self, settings=None):
        self.settings = self.settings_class() if settings is None else settings

    @classmethod
    def from_settings(cls, settings):
        return cls(cls.settings_class.from_settings(settings))

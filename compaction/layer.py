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
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from events import Emit, ignore

if TYPE_CHECKING:
    from .continuity import Continuity
    from .index import HistoryIndex
    from .window import Window


class CompactionKind(str, Enum):
    """What a Compaction event reports: a str (== its value), printed as its value; `.label` is the
    name notices show. (enum.StrEnum would do, but s08 still runs on Python 3.10.)"""
    TOOL_RESULT_BUDGET = "tool_result_budget"
    SNIP_COMPACT = "snip_compact"
    MICRO_COMPACT = "micro_compact"
    AUTO_COMPACT = "auto_compact"
    MANUAL_COMPACT = "manual_compact"
    REACTIVE_COMPACT = "reactive_compact"
    COMPACTED = "compacted"              # a summary replaced the history (auto or manual)
    TRANSCRIPT = "transcript"            # the history was saved before a summary
    FALLBACK = "fallback"                # the summary failed: cut without the model

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def label(self) -> str:
        """How the screen names it: `[manual compact]`, `[auto_compact triggered]`."""
        return "manual compact" if self is CompactionKind.MANUAL_COMPACT else self.value


@dataclass
class LayerContext:
    """What the layers of one pipeline run share. `index` is in step with the messages a layer is
    given (the pipeline syncs it after a layer that changed the history). `snip_transcript`: the
    session's snip transcript — snip appends to it, or sets it when it starts one. `cold`: the turn
    started after the prompt cache expired, so old results are cleared whatever their batch size."""
    workspace: Path
    continuity: Continuity
    window: Window
    index: HistoryIndex
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

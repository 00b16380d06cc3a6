"""Context compaction: four layers, cheapest first, run before every model call.

    tool_result_budget → snip_compact → micro_compact → compact_history     (pipeline.py)
    reactive_compact   when the API says the prompt is too long            (summary.py)
    estimate_tokens    the prompt's size as the API will count it           (tokens.py)
    Continuity         what every cut keeps: the person's messages, the work ledger (continuity.py)

Every layer takes the message list first, returns a new list, never mutates
its input, has defaults from the settings, and reports what it did as events
(it prints nothing). boundaries.py decides where a history may be cut.
"""

from .boundaries import safe_cuts, unseen_start
from .budget import tool_result_budget
from .continuity import Continuity
from .micro import micro_compact
from .pipeline import Compactor
from .snip import snip_compact
from .summary import MAX_REACTIVE_RETRIES, SummaryFailed, compact_history, reactive_compact
from .index import ContextMeter, HistoryIndex
from .tokens import estimate_tokens

__all__ = ["tool_result_budget", "snip_compact", "micro_compact", "compact_history", "reactive_compact",
           "estimate_tokens", "Compactor", "ContextMeter", "SummaryFailed", "MAX_REACTIVE_RETRIES",
           "safe_cuts", "unseen_start", "Continuity", "HistoryIndex"]

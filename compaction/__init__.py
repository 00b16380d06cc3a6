"""Context compaction: four layers, cheapest first, run before every model call.

    tool_result_budget → snip_compact → micro_compact → compact_history     (pipeline.py)
    reactive_compact   when the API says the prompt is too long            (summary.py)
    estimate_tokens    the prompt's size as the API will count it           (tokens.py)
    Continuity         what every cut keeps: the person's messages, the work ledger (continuity.py)
    recent_start       what every compaction keeps whole: the newest work the model has seen (recent.py)
    cut_to_target      clear seen results, oldest first, to a token target (cut.py)

The three cheap layers are objects with one interface (layer.py): a `name` (a CompactionKind),
their own settings (defaults equal to config.py's; `from_settings` builds them from the one
Settings table) and `__call__(messages, context) -> messages`. The pipeline runs them in the
order of pipeline.LAYERS. Each also exists as a plain function (tool_result_budget, snip_compact,
micro_compact) for callers without a pipeline. The summary layer takes one SummaryJob. Layers
report what they did as events (they print nothing); boundaries.py decides where a history may
be cut; markers.py holds the texts that start what they write.

The identity contract — every layer, the functions and Compactor.prepare keep it:
  - a layer returns a list; when it changes nothing, it may return its input list itself;
  - it never mutates its input: not the list, not a message, not a block;
  - a message it did not change is the very same object in the output (`is`, not just `==`);
  - a message it changed, or wrote (a marker, a summary), is a new dict;
  - the output is a valid request: no tool_use/tool_result pair is split.
The MessageIndex (index.py) and so the ContextMeter's anchor rely on it: their facts about a
message are kept while the same object stays in place. The session log relies on it: `replace`
diffs the old history against the new and writes only what changed (session/log.py), and the prompt
cache is hit only while the prefix stays byte-identical. tests/compaction/test_compaction_identity.py
checks it with hypothesis for every layer and for the pipeline.
"""

from .boundaries import safe_cuts, unseen_start
from .budget import BudgetSettings, ToolResultBudget, tool_result_budget
from .continuity import Continuity
from .index import ContextMeter, MessageIndex
from .layer import CompactionKind, Layer, LayerContext
from .micro import MicroCompact, MicroSettings, micro_compact
from .pipeline import LAYERS, Compactor
from .snip import SnipCompact, SnipSettings, snip_compact, snip_to_transcript
from .summary import MAX_REACTIVE_RETRIES, SummaryFailed, SummaryJob, compact_history, reactive_compact
from .tokens import estimate_tokens

__all__ = ["tool_result_budget", "snip_compact", "snip_to_transcript", "micro_compact", "compact_history",
           "reactive_compact", "estimate_tokens", "Compactor", "ContextMeter", "SummaryFailed", "SummaryJob",
           "MAX_REACTIVE_RETRIES", "safe_cuts", "unseen_start", "Continuity", "MessageIndex", "CompactionKind",
           "Layer", "LayerContext", "LAYERS", "ToolResultBudget", "BudgetSettings", "SnipCompact", "SnipSettings",
           "MicroCompact", "MicroSettings"]

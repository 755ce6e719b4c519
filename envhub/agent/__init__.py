"""What sits between an env and a model: memory, projection and prompt building.

* :class:`EpisodeMemory` — per-episode records and their history windows (verl-agent step
  format, search format, AgentOCR line format).
* :func:`project` and the rule functions — model text -> action, validity and reason; they
  never raise on any input. An env's rule is ``envhub.envs.resolve(name).projection``.
* :func:`build_messages` / :func:`family_template` — chat messages from an env's templates
  (the module its catalogue entry names), the memory window, the current observation and the
  admissible actions.
"""

from envhub.agent.memory import MEMORY_STYLES, EpisodeMemory, HistoryWindow, MemoryRecord
from envhub.agent.projection import (
    PROJECTIONS,
    CompressionTag,
    Projection,
    ToolCall,
    as_text,
    has_cjk,
    parse_compression,
    project,
    project_search_answer,
    project_think_action,
    project_tool_call,
    projector,
    strip_compression,
)
from envhub.agent.prompt import FIELDS, PromptTemplate, build_messages, family_template, format_admissible

__all__ = [
    "FIELDS",
    "MEMORY_STYLES",
    "PROJECTIONS",
    "CompressionTag",
    "EpisodeMemory",
    "HistoryWindow",
    "MemoryRecord",
    "Projection",
    "PromptTemplate",
    "ToolCall",
    "as_text",
    "build_messages",
    "family_template",
    "format_admissible",
    "has_cjk",
    "parse_compression",
    "project",
    "project_search_answer",
    "project_think_action",
    "project_tool_call",
    "projector",
    "strip_compression",
]

"""The prompt module of envhub/TauRetail-v0 (contract: :mod:`envhub.agent.prompt`).

The templates are :mod:`envhub.envs.tau.prompt`'s; ``SYSTEM`` is the retail policy with the tool
list and the ``<tool_call>`` syntax, read from the data when first asked for.
"""

from __future__ import annotations

from typing import Any

from envhub.envs.tau.prompt import (
    FIRST_STEP,
    HISTORY_LENGTH,
    MEMORY_STYLE,
    WITH_HISTORY,
    domain_system_prompt,
)

__all__ = ["FIRST_STEP", "HISTORY_LENGTH", "MEMORY_STYLE", "SYSTEM", "WITH_HISTORY"]

SYSTEM: str


def __getattr__(name: str) -> Any:
    if name == "SYSTEM":
        return domain_system_prompt("retail")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

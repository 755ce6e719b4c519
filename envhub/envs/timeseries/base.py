"""What the two time-series envs share: numbered task ids, tool steps, invalid actions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from envhub.core.env import AgentEnv, Outcome
from envhub.core.tasks import NumberedTaskIds
from envhub.envs.timeseries.actions import ToolCall
from envhub.envs.timeseries.tools import run_tool

__all__ = ["SeriesToolEnv"]


class SeriesToolEnv(AgentEnv):
    """Base of the time-series envs: subclasses fill ``self._ids`` and answer the final action.

    The anchor is the latest tool result (the reset observation before any tool); an invalid
    action keeps it, since the agent learned nothing new.
    """

    def __init__(self, *, render_mode: str | None = None) -> None:
        super().__init__(render_mode=render_mode)
        self._ids: dict[str, NumberedTaskIds] = {}
        self._anchor = ""

    def _task_ids(self, split: str) -> Sequence[str]:
        return self._ids[split]

    def has_task(self, task_id: str) -> bool:
        return any(task_id in ids for ids in self._ids.values())

    def _invalid(self, message: str, extra: dict[str, Any]) -> Outcome:
        return Outcome(
            f"Invalid action: {message}",
            anchor=self._anchor,
            is_action_valid=False,
            task_score=0.0,
            extra=extra,
        )

    def _tool(self, call: ToolCall, x: NDArray[np.float64], extra: dict[str, Any]) -> Outcome:
        result = run_tool(call.name, x, call.start, call.end)
        self._anchor = result
        extra["tool"] = call.name
        return Outcome(result, task_score=0.0, extra=extra)

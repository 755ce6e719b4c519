"""Built-in ALFWorld policies: the planner-walkthrough expert used by ``envhub demo``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["WalkthroughPolicy"]


class WalkthroughPolicy:
    """Replays the game's stored planner walkthrough (``game.tw-pddl``'s ``walkthrough``).

    The walkthrough is read from the game file named in ``info["gamefile"]``. When a game has
    no walkthrough, or the replay runs out (the agent was pushed off the plan), the policy
    falls back to a uniformly random admissible command other than ``help``.

    Args:
        seed: seed of the fallback's generator.
    """

    def __init__(self, seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)
        self._plan: list[str] = []

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self._plan = list(reversed(_walkthrough(info.get("gamefile"))))

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._plan:
            return self._plan.pop()
        actions = [a for a in info.get("admissible_actions") or [] if a != "help"]
        return str(actions[int(self._rng.integers(len(actions)))]) if actions else "look"


def _walkthrough(gamefile: object) -> list[str]:
    if not gamefile:
        return []
    try:
        data = json.loads(Path(str(gamefile)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # a policy never raises: without a plan it plays the fallback
    plan = data.get("walkthrough") if isinstance(data, dict) else None
    return [str(c) for c in plan] if isinstance(plan, list) else []

"""The minimal policy interface used by built-in policies, the demo and tests.

A policy sees what an agent sees (the text observation and the ``info`` dict) and answers
with an action string. LLM policies live higher up (``envhub.rollout``/``envhub.train``);
this protocol is what scripted and heuristic policies implement.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Policy", "RandomPolicy"]


@runtime_checkable
class Policy(Protocol):
    """Chooses text actions; ``reset`` is called with the first observation of each episode."""

    def reset(self, observation: str, info: dict[str, Any]) -> None: ...

    def act(self, observation: str, info: dict[str, Any]) -> str: ...


class RandomPolicy:
    """Uniform over ``info["admissible_actions"]`` when the env lists them, else random text.

    Args:
        seed: seed of the policy's own generator (independent of the env's).
    """

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        return None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        actions = info.get("admissible_actions")
        if actions:
            return str(actions[int(self._rng.integers(len(actions)))])
        words = observation.split() or ["look"]
        k = int(self._rng.integers(1, 4))
        return " ".join(str(words[int(i)]) for i in self._rng.integers(len(words), size=k))

"""Scripted policies for the eval tests (loaded by name, also in subprocesses)."""

from __future__ import annotations

from typing import Any

from envhub.envs.timeseries.policy import HeuristicPolicy, RandomToolPolicy
from envhub.policy.base import PolicyBackend
from envhub.policy.scripted import ScriptedBackend


class MixedPolicy:
    """The heuristic for an even seed, the random tool policy for an odd one.

    So the samples of one task differ: c takes many values between 0 and n across tasks.
    """

    def __init__(self, seed: int = 0) -> None:
        self._inner: Any = HeuristicPolicy(seed) if seed % 2 == 0 else RandomToolPolicy(seed)

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self._inner.reset(observation, info)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return str(self._inner.act(observation, info))


def slow_heuristic(**kwargs: Any) -> PolicyBackend:
    """The heuristic with 50 ms per call, so a run can be killed halfway."""
    return ScriptedBackend(make_policy=HeuristicPolicy, latency=lambda prompt: 0.05, **kwargs)


slow_heuristic.scripted_factory = True  # type: ignore[attr-defined]


class TauCoinPolicy:
    """tau's gold agent for an even seed; an agent that closes at once for an odd one (it fails)."""

    def __init__(self, seed: int = 0) -> None:
        from envhub.envs.tau.policy import GoldPolicy

        self._gold = seed % 2 == 0
        self._inner = GoldPolicy(seed)

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self._inner.reset(observation, info)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        from envhub.envs.tau.policy import CLOSING_MESSAGE

        return self._inner.act(observation, info) if self._gold else CLOSING_MESSAGE

"""Scripted policies the rollout-service tests name as ``scripted:tests.rollout.scripted_policies:...``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from envhub.core.errors import PolicyUnavailableError
from envhub.envs.timeseries.policy import HeuristicPolicy
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.scripted import ScriptedBackend, think_action


def slow_heuristic(**kwargs: Any) -> ScriptedBackend:
    """The time-series heuristic with 0.1 s per policy call (a job that takes a while)."""
    return ScriptedBackend(make_policy=HeuristicPolicy, latency=lambda p: 0.1, **kwargs)


slow_heuristic.scripted_factory = True  # type: ignore[attr-defined]


def dies_after_a_while(**kwargs: Any) -> ScriptedBackend:
    """Answers the first 12 calls, then the endpoint is down for good."""
    calls = {"n": 0}

    def fail(prompt: Prompt) -> PolicyUnavailableError | None:
        calls["n"] += 1
        if calls["n"] > 12:
            return PolicyUnavailableError("the policy endpoint went away", endpoint="scripted")
        return None

    return ScriptedBackend(make_policy=HeuristicPolicy, fail=fail, **kwargs)


dies_after_a_while.scripted_factory = True  # type: ignore[attr-defined]


def stateless(prompt: Prompt) -> str:
    """Depends only on the step index: a resumed episode continues exactly as an unbroken one."""
    step = int(prompt.metadata["step_idx"])
    return think_action(f"stats[0:{10 * (step + 1)}]" if step < 5 else "answer[normal]")


def stateless_slow(**kwargs: Any) -> ScriptedBackend:
    """:func:`stateless`, slow: a job still running when it is killed, killed between env steps.

    The first step takes 0.1 s, every later one 1 s: a kill that follows the first journaled
    step lands while the policy thinks, not while an env step is in flight (a step the env
    took but the journal never saw leaves the session ahead of the journal, and the group is
    then re-run, correctly, instead of resumed).
    """
    return ScriptedBackend(
        stateless, latency=lambda p: 0.1 if int(p.metadata["step_idx"]) == 0 else 1.0, **kwargs
    )


stateless_slow.scripted_factory = True  # type: ignore[attr-defined]


class _SeedEcho(ScriptedBackend):
    """Writes each call's sampling seed into its answers (``<think>seed=S</think>``)."""

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        completions = await super().generate(prompts, sampling)
        return [
            replace(c, text=f"<think>seed={sampling.seed}</think><action>stats[0:10]</action>")
            for c in completions
        ]


def seed_echo(**kwargs: Any) -> ScriptedBackend:
    """Plays ``stats[0:10]`` and says which sampling seed the step was given (seed_each_step tests)."""
    return _SeedEcho(lambda p: think_action("stats[0:10]"), **kwargs)


seed_echo.scripted_factory = True  # type: ignore[attr-defined]

"""The best observation-blind policy's success, exactly, by enumeration.

A blind (open-loop) policy never reads the observation: it plays a fixed sequence of actions,
or draws one from a fixed distribution over sequences. A distribution's success is the
average of its sequences' successes, so no distribution beats the best single sequence, and
the ceiling of every blind policy is ``max over sequences s of mean over tasks of won(s, task)``.

:func:`blind_ceiling` computes it by playing every sequence of ``max_steps`` actions from a
finite action set against every task, on the real env (a depth-first search that copies the
env after each step, so a shared prefix is played once). An episode that is won before the
sequence ends counts as won (the rollout stops there too). A learning test that claims the
policy read the observation must beat this number, not the untrained model's.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["BlindCeiling", "blind_ceiling", "recipe_blind_ceiling"]


@dataclass(frozen=True)
class BlindCeiling:
    """The best blind policy over a task set: its success, one best sequence, what was searched."""

    success: float
    sequence: tuple[str, ...]
    tasks: int
    sequences: int
    max_steps: int

    def describe(self) -> str:
        return (
            f"best blind policy: {self.success:.3f} on {self.tasks} tasks "
            f"({' '.join(self.sequence)}; {self.sequences} sequences of {self.max_steps} steps searched)"
        )


def _winning_prefixes(
    env: Any, actions: Sequence[str], depth: int, prefix: tuple[str, ...], out: set
) -> None:
    for action in actions:
        child = copy.deepcopy(env)
        _, _, terminated, truncated, info = child.step(action)
        here = (*prefix, action)
        if info.get("won"):
            out.add(here)
        elif not (terminated or truncated) and depth > 1:
            _winning_prefixes(child, actions, depth - 1, here, out)


def blind_ceiling(
    make_env: Callable[[], Any],
    task_ids: Sequence[str],
    *,
    max_steps: int,
    actions: Sequence[str],
) -> BlindCeiling:
    """The exact success of the best open-loop policy of ``max_steps`` actions over ``task_ids``.

    Args:
        make_env: builds the env (an envhub env; ``reset(options={"task_id": ...})``).
        task_ids: the task set (each weighs the same; repeat an id to weigh it more).
        max_steps: the episode's step limit (the rollout's ``max_steps``).
        actions: every action a policy can take, no-ops included (``len(actions) ** max_steps``
            sequences are scored).
    """
    if max_steps < 1 or not actions or not task_ids:
        raise ValueError("blind_ceiling needs max_steps >= 1, some actions and some tasks")
    env = make_env()
    wins: list[set[tuple[str, ...]]] = []
    try:
        for task in task_ids:
            env.reset(options={"task_id": task})
            found: set[tuple[str, ...]] = set()
            _winning_prefixes(env, actions, max_steps, (), found)
            wins.append(found)
    finally:
        env.close()
    best: tuple[int, tuple[str, ...]] = (-1, ())
    count = 0
    for sequence in itertools.product(actions, repeat=max_steps):
        count += 1
        prefixes = {sequence[:i] for i in range(1, max_steps + 1)}
        won = sum(1 for found in wins if found & prefixes)
        if won > best[0]:
            best = (won, sequence)
    return BlindCeiling(best[0] / len(task_ids), best[1], len(task_ids), count, max_steps)


def recipe_blind_ceiling(config: Any, *, split: str | None = None, tasks: int | None = None) -> BlindCeiling:
    """:func:`blind_ceiling` over a Sokoban recipe's validation tasks (the held-out ones it scores).

    The actions are the four moves and ``still``; any other reply is an invalid no-op, which
    moves nothing, as ``still`` does.
    """
    import envhub
    from envhub.envs.sokoban.room import ACTIONS

    v = config.validation
    kwargs = dict(config.rollout.env_kwargs or {})
    env: Any = envhub.make(config.env, **kwargs)
    try:
        ids = list(env.unwrapped.task_ids(split or v.split))[: tasks or v.tasks]
    finally:
        env.close()
    return blind_ceiling(
        lambda: envhub.make(config.env, **kwargs),
        ids,
        max_steps=config.rollout.max_steps,
        actions=(*ACTIONS, "still"),
    )

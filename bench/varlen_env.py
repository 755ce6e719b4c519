"""The env ``bench/rollout_vllm.py`` serves: ALFWorld-shaped text whose episode length is set by the task.

A tiny random-init model never solves a real ALFWorld game, so on the real env every episode
would run to the turn cap and all episodes would have one length. This env keeps what makes
ALFWorld episodes uneven and drops what a random policy cannot do: task ``task-<i>`` ends after
a number of steps fixed by ``i`` alone (whatever the actions), with ALFWorld-style observations
(rooms, receptacles, an admissible-action list) so that prompts have ALFWorld's shape and size.

Lengths (:func:`episode_length`, deterministic in the task index): a task is *solved* with
probability ``SOLVED`` (0.6); a solved task ends, won, after ``w × f`` steps (rounded up), ``w``
drawn from the walkthrough lengths of the 12 ALFWorld games embedded in envhub (4-10 planner
steps) and ``f`` uniform in [1, 2] (an agent that explores a little); an unsolved task never
ends by itself, so the rollout's turn cap truncates it, as ALFWorld's step limit does to a
failing agent. The env does no real work per step (a string format), so the benchmark measures
the policy server and the rollout loops, not the env.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from envhub.core.env import AgentEnv, Outcome

__all__ = ["SOLVED", "WALKTHROUGH_LENGTHS", "VarLenEnv", "episode_length"]

#: Planner walkthrough lengths of the 12 ALFWorld games under envhub/envs/alfworld/data.
WALKTHROUGH_LENGTHS = (4, 4, 5, 5, 6, 7, 7, 7, 7, 7, 9, 10)
#: Share of tasks the agent solves (the others run to the turn cap).
SOLVED = 0.6
#: Tasks per split.
TASKS = 100_000

_RECEPTACLES = (
    "cabinet",
    "countertop",
    "drawer",
    "fridge",
    "microwave",
    "shelf",
    "sinkbasin",
    "stoveburner",
    "garbagecan",
    "coffeemachine",
    "diningtable",
    "toaster",
)
_OBJECTS = ("apple", "bread", "butterknife", "cup", "egg", "fork", "knife", "lettuce", "mug", "pan", "plate")
_GOALS = ("put a clean {o} in {r}", "put a hot {o} in {r}", "put a cool {o} in {r}", "put some {o} on {r}")


def episode_length(index: int) -> int | None:
    """Steps until task ``index`` ends (won), or None for a task that is never solved."""
    rng = np.random.default_rng([7, index])
    if rng.random() >= SOLVED:
        return None
    walkthrough = int(rng.choice(WALKTHROUGH_LENGTHS))
    return math.ceil(walkthrough * rng.uniform(1.0, 2.0))


class VarLenEnv(AgentEnv):
    """ALFWorld-shaped text episodes whose length the task fixes.

    ## Description
    A household room in ALFWorld's words. Every step moves the agent to a receptacle and lists
    what lies there; the action is recorded but does not change where the episode goes. Built
    to benchmark rollout loops on variable-length episodes with a policy that cannot solve
    anything (a random-init model).

    ## Action Space
    Any Unicode string (ALFWorld commands are expected; none is refused).

    ## Observation Space
    ALFWorld-style text; the first one ends with ``Your task is to: ...``.

    ## Rewards
    1.0 on the step that ends a solved task, else 0.

    ## Starting State
    The middle of a room with 12 kinds of receptacle.

    ## Episode End
    Task ``task-<i>`` terminates (won) after :func:`episode_length` (i) steps; unsolved tasks never
    terminate (the caller's step limit truncates them).

    ## Information
    ``admissible_actions`` (ALFWorld-style commands), ``won``, ``task_id``, ``anchor`` (the step).

    ## Arguments
    None.

    ## Reference
    ALFWorld (Shridhar et al., 2021) for the text; the walkthrough lengths of envhub's embedded games.

    ## Version History
    * v0: first version.
    """

    family = "varlen"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._index = 0
        self._length: int | None = None
        self._count = 0

    def _task_ids(self, split: str) -> Sequence[str]:
        return [f"task-{i}" for i in range(TASKS)]

    def _actions(self) -> list[str]:
        at = self._index + self._count
        actions = [f"go to {r} {1 + (at + k) % 3}" for k, r in enumerate(_RECEPTACLES)]
        thing = _OBJECTS[at % len(_OBJECTS)]
        return [*actions, f"take {thing} 1 from {_RECEPTACLES[at % 12]} 1", "inventory", "look"]

    def _reset_task(self, task_id: str) -> Outcome:
        self._index = int(task_id.rsplit("-", 1)[-1])
        self._length = episode_length(self._index)
        self._count = 0
        room = ", ".join(f"a {r} {k}" for r in _RECEPTACLES for k in (1, 2))
        goal = _GOALS[self._index % len(_GOALS)].format(
            o=_OBJECTS[self._index % len(_OBJECTS)], r=_RECEPTACLES[(self._index // 3) % 12]
        )
        observation = (
            "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly "
            f"around you, you see {room}.\n\nYour task is to: {goal}."
        )
        return Outcome(observation=observation, anchor="0", admissible_actions=self._actions())

    def _step(self, action: str) -> Outcome:
        self._count += 1
        at = self._index + self._count
        place = f"{_RECEPTACLES[at % 12]} {1 + at % 3}"
        things = ", ".join(f"a {_OBJECTS[(at + k) % len(_OBJECTS)]} {1 + k}" for k in range(1 + at % 4))
        done = self._length is not None and self._count >= self._length
        return Outcome(
            observation=f"You arrive at {place}. On the {place}, you see {things}.",
            anchor=str(self._count),
            reward=1.0 if done else 0.0,
            terminated=done,
            won=done,
            admissible_actions=self._actions(),
        )

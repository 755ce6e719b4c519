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

Where the action space is free text and only the final answer is scored (Search-QA, Math),
the sequences cannot be listed, but they need not be: :func:`answer_ceiling` finds the best
single answer from the golden answers (its docstring says why that set suffices), and
:func:`search_blind_ceiling` and :func:`math_blind_ceiling` apply it with each env's own rule.
:func:`recipe_blind_ceiling` picks the family's (:data:`BLIND_CEILING_FAMILIES`).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from envhub.core.errors import ConfigurationError

__all__ = [
    "BLIND_CEILING_FAMILIES",
    "BlindCeiling",
    "answer_ceiling",
    "blind_ceiling",
    "math_blind_ceiling",
    "recipe_blind_ceiling",
    "search_blind_ceiling",
]

_K = TypeVar("_K", bound=Hashable)


@dataclass(frozen=True)
class BlindCeiling:
    """The best blind policy over a task set: its success, one best sequence, what was searched.

    ``sequences`` counts what was compared: action sequences, or candidate answers for
    :func:`answer_ceiling` (then ``max_steps`` is 1 and ``searched`` says so).
    """

    success: float
    sequence: tuple[str, ...]
    tasks: int
    sequences: int
    max_steps: int
    searched: str = ""

    def describe(self) -> str:
        searched = self.searched or f"{self.sequences} sequences of {self.max_steps} steps searched"
        return (
            f"best blind policy: {self.success:.3f} on {self.tasks} tasks "
            f"({' '.join(self.sequence)}; {searched})"
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


def answer_ceiling(
    make_env: Callable[[], Any],
    task_ids: Sequence[str],
    *,
    golden: Callable[[Any], Sequence[str]],
    key: Callable[[str], _K | None],
    action: Callable[[_K], str],
) -> BlindCeiling:
    """The exact success of the best fixed answer over ``task_ids``, for an env that scores answers.

    For envs whose success depends on the final answer alone, through a key of it: the episode
    is won exactly when ``key(answer)`` is the key of one of the task's golden answers
    (Search-QA: EM, the key is the normalised string; Math: the key is the number). A blind
    policy's answer cannot depend on the task, and nothing before the answer (searching, a
    teammate's critique) changes how the answer is scored, so the best blind policy is the
    best single answer, and only its key matters. An answer whose key is no golden answer's
    key wins no task; an answer with golden key ``k`` wins exactly the tasks with a golden
    answer of key ``k``. So the keys of the golden answers, each counted once per task, are
    every candidate there is (two different golden strings with one key, e.g. "The Paris" and
    "paris", are one candidate: the normalisation collisions), and the most frequent key is
    the ceiling. Ties go to the key met first in task order.

    The winning answer is then played on every task through the real env (reset, one step),
    and its wins must equal the count: the env's own rule confirms the number.

    Args:
        make_env: builds the env (an envhub env; ``reset(options={"task_id": ...})``).
        task_ids: the task set (each weighs the same).
        golden: the task's golden answers, read from the unwrapped env after its reset.
        key: what the env's success compares (``None``: an answer that can never win).
        action: the env action that answers with a given key.

    Raises:
        ValueError: no tasks.
        RuntimeError: the env scored the best answer differently from the count (the ``key``
            does not match the env's rule).
    """
    if not task_ids:
        raise ValueError("answer_ceiling needs some tasks")
    env = make_env()
    try:
        counts: dict[_K, int] = {}
        for task in task_ids:
            env.reset(options={"task_id": task})
            for k in dict.fromkeys(key(a) for a in golden(env.unwrapped)):  # once per task
                if k is not None:
                    counts[k] = counts.get(k, 0) + 1
        if not counts:  # no golden answer can be stated: nothing wins
            return BlindCeiling(0.0, (), len(task_ids), 0, 1, searched="no golden answer to give")
        best = max(counts, key=lambda k: counts[k])
        answer = action(best)
        won = 0
        for task in task_ids:
            env.reset(options={"task_id": task})
            won += bool(env.step(answer)[4].get("won"))
    finally:
        env.close()
    if won != counts[best]:
        raise RuntimeError(
            f"the env won {won} tasks with {answer!r}, the golden answers' keys say {counts[best]}: "
            "the key does not reproduce the env's success rule"
        )
    return BlindCeiling(
        won / len(task_ids),
        (answer,),
        len(task_ids),
        len(counts),
        1,
        searched=f"the best of {len(counts)} distinct golden answers",
    )


def search_blind_ceiling(make_env: Callable[[], Any], task_ids: Sequence[str]) -> BlindCeiling:
    """:func:`answer_ceiling` on Search-QA: success is exact match after Search-R1's normalisation.

    The key is :func:`~envhub.envs.search.scoring.normalize_answer` (the env's EM compares the
    normalised answer with each normalised golden answer); the answer played is the normalised
    string itself in an ``<answer>`` block (normalising is idempotent, so it keeps its key).
    Success is ``won`` (EM) whatever the env's ``reward`` (sub-EM and F1 change the reward, not
    ``won``).
    """
    from envhub.envs.search.scoring import normalize_answer

    return answer_ceiling(
        make_env,
        task_ids,
        golden=lambda env: env.question.golden_answers,
        key=normalize_answer,
        action=lambda k: f"<answer>{k}</answer>",
    )


def math_blind_ceiling(make_env: Callable[[], Any], task_ids: Sequence[str]) -> BlindCeiling:
    """:func:`answer_ceiling` on Math: success is the final answer's number equal to the gold's.

    The key is :func:`~envhub.envs.math.answer.parse_number` (the env compares numbers, so
    ``42``, ``42.0`` and ``\\$42`` are one candidate); the answer played is ``\\boxed{n}``.
    """
    from envhub.envs.math.answer import format_number, parse_number

    return answer_ceiling(
        make_env,
        task_ids,
        golden=lambda env: (env.task.answer,),
        key=parse_number,
        action=lambda k: f"\\boxed{{{format_number(k)}}}",
    )


def _sokoban_ceiling(make_env: Callable[[], Any], task_ids: Sequence[str], max_steps: int) -> BlindCeiling:
    from envhub.envs.sokoban.room import ACTIONS

    return blind_ceiling(make_env, task_ids, max_steps=max_steps, actions=(*ACTIONS, "still"))


_Ceiling = Callable[[Callable[[], Any], Sequence[str], int], BlindCeiling]

_CEILINGS: Mapping[str, _Ceiling] = MappingProxyType(
    {
        "sokoban": _sokoban_ceiling,
        "search": lambda make_env, ids, _steps: search_blind_ceiling(make_env, ids),
        "math": lambda make_env, ids, _steps: math_blind_ceiling(make_env, ids),
    }
)

#: The env families :func:`recipe_blind_ceiling` (``validation.blind_ceiling``) computes for.
BLIND_CEILING_FAMILIES: tuple[str, ...] = tuple(_CEILINGS)


def recipe_blind_ceiling(config: Any, *, split: str | None = None, tasks: int | None = None) -> BlindCeiling:
    """The best blind policy over a recipe's validation tasks (the held-out ones it scores).

    The env family decides what a blind policy can do (:data:`BLIND_CEILING_FAMILIES`):

    * ``sokoban``: :func:`blind_ceiling` over the four moves and ``still`` (any other reply is an
      invalid no-op, which moves nothing, as ``still`` does), ``rollout.max_steps`` of them;
    * ``search``: :func:`search_blind_ceiling`, the best single answer (EM);
    * ``math``: :func:`math_blind_ceiling`, the best single final answer.

    Args:
        config: the recipe (:class:`~envhub.train.config.TrainConfig`).
        split: another split than ``validation.split``.
        tasks: how many of the split's first tasks (default ``validation.tasks``).

    Raises:
        ConfigurationError: the recipe's env family has no blind ceiling here.
    """
    import envhub
    from envhub.envs import resolve

    family = resolve(config.env).family
    ceiling = _CEILINGS.get(family)
    if ceiling is None:
        raise ConfigurationError(
            f"No observation-blind ceiling for the {family} family; envhub computes it for "
            f"{', '.join(BLIND_CEILING_FAMILIES)} (set validation.blind_ceiling: false).",
            family=family,
        )
    v = config.validation
    kwargs = dict(config.rollout.env_kwargs or {})
    env: Any = envhub.make(config.env, **kwargs)
    try:
        ids = list(env.unwrapped.task_ids(split or v.split))[: tasks or v.tasks]
    finally:
        env.close()
    return ceiling(lambda: envhub.make(config.env, **kwargs), ids, config.rollout.max_steps)

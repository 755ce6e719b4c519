"""``envhub.check_env``: Gymnasium's env checker plus envhub's own contract.

Gymnasium's :func:`gymnasium.utils.env_checker.check_env` checks the Gymnasium API (spaces,
``reset``/``step`` signatures, seeding). envhub adds what its layers rely on
(ARCHITECTURE.md, "The environment contract"):

* tasks: ``task_ids(split)`` lists tasks for every split; ``reset(options={"task_id": t})``
  starts ``t`` and reports it in ``info["task_id"]``;
* determinism: the same task id gives the same initial observation, whatever the seed, and
  the same actions give the same transitions, even after another task was played;
* ``info`` keys: every ``info`` has :data:`~envhub.core.env.INFO_KEYS` with their types
  (``anchor`` a non-empty string, ``admissible_actions`` a list of strings or None, ...);
* anchors: a state's anchor is history-free (the initial state's anchor is the same on every
  reset of that task);
* admissible actions: an action the env lists is a valid action when played;
* any action string survives: empty, huge, control characters, other scripts, tag fragments;
  none raises, each answer is a string observation with the contract's info; stepping after
  the end is defined.

A violation raises :class:`ContractViolation` listing every problem found.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from envhub.core.env import INFO_KEYS

__all__ = ["ADVERSARIAL_ACTIONS", "ContractViolation", "check_env"]

#: Action strings every env must survive (no raise, a string observation, the contract's info).
ADVERSARIAL_ACTIONS: tuple[str, ...] = (
    "",
    " ",
    "\x00\x01\x1b[31m",
    "\n\n\t",
    "🙂 中文 العربية",
    "<action></action>",
    "<action>" * 50,
    "</think><answer>",
    '{"name": null}',
    "[[[[",
    "-1",
    "99999999999999999999",
    "x" * 100_000,
)


class ContractViolation(AssertionError):
    """An env breaks envhub's contract; ``problems`` lists each violation."""

    def __init__(self, env_name: str, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{env_name} breaks the envhub env contract:\n{lines}")


def _info_problems(info: Any, where: str) -> list[str]:
    if not isinstance(info, dict):
        return [f"{where}: info is {type(info).__name__}, not a dict"]
    problems = [f"{where}: info lacks {key!r}" for key in INFO_KEYS if key not in info]
    anchor = info.get("anchor")
    if "anchor" in info and (not isinstance(anchor, str) or not anchor):
        problems.append(f"{where}: info['anchor'] must be a non-empty str, got {anchor!r:.60}")
    actions = info.get("admissible_actions")
    if actions is not None and (
        not isinstance(actions, list | tuple) or not all(isinstance(a, str) for a in actions)
    ):
        problems.append(f"{where}: info['admissible_actions'] must be a list of str or None")
    for key in ("won", "is_action_valid"):
        if key in info and not isinstance(info[key], bool):
            problems.append(f"{where}: info[{key!r}] must be a bool, got {type(info[key]).__name__}")
    if "task_id" in info and not isinstance(info["task_id"], str):
        problems.append(f"{where}: info['task_id'] must be a str")
    score = info.get("task_score")
    if "task_score" in info and not (isinstance(score, int | float) and math.isfinite(float(score))):
        problems.append(f"{where}: info['task_score'] must be a finite number, got {score!r}")
    return problems


def _step_problems(result: Any, where: str) -> list[str]:
    if not isinstance(result, tuple) or len(result) != 5:
        return [f"{where}: step must return (obs, reward, terminated, truncated, info)"]
    obs, reward, terminated, truncated, info = result
    problems = []
    if not isinstance(obs, str):
        problems.append(f"{where}: the observation is {type(obs).__name__}, not a str")
    try:
        if not math.isfinite(float(reward)):
            problems.append(f"{where}: the reward {reward!r} is not finite")
    except (TypeError, ValueError):
        problems.append(f"{where}: the reward {reward!r} is not a number")
    if not isinstance(terminated, bool) or not isinstance(truncated, bool):
        problems.append(f"{where}: terminated and truncated must be bools")
    return problems + _info_problems(info, where)


def _freeze(value: Any) -> Any:
    """A comparable copy of an info value (images and arrays compared by bytes)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items() if k != "images"))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if hasattr(value, "tobytes"):
        return value.tobytes()
    return value


def _trace(
    env: Any, task_id: str, seed: int, actions: Callable[[dict[str, Any], int], str], steps: int
) -> Any:
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    trace: list[Any] = [obs, _freeze({k: info.get(k) for k in INFO_KEYS})]
    for i in range(steps):
        action = actions(info, i)
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append(
            (action, obs, float(reward), terminated, truncated, _freeze({k: info.get(k) for k in INFO_KEYS}))
        )
        if terminated or truncated:
            break
    return trace


def _first_admissible(info: dict[str, Any], i: int) -> str:
    actions = info.get("admissible_actions") or []
    return str(actions[i % len(actions)]) if actions else f"look {i}"


def check_env(
    env: Any,
    *,
    steps: int = 5,
    tasks: int = 2,
    gymnasium_checks: bool = True,
    skip_render_check: bool = True,
) -> None:
    """Check ``env`` against Gymnasium's API and envhub's contract (see the module docstring).

    Args:
        env: the env (wrappers are looked through: the checks run on ``env.unwrapped``).
        steps: steps played per determinism and admissible-action check.
        tasks: tasks of the first split played.
        gymnasium_checks: also run Gymnasium's checker (its warnings count as violations).
        skip_render_check: passed to Gymnasium's checker.

    Raises:
        ContractViolation: every problem found, in one message.
    """
    base = env.unwrapped
    name = type(base).__name__
    problems: list[str] = []
    if gymnasium_checks:
        from gymnasium.utils.env_checker import check_env as gymnasium_check_env

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                gymnasium_check_env(base, skip_render_check=skip_render_check)
            except Exception as exc:
                problems.append(f"gymnasium's env_checker: {type(exc).__name__}: {exc}")
        # Gymnasium's own findings are UserWarnings; resource and deprecation warnings that a
        # family's libraries emit on the way are not the env's contract.
        problems += [
            f"gymnasium's env_checker warns: {w.message}"
            for w in caught
            if issubclass(w.category, UserWarning)
        ]

    splits = tuple(getattr(base, "splits", ()) or ())
    if not splits or not callable(getattr(base, "task_ids", None)):
        raise ContractViolation(
            name, [*problems, "the env needs `splits` and `task_ids(split)` (see AgentEnv)"]
        )
    task_ids: list[str] = []
    for split in splits:
        try:
            ids = [str(t) for t in base.task_ids(split)]
        except Exception as exc:
            problems.append(f"task_ids({split!r}) raised {type(exc).__name__}: {exc}")
            continue
        if not ids:
            problems.append(f"task_ids({split!r}) is empty")
        if len(set(ids)) != len(ids):
            problems.append(f"task_ids({split!r}) repeats ids")
        if split == splits[0]:
            task_ids = ids[:tasks]
    if not task_ids:
        raise ContractViolation(name, problems or ["no task to check"])

    unstartable = False
    for task_id in task_ids:
        where = f"reset(task_id={task_id!r})"
        try:
            obs, info = base.reset(seed=0, options={"task_id": task_id})
            obs_other_seed, info_other = base.reset(seed=12345, options={"task_id": task_id})
        except Exception as exc:
            problems.append(_raised(where, exc))
            unstartable = True
            continue
        if not isinstance(obs, str):
            problems.append(f"{where}: the observation is {type(obs).__name__}, not a str")
        problems += _info_problems(info, where)
        if isinstance(info, dict) and info.get("task_id") != task_id:
            problems.append(f"{where}: info['task_id'] is {info.get('task_id')!r}")
        if obs_other_seed != obs or _get(info_other, "anchor") != _get(info, "anchor"):
            problems.append(f"{where}: another seed gives another initial state (observation or anchor)")

    if unstartable:
        raise ContractViolation(name, problems)  # a task does not even start: the rest would only repeat it

    # Determinism: the same task and actions give the same transitions, after another task too.
    first = task_ids[0]
    try:
        a = _trace(base, first, 0, _first_admissible, steps)
        if len(task_ids) > 1:
            _trace(base, task_ids[-1], 7, lambda info, i: f"noise {i}", steps)
        b = _trace(base, first, 0, _first_admissible, steps)
        if a != b:
            problems.append(f"task {first!r}: the same actions gave different transitions on a second play")
        problems += _admissible_problems(base, first, steps)
        problems += _adversarial_problems(base, first)
    except Exception as exc:
        problems.append(_raised(f"playing task {first!r}", exc))
    if problems:
        raise ContractViolation(name, problems)


def _raised(where: str, exc: Exception) -> str:
    return f"{where} raised {type(exc).__name__}: {exc}"[:300]


def _get(info: Any, key: str) -> Any:
    return info.get(key) if isinstance(info, dict) else None


def _admissible_problems(base: Any, first: str, steps: int) -> list[str]:
    """Admissible actions are valid actions."""
    problems: list[str] = []
    _, info = base.reset(seed=0, options={"task_id": first})
    for i in range(steps):
        listed = info.get("admissible_actions")
        if not listed:
            break
        action = str(listed[i % len(listed)])
        result = base.step(action)
        problems += _step_problems(result, f"step({action!r})")
        info = result[4]
        if info.get("is_action_valid") is not True:
            problems.append(f"task {first!r}: the admissible action {action!r} was not valid")
            break
        if result[2] or result[3]:
            break
    return problems


def _adversarial_problems(base: Any, first: str) -> list[str]:
    """Any action string survives, also after the end of an episode."""
    problems: list[str] = []
    base.reset(seed=0, options={"task_id": first})
    ended = False
    for action in ADVERSARIAL_ACTIONS:
        label = repr(action[:20]) + ("..." if len(action) > 20 else "")
        try:
            result = base.step(action)
        except Exception as exc:
            problems.append(f"step({label}) raised {type(exc).__name__}: {exc}"[:300])
            base.reset(seed=0, options={"task_id": first})
            continue
        problems += _step_problems(result, f"step({label})")
        ended = ended or bool(result[2] or result[3])
    if not ended:
        problems += _after_end(base, first)
    return problems


def _after_end(base: Any, task_id: str) -> list[str]:
    """Play to the end with the listed actions when there are any; then step once more."""
    info = base.reset(seed=0, options={"task_id": task_id})[1]
    for i in range(200):
        *_, terminated, truncated, info = base.step(_first_admissible(info, i))
        if terminated or truncated:
            try:
                return _step_problems(base.step("after the end"), "step after the end")
            except Exception as exc:
                return [f"a step after the end raised {type(exc).__name__}: {exc}"]
    return []

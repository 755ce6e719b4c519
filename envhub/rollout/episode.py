"""Run scripted or heuristic policies through an env and record :class:`Trajectory` records.

This is the in-process, model-free rollout used by ``envhub demo``, tests and benchmarks;
the LLM rollout engine builds on the same records.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import gymnasium

from envhub.core.policy import Policy
from envhub.core.records import Group, Step, Trajectory

__all__ = ["STEP_INFO_KEYS", "json_safe_info", "run_episode", "run_group"]

#: info keys copied into each :class:`Step` (images and large diagnostics stay out).
STEP_INFO_KEYS = ("won", "task_score", "task_id", "is_action_valid")


def json_safe_info(info: dict[str, Any], keys: tuple[str, ...] = STEP_INFO_KEYS) -> dict[str, Any]:
    """The subset of ``info`` a :class:`Step` keeps."""
    return {k: info[k] for k in keys if k in info}


def run_episode(
    env: gymnasium.Env[Any, Any],
    policy: Policy,
    *,
    env_id: str,
    task_id: str | None = None,
    seed: int | None = None,
    uid: str | None = None,
    traj_id: str | None = None,
) -> Trajectory:
    """Play one episode to its end (termination or truncation) and record it."""
    options = {"task_id": task_id} if task_id is not None else None
    observation, info = env.reset(seed=seed, options=options)
    policy.reset(observation, info)
    uid = uid or str(uuid.uuid4())
    traj = Trajectory(
        uid=uid, traj_id=traj_id or str(uuid.uuid4()), env_id=env_id, task_id=str(info["task_id"])
    )
    done = False
    while not done:
        action = policy.act(observation, info)
        anchor, seen = str(info["anchor"]), observation
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        traj.steps.append(
            Step(
                uid=uid,
                traj_id=traj.traj_id,
                step_idx=len(traj.steps),
                anchor=anchor,
                observation=seen,
                action=action,
                is_action_valid=bool(info.get("is_action_valid", True)),
                reward=float(reward),
                terminated=terminated,
                truncated=truncated,
                info=json_safe_info(info),
            )
        )
    traj.final_anchor = str(info["anchor"])  # the state after the last step (GraphGPO's graph)
    traj.won = bool(info.get("won", False))
    traj.task_score = float(info.get("task_score", 0.0))
    return traj


def run_group(
    make_env: Callable[[], gymnasium.Env[Any, Any]],
    make_policy: Callable[[int], Policy],
    *,
    env_id: str,
    task_id: str,
    group_size: int,
    seed: int = 0,
) -> Group:
    """``group_size`` episodes of one task, each in a fresh env, sharing one ``uid``."""
    uid = str(uuid.uuid4())
    group = Group(uid=uid, env_id=env_id, task_id=task_id)
    for i in range(group_size):
        env = make_env()
        try:
            group.trajectories.append(
                run_episode(env, make_policy(seed + i), env_id=env_id, task_id=task_id, seed=seed, uid=uid)
            )
        finally:
            env.close()
    return group

"""The scripted solver reads every generated problem back and answers it (the demo's policy)."""

from __future__ import annotations

from typing import Any

import envhub
from envhub.envs.math.data import load_dataset
from envhub.envs.math.policy import TemplateSolverPolicy, solve


def test_the_solver_answers_every_generated_problem() -> None:
    for tasks in load_dataset().splits.values():
        for task in tasks:
            assert solve(task.question) == int(task.answer), task.question


def test_a_problem_in_another_phrasing_is_beyond_it() -> None:
    assert solve("Natalia sold clips to 48 of her friends in April. How many clips?") is None


def test_the_demo_policy_wins_through_the_env() -> None:
    env: Any = envhub.make("envhub/Math-v0")
    policy = TemplateSolverPolicy(seed=0)
    for task in env.unwrapped.task_ids("test")[:20]:
        obs, info = env.reset(options={"task_id": task})
        policy.reset(obs, info)
        assert env.step(policy.act(obs, info))[4]["won"]
    env.close()

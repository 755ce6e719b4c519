"""The heuristic tool-using policy solves the task far better than a random agent."""

from __future__ import annotations

import envhub
from envhub.envs.timeseries.policy import HeuristicPolicy, RandomToolPolicy
from envhub.rollout import run_episode


def _success(policy_cls: type, n: int) -> float:
    env = envhub.make("envhub/TimeSeries-v0", images=False)
    wins = 0
    for i in range(n):
        traj = run_episode(env, policy_cls(i), env_id="envhub/TimeSeries-v0", task_id=f"test-{i}")
        wins += traj.won
    return wins / n


def test_heuristic_beats_random_by_a_wide_margin_on_test() -> None:
    heuristic, random = _success(HeuristicPolicy, 80), _success(RandomToolPolicy, 80)
    assert heuristic >= 0.6, heuristic
    assert heuristic >= random + 0.4, (heuristic, random)


def test_heuristic_reads_the_series_with_zoom_then_answers() -> None:
    env = envhub.make("envhub/TimeSeries-v0", images=False)
    traj = run_episode(env, HeuristicPolicy(0), env_id="envhub/TimeSeries-v0", task_id="test-0")
    actions = [s.action for s in traj.steps]
    assert all(a.startswith("zoom[") for a in actions[:-1]) and actions[-1].startswith("answer[")
    assert traj.steps[-1].terminated and len(actions) <= 8

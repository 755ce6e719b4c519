"""Recording episodes and groups as records."""

from __future__ import annotations

import envhub
from envhub.core.records import StepBatch
from envhub.envs.timeseries.policy import HeuristicPolicy
from envhub.rollout import run_episode, run_group


def test_run_episode_records_every_step_with_anchor_before_the_action() -> None:
    env = envhub.make("envhub/TimeSeries-v0", images=False)
    traj = run_episode(env, HeuristicPolicy(0), env_id="envhub/TimeSeries-v0", task_id="test-3", uid="g")
    first_obs, first_info = env.reset(options={"task_id": "test-3"})
    assert traj.steps[0].anchor == first_info["anchor"] and traj.steps[0].observation == first_obs
    assert [s.step_idx for s in traj.steps] == list(range(len(traj.steps)))
    assert traj.steps[-1].terminated and traj.task_id == "test-3" and traj.uid == "g"
    assert traj.episode_return == sum(s.reward for s in traj.steps)


def test_run_group_shares_uid_and_task_and_flattens_to_a_batch() -> None:
    group = run_group(
        lambda: envhub.make("envhub/TimeSeries-v0", images=False),
        HeuristicPolicy,
        env_id="envhub/TimeSeries-v0",
        task_id="test-1",
        group_size=3,
    )
    assert len(group.trajectories) == 3
    assert {t.uid for t in group.trajectories} == {group.uid}
    assert len({t.traj_id for t in group.trajectories}) == 3
    batch = StepBatch.from_groups([group])
    assert len(batch) == sum(t.length for t in group.trajectories)
    # Identical deterministic policies on one task: identical first anchors across the group.
    assert len({t.steps[0].anchor for t in group.trajectories}) == 1

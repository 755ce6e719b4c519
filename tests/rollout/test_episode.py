"""Recording episodes and groups as records."""

from __future__ import annotations

import gymnasium

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


class _Moves:
    """Plays a fixed list of moves."""

    def __init__(self, moves: list[str]) -> None:
        self.moves = moves

    def reset(self, observation: str, info: dict[str, object]) -> None:
        self.next = iter(self.moves)

    def act(self, observation: str, info: dict[str, object]) -> str:
        return next(self.next)


def test_run_episode_records_the_state_the_episode_ended_in() -> None:
    # GraphGPO's graph needs it: a failed episode's last step leads there, not to a dead end.
    env = envhub.make("envhub/Sokoban-v0", dim_room=(3, 6), rooms="one-push")
    limited = gymnasium.wrappers.TimeLimit(env, max_episode_steps=2)
    _, start = env.reset(options={"task_id": "room-0"})
    moved = env.step("left")[4]["anchor"]  # the corridor's free cell, away from the box
    traj = run_episode(limited, _Moves(["left", "left"]), env_id="envhub/Sokoban-v0", task_id="room-0")
    assert not traj.won and traj.steps[-1].truncated
    assert traj.final_anchor == moved != start["anchor"] == traj.steps[0].anchor
    traj = run_episode(limited, _Moves(["left", "right"]), env_id="envhub/Sokoban-v0", task_id="room-0")
    assert traj.final_anchor == start["anchor"]  # back where it began
    won = run_episode(limited, _Moves(["right"]), env_id="envhub/Sokoban-v0", task_id="room-0")
    assert won.won and won.final_anchor is not None and won.final_anchor != start["anchor"]

"""Step/Trajectory/Group records and the columnar StepBatch."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from envhub.core.records import Group, Step, StepBatch, Trajectory, canonical_anchor


def _step(uid: str, traj: str, i: int, reward: float, valid: bool = True, agent: str = "0") -> Step:
    return Step(
        uid=uid,
        traj_id=traj,
        step_idx=i,
        anchor=f"s{i}",
        action="a",
        reward=reward,
        is_action_valid=valid,
        agent_id=agent,
    )


def test_trajectory_return_and_length_are_derived() -> None:
    traj = Trajectory(
        uid="g",
        traj_id="t",
        env_id="e",
        task_id="k",
        steps=[_step("g", "t", 0, 1.0), _step("g", "t", 1, 2.5)],
    )
    assert traj.episode_return == 3.5
    assert traj.length == 2
    assert traj.model_dump()["episode_return"] == 3.5


def test_group_round_trips_through_json() -> None:
    traj = Trajectory(
        uid="g", traj_id="t", env_id="e", task_id="k", steps=[_step("g", "t", 0, 1.0)], won=True
    )
    group = Group(uid="g", env_id="e", task_id="k", trajectories=[traj])
    again = Group.model_validate_json(group.model_dump_json())
    assert again.trajectories[0].steps[0].reward == 1.0
    assert again.success_rate == 1.0


def test_records_reject_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        Step(uid="g", traj_id="t", step_idx=0, anchor="s", action="a", reward=0.0, bogus=1)  # type: ignore[call-arg]


def test_history_image_travels_as_base64() -> None:
    step = Step(
        uid="g", traj_id="t", step_idx=0, anchor="s", action="a", reward=0.0, history_image=b"\x89PNG"
    )
    assert Step.model_validate_json(step.model_dump_json()).history_image == b"\x89PNG"


def test_step_batch_from_groups_has_one_row_per_step() -> None:
    t1 = Trajectory(
        uid="g",
        traj_id="t1",
        env_id="e",
        task_id="k",
        steps=[_step("g", "t1", 0, 0.0), _step("g", "t1", 1, 1.0, False)],
    )
    t2 = Trajectory(uid="g", traj_id="t2", env_id="e", task_id="k", steps=[_step("g", "t2", 0, 0.5)])
    batch = StepBatch.from_groups([Group(uid="g", env_id="e", task_id="k", trajectories=[t1, t2])])
    assert len(batch) == 3
    assert batch.traj_id.tolist() == ["t1", "t1", "t2"]
    assert batch.reward.dtype == np.float64 and batch.reward.tolist() == [0.0, 1.0, 0.5]
    assert batch.is_action_valid.tolist() == [True, False, True]
    assert batch.agent_id is None


def test_step_batch_keeps_agent_ids_when_there_are_several_agents() -> None:
    t = Trajectory(
        uid="g",
        traj_id="t",
        env_id="e",
        task_id="k",
        steps=[_step("g", "t", 0, 0.0, agent="planner"), _step("g", "t", 1, 0.0, agent="actor")],
    )
    batch = StepBatch.from_groups([Group(uid="g", env_id="e", task_id="k", trajectories=[t])])
    assert batch.agent_id is not None and batch.agent_id.tolist() == ["planner", "actor"]


def test_step_batch_rejects_ragged_columns() -> None:
    with pytest.raises(ValueError, match="must all have 2 rows"):
        StepBatch.from_columns(
            uid=["a", "b"], traj_id=["t"], step_idx=[0, 1], anchor=["x", "y"], reward=[0, 0]
        )


def test_array_anchors_become_hashable_tuples() -> None:
    batch = StepBatch.from_columns(
        uid=["a"], traj_id=["t"], step_idx=[0], anchor=[np.array([[1, 2], [3, 4]])], reward=[0.0]
    )
    assert batch.anchor[0] == ((1, 2), (3, 4))
    assert hash(batch.anchor[0])
    assert canonical_anchor(np.int64(3)) == 3 and canonical_anchor([1, [2]]) == (1, (2,))


def test_step_batch_next_anchor_is_the_next_step_then_the_final_state() -> None:
    t1 = Trajectory(
        uid="g",
        traj_id="t1",
        env_id="e",
        task_id="k",
        steps=[_step("g", "t1", 0, 0.0), _step("g", "t1", 1, 0.0)],
        final_anchor="end",
    )
    t2 = Trajectory(uid="g", traj_id="t2", env_id="e", task_id="k", steps=[_step("g", "t2", 0, 0.0)])
    batch = StepBatch.from_groups([Group(uid="g", env_id="e", task_id="k", trajectories=[t1, t2])])
    # t2 recorded no final state (an older payload): its last entry is unknown.
    assert batch.next_anchor is not None and batch.next_anchor.tolist() == ["s1", "end", None]
    # Without any final state recorded the column is absent, as before.
    bare = StepBatch.from_groups([Group(uid="g", env_id="e", task_id="k", trajectories=[t2])])
    assert bare.next_anchor is None
    with pytest.raises(ValueError, match="must all have 2 rows"):
        StepBatch.from_columns(
            uid=["a", "b"],
            traj_id=["t", "t"],
            step_idx=[0, 1],
            anchor=["x", "y"],
            reward=[0, 0],
            next_anchor=["y"],
        )


def test_final_anchor_is_optional_and_round_trips() -> None:
    old = {"uid": "g", "traj_id": "t", "env_id": "e", "task_id": "k"}
    assert Trajectory.model_validate(old).final_anchor is None
    traj = Trajectory.model_validate({**old, "final_anchor": "room after"})
    assert Trajectory.model_validate_json(traj.model_dump_json()).final_anchor == "room after"

"""Batch builders for the estimator tests: hand-written rows and random batches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

from envhub.core.records import StepBatch


@dataclass(frozen=True)
class Row:
    """One step, as a test writes it down."""

    uid: Any
    traj: Any
    step: int
    anchor: Any
    reward: float
    valid: bool = True
    agent: Any = "0"


def trajectory(
    uid: str,
    traj: str,
    anchors: Sequence[Any],
    rewards: Sequence[float],
    invalid: Sequence[int] = (),
    agents: Sequence[Any] | None = None,
) -> list[Row]:
    """The rows of one trajectory, step 0 first; ``invalid`` lists invalid step indices."""
    return [
        Row(uid, traj, s, a, float(r), s not in invalid, "0" if agents is None else agents[s])
        for s, (a, r) in enumerate(zip(anchors, rewards, strict=True))
    ]


def to_batch(rows: Sequence[Row], *, with_agents: bool = False) -> StepBatch:
    """A StepBatch with the rows in the given order."""
    return StepBatch.from_columns(
        uid=[r.uid for r in rows],
        traj_id=[r.traj for r in rows],
        step_idx=[r.step for r in rows],
        anchor=[r.anchor for r in rows],
        reward=[r.reward for r in rows],
        is_action_valid=[r.valid for r in rows],
        agent_id=[r.agent for r in rows] if with_agents else None,
    )


REWARDS = (0.0, 0.0, 1.0, 10.0, -0.5, 0.3, 0.7)


def random_rows(
    rng: np.random.Generator,
    *,
    n_uids: int = 3,
    max_trajs: int = 5,
    max_len: int = 7,
    anchors: Sequence[Any] = ("a", "b", "c", "d"),
    agents: Sequence[Any] = ("x", "y"),
    shuffle: bool = True,
) -> list[Row]:
    """Random rows: anchor collisions, invalid rows, varied lengths, gaps in step_idx."""
    rows: list[Row] = []
    for u in range(n_uids):
        for t in range(int(rng.integers(1, max_trajs + 1))):
            length = int(rng.integers(1, max_len + 1))
            stride = int(rng.integers(1, 3))  # step_idx may have gaps; order is what counts
            for s in range(length):
                rows.append(
                    Row(
                        uid=f"task-{u}",
                        traj=f"t{t}",  # reused across uids: trajectories are scoped by uid
                        step=s * stride,
                        anchor=anchors[int(rng.integers(len(anchors)))],
                        reward=float(REWARDS[int(rng.integers(len(REWARDS)))]),
                        valid=bool(rng.random() > 0.25),
                        agent=agents[int(rng.integers(len(agents)))],
                    )
                )
    if shuffle:
        rows = [rows[i] for i in rng.permutation(len(rows))]
    return rows


@st.composite
def row_lists(draw: st.DrawFn, *, max_uids: int = 3, max_trajs: int = 4, max_len: int = 5) -> list[Row]:
    """Hypothesis strategy for small random batches (as row lists), in a random order."""
    rows: list[Row] = []
    for u in range(draw(st.integers(1, max_uids))):
        for t in range(draw(st.integers(1, max_trajs))):
            for s in range(draw(st.integers(1, max_len))):
                rows.append(
                    Row(
                        uid=f"task-{u}",
                        traj=f"t{t}",
                        step=s,
                        anchor=draw(st.sampled_from(["a", "b", "c", ("arr", 1)])),
                        reward=draw(st.sampled_from(REWARDS)),
                        valid=draw(st.booleans()),
                        agent=draw(st.sampled_from(["x", "y"])),
                    )
                )
    order = draw(st.permutations(range(len(rows))))
    return [rows[i] for i in order]


def relabel(rows: Sequence[Row], prefix: str) -> list[Row]:
    """The same rows with every uid renamed."""
    return [replace(r, uid=f"{prefix}{r.uid}") for r in rows]

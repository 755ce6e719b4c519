"""The integer layout of a :class:`~envhub.core.records.StepBatch`, computed once per call.

Rows may arrive in any order. The layout factorises the hashable columns, orders rows by
(trajectory, step_idx), and checks what the estimators rely on: finite rewards, hashable
anchors and no two rows at the same step of one trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from envhub.algos.grouping import combine_codes, factorize
from envhub.core.errors import ConfigurationError
from envhub.core.records import StepBatch

__all__ = ["BatchLayout"]


@dataclass(frozen=True, eq=False)
class BatchLayout:
    """Dense codes and trajectory order of a batch (arrays in input row order unless noted).

    Attributes:
        group: normalisation group of each row: the uid, or (uid, agent_id) with agent grouping.
        n_groups: number of distinct groups.
        uid: uid code of each row (the window keys of HGPO start from it).
        traj: trajectory code of each row; a trajectory is (uid, traj_id).
        n_traj: number of trajectories.
        anchor: anchor code of each row (equal codes for equal anchors, across uids).
        order: row indices sorted by (trajectory, step_idx).
        position: 0-based rank of each row inside its trajectory (by step_idx).
        length: number of rows of each trajectory (indexed by trajectory code).
    """

    group: NDArray[np.int64]
    n_groups: int
    uid: NDArray[np.int64]
    traj: NDArray[np.int64]
    n_traj: int
    anchor: NDArray[np.int64]
    order: NDArray[np.int64]
    position: NDArray[np.int64]
    length: NDArray[np.int64]

    @classmethod
    def from_batch(cls, batch: StepBatch, *, group_by_agent: bool = False) -> BatchLayout:
        """Factorise and check a batch.

        Args:
            batch: the steps.
            group_by_agent: key groups by (uid, agent_id) (Dr. MAS); ignored when the batch
                has no ``agent_id`` column.

        Returns:
            The layout.

        Raises:
            ConfigurationError: a reward is NaN or infinite, a column holds unhashable
                values, or two rows share (uid, traj_id, step_idx).
        """
        _check_rewards(np.asarray(batch.reward, dtype=np.float64))
        uid, n_uid = factorize(batch.uid, column="uid")
        traj_id, _ = factorize(batch.traj_id, column="traj_id")
        anchor, _ = factorize(batch.anchor, column="anchor")
        # Trajectory ids are scoped by uid so two groups may reuse the same ids.
        traj, n_traj = combine_codes(uid, traj_id)
        group, n_groups = uid, n_uid
        if group_by_agent and batch.agent_id is not None:
            agent, _ = factorize(batch.agent_id, column="agent_id")
            group, n_groups = combine_codes(uid, agent)
        step_idx = np.asarray(batch.step_idx, dtype=np.int64)
        order = _trajectory_order(traj, n_traj, step_idx)
        sorted_traj = traj[order]
        _check_unique_steps(batch, order, sorted_traj, step_idx)
        if batch.env_step is not None:
            _check_env_steps(batch, order, sorted_traj)
        length = np.bincount(traj, minlength=n_traj).astype(np.int64)
        start = np.cumsum(length) - length
        position = np.empty(len(traj), dtype=np.int64)
        position[order] = np.arange(len(traj), dtype=np.int64) - start[sorted_traj]
        return cls(
            group=group,
            n_groups=n_groups,
            uid=uid,
            traj=traj,
            n_traj=n_traj,
            anchor=anchor,
            order=order,
            position=position,
            length=length,
        )


def _trajectory_order(traj: NDArray[np.int64], n_traj: int, step_idx: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row indices sorted by (trajectory, step_idx)."""
    if len(traj) == 0:
        return np.zeros(0, dtype=np.int64)
    low = int(step_idx.min())
    span = int(step_idx.max()) - low + 1
    if n_traj * span < 2**62:
        # One int64 key sorts faster than a two-key lexsort; batches from a rollout usually
        # arrive grouped by trajectory in step order already, and then no sort is needed.
        key = traj * span + (step_idx - low)
        if bool(np.all(key[1:] >= key[:-1])):
            return np.arange(len(key), dtype=np.int64)
        return np.argsort(key).astype(np.int64)
    return np.lexsort((step_idx, traj)).astype(np.int64)


def _check_rewards(reward: NDArray[np.float64]) -> None:
    if not np.all(np.isfinite(reward)):
        bad = int(np.flatnonzero(~np.isfinite(reward))[0])
        raise ConfigurationError(
            f"StepBatch.reward has a non-finite value ({reward[bad]!r} at row {bad}); "
            "advantages need finite rewards. Fix the env's reward or drop that trajectory.",
            row=bad,
        )


def _check_unique_steps(
    batch: StepBatch, order: NDArray[np.int64], sorted_traj: NDArray[np.int64], step_idx: NDArray[np.int64]
) -> None:
    # In (trajectory, step) order a repeated step sits next to its twin.
    sorted_step = step_idx[order]
    same = (sorted_traj[1:] == sorted_traj[:-1]) & (sorted_step[1:] == sorted_step[:-1])
    if np.any(same):
        row = int(order[np.flatnonzero(same)[0]])
        raise ConfigurationError(
            f"Two rows of trajectory {batch.traj_id[row]!r} (uid {batch.uid[row]!r}) have step_idx "
            f"{int(step_idx[row])}; each step of a trajectory must appear once. Compute advantages "
            "on the un-duplicated batch (pad or duplicate rows only afterwards).",
            uid=str(batch.uid[row]),
            traj_id=str(batch.traj_id[row]),
            step_idx=int(step_idx[row]),
        )


def _check_env_steps(batch: StepBatch, order: NDArray[np.int64], sorted_traj: NDArray[np.int64]) -> None:
    # The calls of one env step are consecutive, and env steps follow each other: in
    # (trajectory, step) order the env step never goes back inside a trajectory.
    assert batch.env_step is not None  # checked by the caller
    turn = np.asarray(batch.env_step, dtype=np.int64)[order]
    back = (sorted_traj[1:] == sorted_traj[:-1]) & (turn[1:] < turn[:-1])
    if np.any(back) or (len(turn) and int(turn.min()) < 0):
        row = int(order[np.flatnonzero(back)[0] + 1]) if np.any(back) else int(order[np.argmin(turn)])
        raise ConfigurationError(
            f"Row {row} of trajectory {batch.traj_id[row]!r} (uid {batch.uid[row]!r}) has env_step "
            f"{int(batch.env_step[row])}, below an earlier call's (or negative); the agent calls of one "
            "env step must be consecutive and env steps must increase with step_idx.",
            uid=str(batch.uid[row]),
            traj_id=str(batch.traj_id[row]),
            env_step=int(batch.env_step[row]),
        )

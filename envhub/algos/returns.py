"""Reward plumbing shared by the estimators: returns, episode returns, invalid-action penalty.

Reference order (verl-agent): discounted step returns are computed from the raw env rewards,
*then* the invalid-action penalty is subtracted, undiscounted, from the offending row only,
both from its step return and from its episode score.

Multi-agent rows (a ``StepBatch`` with ``env_step``, Dr. MAS): the return is discounted per env
step, not per agent call. An env step's reward is the sum of its calls' rewards, and every call
of the step gets the step's return (the authors' ``compute_step_discounted_returns``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from envhub.algos.grouping import combine_codes
from envhub.algos.layout import BatchLayout
from envhub.core.errors import ConfigurationError
from envhub.core.records import StepBatch

__all__ = [
    "discounted_returns",
    "episode_returns",
    "episode_score_samples",
    "invalid_penalty_of",
    "step_return_samples",
]


def discounted_returns(batch: StepBatch, *, gamma: float = 0.95) -> NDArray[np.float64]:
    """G_t = r_t + gamma * G_{t+1} inside each trajectory (G after the last step is 0).

    With ``batch.env_step``, t runs over env steps and every call of a step gets its G.

    Args:
        batch: the steps, any row order.
        gamma: discount factor in [0, 1].

    Returns:
        G of every row, in input row order.

    Raises:
        ConfigurationError: gamma outside [0, 1], or a malformed batch.
    """
    return _row_returns(batch, BatchLayout.from_batch(batch), gamma)


def episode_returns(batch: StepBatch) -> NDArray[np.float64]:
    """The undiscounted sum of its trajectory's rewards, for every row.

    Args:
        batch: the steps, any row order.

    Returns:
        The episode return of each row's trajectory, in input row order.

    Raises:
        ConfigurationError: a malformed batch.
    """
    return _episode(BatchLayout.from_batch(batch), np.asarray(batch.reward, dtype=np.float64))


def invalid_penalty_of(batch: StepBatch, invalid_penalty: float) -> NDArray[np.float64]:
    """The penalty of every row: ``invalid_penalty`` where the action was invalid, else 0.

    Args:
        batch: the steps.
        invalid_penalty: the penalty coefficient (0 disables).

    Returns:
        Per-row penalties (float64), input row order.

    Raises:
        ConfigurationError: a negative or non-finite coefficient.
    """
    if not (np.isfinite(invalid_penalty) and invalid_penalty >= 0.0):
        raise ConfigurationError(
            f"invalid_penalty must be a finite number >= 0 (0 disables it), got {invalid_penalty!r}.",
            invalid_penalty=invalid_penalty,
        )
    invalid = ~np.asarray(batch.is_action_valid, dtype=bool)
    return invalid_penalty * invalid.astype(np.float64)


def step_return_samples(
    batch: StepBatch, layout: BatchLayout, *, gamma: float, invalid_penalty: float
) -> NDArray[np.float64]:
    """Step-level samples: the discounted return G_t minus the row's invalid-action penalty.

    Args:
        batch: the steps.
        layout: ``BatchLayout.from_batch(batch)``.
        gamma: discount factor in [0, 1].
        invalid_penalty: subtracted once from each invalid row (0 disables).

    Returns:
        Per-row samples (float64), input row order.

    Raises:
        ConfigurationError: gamma outside [0, 1] or a negative penalty.
    """
    penalty = invalid_penalty_of(batch, invalid_penalty)
    return _row_returns(batch, layout, gamma) - penalty


def episode_score_samples(
    batch: StepBatch, layout: BatchLayout, *, invalid_penalty: float
) -> NDArray[np.float64]:
    """Episode-level samples: the trajectory's return minus the row's invalid-action penalty.

    Args:
        batch: the steps.
        layout: ``BatchLayout.from_batch(batch)``.
        invalid_penalty: subtracted once from each invalid row (0 disables).

    Returns:
        Per-row scores (float64), input row order.

    Raises:
        ConfigurationError: a negative penalty.
    """
    penalty = invalid_penalty_of(batch, invalid_penalty)
    return _episode(layout, np.asarray(batch.reward, dtype=np.float64)) - penalty


def _row_returns(batch: StepBatch, layout: BatchLayout, gamma: float) -> NDArray[np.float64]:
    """The discounted return of every row: per row, or per env step when the batch has them."""
    reward = np.asarray(batch.reward, dtype=np.float64)
    if batch.env_step is None:
        return _discounted(layout, reward, gamma)
    env_step = np.asarray(batch.env_step, dtype=np.int64)
    # One unit per (trajectory, env step); BatchLayout.from_batch has checked env_step >= 0.
    turn, n_turns = combine_codes(layout.traj, env_step)
    turn_reward = np.bincount(turn[layout.order], weights=reward[layout.order], minlength=n_turns).astype(
        np.float64, copy=False
    )
    first = np.empty(n_turns, dtype=np.int64)
    first[turn[::-1]] = np.arange(len(turn) - 1, -1, -1)  # a row of each unit (its first one)
    units = StepBatch.from_columns(
        uid=layout.uid[first],
        traj_id=layout.traj[first],
        step_idx=env_step[first],
        anchor=np.zeros(n_turns, dtype=np.int64),
        reward=turn_reward,
    )
    return _discounted(BatchLayout.from_batch(units), turn_reward, gamma)[turn]


def _episode(layout: BatchLayout, reward: NDArray[np.float64]) -> NDArray[np.float64]:
    # Summed in step order (the sorted layout), so the result does not depend on row order.
    totals = np.bincount(layout.traj[layout.order], weights=reward[layout.order], minlength=layout.n_traj)
    return totals.astype(np.float64, copy=False)[layout.traj]


def _discounted(layout: BatchLayout, reward: NDArray[np.float64], gamma: float) -> NDArray[np.float64]:
    if not (np.isfinite(gamma) and 0.0 <= gamma <= 1.0):
        raise ConfigurationError(f"gamma must lie in [0, 1], got {gamma!r}.", gamma=gamma)
    n = len(reward)
    out = np.zeros(n, dtype=np.float64)
    if n == 0:
        return out
    # Work in (trajectory, step) order, where row i's successor is row i + 1. Rows are
    # processed by distance from their trajectory's end: one vectorised step per depth
    # (not per row), evaluating exactly the recurrence G_t = r_t + gamma * G_{t+1}.
    traj_sorted = layout.traj[layout.order]
    r = reward[layout.order]
    from_end = layout.length[traj_sorted] - 1 - layout.position[layout.order]
    by_depth = np.argsort(from_end, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(from_end))))
    g = np.zeros(n + 1, dtype=np.float64)  # g[n] = 0 stands in for "after the last step"
    for depth in range(len(bounds) - 1):
        rows = by_depth[bounds[depth] : bounds[depth + 1]]
        nxt = rows + 1 if depth else np.full(len(rows), n)
        g[rows] = r[rows] + gamma * g[nxt]
    out[layout.order] = g[:n]
    return out

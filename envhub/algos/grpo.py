"""GRPO: episode-level advantages, normalised inside each task group.

This is also GiGPO's episode-level term A^E and HGPO's optional base group.

Reference semantics (verl-agent ``episode_norm_reward``): the group is every row with the
same uid (or the same uid and agent, Dr. MAS), and **every row is one sample** by default, so
longer trajectories weigh more. Each row's sample is its score: the trajectory's undiscounted
return minus that row's invalid-action penalty. The std is the unbiased (n-1) estimate, and a
group with a single sample uses mean 0 and std 1. With ``per_trajectory=True`` each trajectory
contributes one sample, the score of its first step (with agent grouping: each agent's
first step in the trajectory), while every row is still normalised with its own score.

``trajectory_score="mean"`` (with ``per_trajectory``) is Dr. MAS's global baseline
(``compute_grpo_outcome_advantage`` without ``group_by_agent_id``): the trajectory's sample is
the mean of its rows' scores, and every row of the trajectory takes that mean as its score,
so all its rows get one advantage. The rows' scores differ only by their invalid-action
penalties, so with no penalty the two choices agree.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

from envhub.algos.grouping import Mode, combine_codes, normalize_in_groups
from envhub.algos.layout import BatchLayout
from envhub.algos.returns import episode_score_samples
from envhub.core.errors import ConfigurationError
from envhub.core.records import StepBatch

__all__ = ["TrajectoryScore", "check_trajectory_score", "episode_advantages", "grpo_advantages"]

#: The sample of a trajectory under ``per_trajectory``: its first row's score (verl-agent) or the
#: mean of its rows' scores, taken by every row (Dr. MAS's global baseline).
TrajectoryScore = Literal["first", "mean"]


def grpo_advantages(
    batch: StepBatch,
    *,
    mode: Mode = "mean_std_norm",
    per_trajectory: bool = False,
    invalid_penalty: float = 0.1,
    group_by_agent: bool = False,
    epsilon: float = 1e-6,
    trajectory_score: TrajectoryScore = "first",
) -> NDArray[np.float64]:
    """GRPO advantage of every row.

    Args:
        batch: the steps, any row order.
        mode: ``"mean_norm"`` (score - mean) or ``"mean_std_norm"`` ((score - mean) / (std + eps)).
        per_trajectory: one sample per trajectory (its first step's score) instead of one per row.
        invalid_penalty: subtracted from the score of each invalid row (0 disables).
        group_by_agent: normalise within (uid, agent_id) instead of uid (Dr. MAS).
        epsilon: added to the std.
        trajectory_score: with ``per_trajectory``, ``"first"`` (the first row's score is the
            sample) or ``"mean"`` (the mean of the rows' scores, taken by every row: Dr. MAS's
            global baseline).

    Returns:
        Advantages (float64) in input row order.

    Raises:
        ConfigurationError: a malformed batch or an invalid setting.
    """
    check_trajectory_score(trajectory_score, per_trajectory)
    layout = BatchLayout.from_batch(batch, group_by_agent=group_by_agent)
    score = episode_score_samples(batch, layout, invalid_penalty=invalid_penalty)
    if trajectory_score == "mean":
        score = _owner_means(layout, score)
    return episode_advantages(layout, score, mode=mode, per_trajectory=per_trajectory, epsilon=epsilon)


def check_trajectory_score(trajectory_score: str, per_trajectory: bool) -> None:
    """Raise unless ``trajectory_score`` is ``first`` or ``mean`` and ``mean`` comes with ``per_trajectory``.

    Raises:
        ConfigurationError: an unknown value, or ``mean`` without ``per_trajectory``.
    """
    if trajectory_score not in ("first", "mean"):
        raise ConfigurationError(
            f"trajectory_score must be 'first' or 'mean', got {trajectory_score!r}.",
            trajectory_score=trajectory_score,
        )
    if trajectory_score == "mean" and not per_trajectory:
        raise ConfigurationError(
            "trajectory_score='mean' sets the sample of each trajectory, which only per_trajectory=True "
            "uses; set per_trajectory: true (Dr. MAS's global baseline) or leave trajectory_score out.",
            trajectory_score=trajectory_score,
        )


def _owner_means(layout: BatchLayout, score: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each row's score replaced by the mean score of its trajectory (of its agent, when grouped)."""
    owner, n_owners = combine_codes(layout.traj, layout.group)
    # Summed in (trajectory, step) order, so the mean does not depend on row order.
    totals = np.bincount(owner[layout.order], weights=score[layout.order], minlength=n_owners)
    counts = np.bincount(owner, minlength=n_owners)
    return (totals / np.maximum(counts, 1))[owner]


def episode_advantages(
    layout: BatchLayout,
    score: NDArray[np.float64],
    *,
    mode: Mode,
    per_trajectory: bool,
    epsilon: float,
) -> NDArray[np.float64]:
    """Episode-level advantage from precomputed row scores.

    Args:
        layout: the batch layout (its ``group`` codes define the groups).
        score: each row's episode score (return minus the row's penalty).
        mode: ``"mean_norm"`` or ``"mean_std_norm"``.
        per_trajectory: one sample per trajectory (its first step) instead of one per row.
        epsilon: added to the std.

    Returns:
        Advantages (float64) in input row order.

    Raises:
        ConfigurationError: an unknown mode.
    """
    return normalize_in_groups(
        layout.group,
        score,
        layout.n_groups,
        mode=mode,
        ddof=1,
        epsilon=epsilon,
        singleton="identity",
        sample_mask=_first_steps(layout) if per_trajectory else None,
    )


def _first_steps(layout: BatchLayout) -> NDArray[np.bool_]:
    """True on the first row of each trajectory within each group.

    Without agent grouping that is step 0 of every trajectory. With it, it is each agent's
    first row in the trajectory, so every (uid, agent) group has at least one sample.
    """
    owner, _ = combine_codes(layout.traj, layout.group)
    # np.unique's return_index gives first occurrences; in (trajectory, step) order the
    # first occurrence of an owner is its earliest step.
    _, first = np.unique(owner[layout.order], return_index=True)
    mask = np.zeros(len(owner), dtype=bool)
    mask[layout.order[first]] = True
    return mask

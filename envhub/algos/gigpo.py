"""GiGPO: episode-level plus anchor-state step-level advantages.

``A = A^E + w * A^S`` (w = ``step_advantage_w``), following verl-agent's GiGPO:

* A^E is the GRPO episode-level advantage (:mod:`envhub.algos.grpo`).
* A^S groups the rows of one uid (or uid and agent) whose anchors are equal, across
  trajectories *and inside one trajectory* (loops count), or, for text anchors, similar by
  ``difflib`` ratio (the search-QA setting). The samples are the discounted returns minus the
  row's invalid-action penalty; the std is unbiased (n-1) and a step group of one gives 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from envhub.algos.grouping import Mode, check_mode, combine_codes, normalize_in_groups, similarity_clusters
from envhub.algos.grpo import episode_advantages
from envhub.algos.layout import BatchLayout
from envhub.algos.returns import episode_score_samples, step_return_samples
from envhub.core.errors import ConfigurationError
from envhub.core.records import StepBatch

__all__ = ["gigpo_advantages", "step_advantages", "step_groups"]


def gigpo_advantages(
    batch: StepBatch,
    *,
    mode: Mode = "mean_norm",
    gamma: float = 0.95,
    step_advantage_w: float = 1.0,
    invalid_penalty: float = 0.1,
    similarity_thresh: float | None = None,
    per_trajectory: bool = False,
    group_by_agent: bool = False,
    epsilon: float = 1e-6,
) -> NDArray[np.float64]:
    """GiGPO advantage ``A^E + step_advantage_w * A^S`` of every row.

    Args:
        batch: the steps, any row order.
        mode: ``"mean_norm"`` or ``"mean_std_norm"``, used by both levels.
        gamma: discount factor of the step returns, in [0, 1].
        step_advantage_w: weight of the step-level term.
        invalid_penalty: subtracted from each invalid row's score and step return (0 disables).
        similarity_thresh: ``None`` groups steps by exact anchor equality; a value in (0, 1)
            groups text anchors greedily by ``difflib`` ratio (order-dependent by design).
        per_trajectory: one episode-level sample per trajectory instead of one per row.
        group_by_agent: key every group by (uid, agent_id) as well (Dr. MAS).
        epsilon: added to the std in ``mean_std_norm``.

    Returns:
        Advantages (float64) in input row order.

    Raises:
        ConfigurationError: a malformed batch or an invalid setting.
    """
    check_mode(mode)
    if not np.isfinite(step_advantage_w):
        raise ConfigurationError(
            f"step_advantage_w must be a finite number, got {step_advantage_w!r}.",
            step_advantage_w=step_advantage_w,
        )
    layout = BatchLayout.from_batch(batch, group_by_agent=group_by_agent)
    score = episode_score_samples(batch, layout, invalid_penalty=invalid_penalty)
    episode = episode_advantages(layout, score, mode=mode, per_trajectory=per_trajectory, epsilon=epsilon)
    samples = step_return_samples(batch, layout, gamma=gamma, invalid_penalty=invalid_penalty)
    codes, n_codes = step_groups(batch, layout, similarity_thresh=similarity_thresh)
    step = normalize_in_groups(codes, samples, n_codes, mode=mode, ddof=1, epsilon=epsilon, singleton="zero")
    return episode + step_advantage_w * step


def step_advantages(
    batch: StepBatch,
    *,
    mode: Mode = "mean_norm",
    gamma: float = 0.95,
    invalid_penalty: float = 0.1,
    similarity_thresh: float | None = None,
    group_by_agent: bool = False,
    unbiased: bool = True,
    epsilon: float = 1e-6,
) -> NDArray[np.float64]:
    """GiGPO's step-level term A^S alone.

    Args:
        batch: the steps, any row order.
        mode: ``"mean_norm"`` or ``"mean_std_norm"``.
        gamma: discount factor of the step returns, in [0, 1].
        invalid_penalty: subtracted from each invalid row's step return (0 disables).
        similarity_thresh: ``None`` for exact anchor groups, else a ``difflib`` threshold in (0, 1).
        group_by_agent: key step groups by (uid, agent_id, anchor).
        unbiased: the (n-1) std as GiGPO uses; ``False`` gives HGPO's population std.
        epsilon: added to the std in ``mean_std_norm``.

    Returns:
        A^S (float64) in input row order; rows alone in their step group get 0.

    Raises:
        ConfigurationError: a malformed batch or an invalid setting.
    """
    layout = BatchLayout.from_batch(batch, group_by_agent=group_by_agent)
    samples = step_return_samples(batch, layout, gamma=gamma, invalid_penalty=invalid_penalty)
    codes, n_codes = step_groups(batch, layout, similarity_thresh=similarity_thresh)
    return normalize_in_groups(
        codes, samples, n_codes, mode=mode, ddof=1 if unbiased else 0, epsilon=epsilon, singleton="zero"
    )


def step_groups(
    batch: StepBatch, layout: BatchLayout, *, similarity_thresh: float | None = None
) -> tuple[NDArray[np.int64], int]:
    """Anchor-state group codes: equal (or similar) anchors inside one normalisation group.

    Args:
        batch: the steps (its anchors are read for similarity grouping).
        layout: ``BatchLayout.from_batch(batch, ...)``; its ``group`` codes scope the anchors.
        similarity_thresh: ``None`` for exact equality, else a ``difflib`` threshold in (0, 1).

    Returns:
        ``(codes, n_groups)`` per row.

    Raises:
        ConfigurationError: a bad threshold or non-text anchors under similarity grouping.
    """
    if similarity_thresh is None:
        return combine_codes(layout.group, layout.anchor)
    return similarity_clusters(layout.group, batch.anchor, threshold=similarity_thresh)

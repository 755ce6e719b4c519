"""HGPO: hierarchical anchor-history groups with length-weighted aggregation.

Reference: ``recipe/hgpo/core_hgpo.py`` (``hgpo_advantage_estimate``) of verl-agent.

For a row at step s of its trajectory and each level l = 0..min(K, s), the level-l group
is every row of the same uid (and agent, with agent grouping) whose last l+1 anchors
o_{s-l}..o_s are equal; actions are not part of the key, steps with fewer than l
predecessors take no part in level l, and repeats inside one trajectory count. Level 0 is
GiGPO's anchor group. In each group of at least two members each member gets an item
``(l, a)``, with ``a = r - mean`` (``mean_norm``) or ``(r - mean) / (std + eps)``
(``mean_std_norm``, **population** std) over the penalised discounted returns r. With
``base_group`` the GiGPO episode-level advantage is added as an item of weight 1. Items whose
advantage is exactly 0 are dropped; the rest are averaged with weights ``(l + 2) ** alpha``:
``A = sum(w * a) / (sum(w) + eps)``, and a row with no item gets 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from envhub.algos.grouping import Mode, check_mode, combine_codes, normalize_in_groups
from envhub.algos.grpo import episode_advantages
from envhub.algos.layout import BatchLayout
from envhub.algos.returns import episode_score_samples, step_return_samples
from envhub.core.errors import ConfigurationError
from envhub.core.records import StepBatch

__all__ = ["HGPOLevel", "hgpo_advantages", "hgpo_levels"]


def hgpo_advantages(
    batch: StepBatch,
    *,
    mode: Mode = "mean_std_norm",
    history_length: int = 2,
    length_weight_alpha: float = 1.0,
    base_group: bool = False,
    gamma: float = 0.95,
    invalid_penalty: float = 0.1,
    group_by_agent: bool = False,
    epsilon: float = 1e-6,
) -> NDArray[np.float64]:
    """HGPO advantage of every row.

    Args:
        batch: the steps, any row order.
        mode: ``"mean_norm"`` or ``"mean_std_norm"`` (population std at every level).
        history_length: K, the deepest level (the prompt's memory window; 0 = anchor groups only).
        length_weight_alpha: alpha in the weight ``(l + 2) ** alpha``; 0 gives a plain mean.
        base_group: add the GiGPO episode-level advantage as an item of weight 1.
        gamma: discount factor of the step returns, in [0, 1].
        invalid_penalty: subtracted from each invalid row's step return and score (0 disables).
        group_by_agent: key every group by (uid, agent_id) as well (Dr. MAS).
        epsilon: added to the std and to the weight sum.

    Returns:
        Advantages (float64) in input row order.

    Raises:
        ConfigurationError: a malformed batch or an invalid setting.
    """
    check_mode(mode)
    _check_settings(history_length, length_weight_alpha)
    layout = BatchLayout.from_batch(batch, group_by_agent=group_by_agent)
    n = len(layout.traj)
    samples = step_return_samples(batch, layout, gamma=gamma, invalid_penalty=invalid_penalty)
    weighted = np.zeros(n, dtype=np.float64)
    weight = np.zeros(n, dtype=np.float64)
    if base_group:
        score = episode_score_samples(batch, layout, invalid_penalty=invalid_penalty)
        base = episode_advantages(layout, score, mode=mode, per_trajectory=False, epsilon=epsilon)
        _add_items(weighted, weight, None, base, 1.0)
    by_agent = group_by_agent and batch.agent_id is not None
    levels = _level_advantages(
        layout, samples, history_length=history_length, mode=mode, epsilon=epsilon, by_agent=by_agent
    )
    for level, member, advantage, _ in levels:
        _add_items(weighted, weight, member, advantage, float(level + 2) ** length_weight_alpha)
    return weighted / (weight + epsilon)


@dataclass(frozen=True, eq=False)
class HGPOLevel:
    """One level of HGPO's hierarchy, every array in input row order.

    Attributes:
        level: l (0 is GiGPO's anchor group; l shares the last l + 1 anchors).
        weight: the level's weight ``(l + 2) ** alpha``.
        member: rows deep enough to take part in the level.
        group: the level-l group of each row (equal codes: one group; meaningless off ``member``).
        advantage: each row's level-l advantage (0 off ``member`` and in groups of one).
        used: rows whose item enters the weighted mean (members with a non-zero advantage).
    """

    level: int
    weight: float
    member: NDArray[np.bool_]
    group: NDArray[np.int64]
    advantage: NDArray[np.float64]
    used: NDArray[np.bool_]


def hgpo_levels(
    batch: StepBatch,
    *,
    mode: Mode = "mean_std_norm",
    history_length: int = 2,
    length_weight_alpha: float = 1.0,
    gamma: float = 0.95,
    invalid_penalty: float = 0.1,
    group_by_agent: bool = False,
    epsilon: float = 1e-6,
) -> list[HGPOLevel]:
    """The levels :func:`hgpo_advantages` averages, for showing where a row's advantage came from.

    Same arguments as :func:`hgpo_advantages` (less ``base_group``, whose item is the GRPO
    episode advantage of weight 1). Levels no row is deep enough for are left out.

    Raises:
        ConfigurationError: a malformed batch or an invalid setting.
    """
    check_mode(mode)
    _check_settings(history_length, length_weight_alpha)
    layout = BatchLayout.from_batch(batch, group_by_agent=group_by_agent)
    samples = step_return_samples(batch, layout, gamma=gamma, invalid_penalty=invalid_penalty)
    by_agent = group_by_agent and batch.agent_id is not None
    levels = _level_advantages(
        layout, samples, history_length=history_length, mode=mode, epsilon=epsilon, by_agent=by_agent
    )
    return [
        HGPOLevel(
            level=level,
            weight=float(level + 2) ** length_weight_alpha,
            member=member,
            group=codes,
            advantage=np.where(member, advantage, 0.0),
            used=member & (advantage != 0.0),
        )
        for level, member, advantage, codes in levels
    ]


def _level_advantages(
    layout: BatchLayout,
    samples: NDArray[np.float64],
    *,
    history_length: int,
    mode: Mode,
    epsilon: float,
    by_agent: bool,
) -> Iterator[tuple[int, NDArray[np.bool_], NDArray[np.float64], NDArray[np.int64]]]:
    """Yield ``(level, member, advantage, group codes)`` for levels 0..K.

    ``member`` marks the rows deep enough for the level; ``advantage`` (every row) is their
    per-level advantage, 0 where their group has fewer than two members.
    """
    n = len(samples)
    predecessor = _predecessors(layout)
    # One sort of the samples serves every level: rows outside a level are parked in an
    # extra group whose statistics are never read.
    value_order = np.argsort(samples, kind="stable")
    window, n_windows = combine_codes(layout.uid, layout.anchor)
    member = np.ones(n, dtype=bool)
    for level in range(history_length + 1):
        if level:
            member = layout.position >= level
            rows = np.flatnonzero(member)
            if len(rows) == 0:
                return
            # The window o_{s-l}..o_s extends the predecessor's window o_{s-l}..o_{s-1} by o_s.
            extended, n_windows = combine_codes(window[predecessor[rows]], layout.anchor[rows])
            window = np.full(n, n_windows, dtype=np.int64)
            window[rows] = extended
        codes, n_codes = combine_codes(window, layout.group) if by_agent else (window, n_windows + 1)
        advantage = normalize_in_groups(
            codes, samples, n_codes, mode=mode, ddof=0, epsilon=epsilon, singleton="zero", order=value_order
        )
        yield level, member, advantage, codes


def _add_items(
    weighted: NDArray[np.float64],
    weight: NDArray[np.float64],
    member: NDArray[np.bool_] | None,
    advantage: NDArray[np.float64],
    w: float,
) -> None:
    # An item whose advantage is exactly 0 is dropped with its weight (the reference's rule),
    # so a singleton or all-equal group neither pulls the average to 0 nor adds weight.
    keep = advantage != 0.0
    if member is not None:
        keep &= member
    weighted += np.where(keep, w * advantage, 0.0)
    weight += np.where(keep, w, 0.0)


def _predecessors(layout: BatchLayout) -> NDArray[np.int64]:
    """The row index of the previous step of each row's trajectory (-1 at step 0)."""
    n = len(layout.order)
    predecessor = np.full(n, -1, dtype=np.int64)
    later = np.flatnonzero(layout.position[layout.order] > 0)
    predecessor[layout.order[later]] = layout.order[later - 1]
    return predecessor


def _check_settings(history_length: int, length_weight_alpha: float) -> None:
    if (
        isinstance(history_length, bool)
        or not isinstance(history_length, int | np.integer)
        or history_length < 0
    ):
        raise ConfigurationError(
            f"history_length (K) must be an integer >= 0, got {history_length!r}; it is the number of "
            "previous anchors a level-K group must share (the reference uses 2 or 4).",
            history_length=history_length,
        )
    if not np.isfinite(length_weight_alpha):
        raise ConfigurationError(
            f"length_weight_alpha must be a finite number, got {length_weight_alpha!r} "
            "(1.0 is the reference default; 0 weighs every level equally).",
            length_weight_alpha=length_weight_alpha,
        )

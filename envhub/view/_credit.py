"""Step-level credit of one group, computed by :mod:`envhub.algos` from its stored steps.

The viewer shows numbers, it never derives them: every advantage here is the return value of
an ``envhub.algos`` function called on the group's :class:`~envhub.core.records.StepBatch`
with the run's advantage settings. Group statistics in every estimator are scoped by uid,
so one group alone gives bit-for-bit the values the trainer got for it in its iteration's
batch.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from envhub.algos import (
    AdvantageConfig,
    GiGPOConfig,
    GraphGPOConfig,
    HGPOConfig,
    TransitionGraph,
    compute_advantages,
    graphgpo_advantages,
    grpo_advantages,
    hgpo_levels,
    state_distances,
    step_advantages,
    transition_graphs,
)
from envhub.algos.gigpo import step_groups
from envhub.algos.layout import BatchLayout
from envhub.core.records import Group, StepBatch

__all__ = ["GroupCredit", "LevelItem", "StepCredit", "StepKey", "group_credit"]

#: A step inside its group: (trajectory id, step index).
StepKey = tuple[str, int]


@dataclass(frozen=True)
class LevelItem:
    """One HGPO level of one step: its group, weight and advantage (and whether it counted)."""

    level: int
    weight: float
    advantage: float
    used: bool
    peers: tuple[StepKey, ...]  # the level group's members, this step included


@dataclass(frozen=True)
class StepCredit:
    """What one step got: the advantage the trainer used, and its parts."""

    advantage: float
    episode: float | None = None  # GRPO's advantage; GiGPO's and GraphGPO's A^E; HGPO's base-group item
    step: float | None = None  # GiGPO's and GraphGPO's A^S
    anchor_group: int | None = None  # GiGPO, GraphGPO: index into GroupCredit.anchor_groups
    levels: tuple[LevelItem, ...] = ()  # HGPO
    distances: tuple[int, int] | None = None  # GraphGPO: (d(anchor), d(next)) to success


@dataclass
class GroupCredit:
    """Every step's credit in one group and the anchor groups that link them."""

    algo: str
    config: AdvantageConfig
    steps: dict[StepKey, StepCredit] = field(default_factory=dict)
    #: GiGPO: the steps sharing each anchor (across trajectories and inside one), by group index.
    anchor_groups: list[tuple[StepKey, ...]] = field(default_factory=list)
    #: GraphGPO: the group's state-transition graph with each node's distance to success.
    graph: TransitionGraph | None = None


def _keys(group: Group) -> list[StepKey]:
    return [(t.traj_id, s.step_idx) for t in group.trajectories for s in t.steps]


def _members(codes: NDArray[np.int64], keys: list[StepKey]) -> dict[int, tuple[StepKey, ...]]:
    found: dict[int, list[StepKey]] = defaultdict(list)
    for code, key in zip(codes.tolist(), keys, strict=True):
        found[code].append(key)
    return {code: tuple(members) for code, members in found.items()}


def group_credit(group: Group, algo: str, config: AdvantageConfig) -> GroupCredit:
    """The credit of every step of ``group`` under ``algo`` with ``config``.

    Raises:
        ConfigurationError: the steps are malformed for the estimator (from envhub.algos).
    """
    batch = StepBatch.from_groups([group])
    keys = _keys(group)
    out = GroupCredit(algo=algo, config=config)
    if not keys:
        return out
    total = compute_advantages(batch, algo, config=config)
    if isinstance(config, GiGPOConfig):
        _gigpo(out, batch, keys, total, config)
    elif isinstance(config, HGPOConfig):
        _hgpo(out, batch, keys, total, config)
    elif isinstance(config, GraphGPOConfig):
        _graphgpo(out, batch, keys, total, config)
    else:
        out.steps = {
            k: StepCredit(advantage=float(a), episode=float(a)) for k, a in zip(keys, total, strict=True)
        }
    return out


def _episode(batch: StepBatch, config: AdvantageConfig) -> NDArray[np.float64]:
    return grpo_advantages(
        batch,
        mode=config.mode,
        per_trajectory=getattr(config, "per_trajectory", False),
        invalid_penalty=config.invalid_penalty,
        group_by_agent=getattr(config, "group_by_agent", False),
        epsilon=config.epsilon,
    )


def _anchor_groups(
    out: GroupCredit, batch: StepBatch, keys: list[StepKey], threshold: float | None, by_agent: bool
) -> NDArray[np.int64]:
    layout = BatchLayout.from_batch(batch, group_by_agent=by_agent)
    codes, _ = step_groups(batch, layout, similarity_thresh=threshold)
    members = _members(codes, keys)
    index = {code: i for i, code in enumerate(members)}
    out.anchor_groups = list(members.values())
    return np.array([index[int(code)] for code in codes.tolist()], dtype=np.int64)


def _gigpo(
    out: GroupCredit, batch: StepBatch, keys: list[StepKey], total: NDArray[np.float64], c: GiGPOConfig
) -> None:
    threshold = c.similarity_thresh if c.enable_similarity else None
    episode = _episode(batch, c)
    step = step_advantages(
        batch,
        mode=c.mode,
        gamma=c.gamma,
        invalid_penalty=c.invalid_penalty,
        similarity_thresh=threshold,
        group_by_agent=c.group_by_agent,
        unbiased=True,
        epsilon=c.epsilon,
    )
    groups = _anchor_groups(out, batch, keys, threshold, c.group_by_agent)
    out.steps = {
        key: StepCredit(
            advantage=float(total[i]),
            episode=float(episode[i]),
            step=float(step[i]),
            anchor_group=int(groups[i]),
        )
        for i, key in enumerate(keys)
    }


def _graphgpo(
    out: GroupCredit, batch: StepBatch, keys: list[StepKey], total: NDArray[np.float64], c: GraphGPOConfig
) -> None:
    # The two terms unweighted, as GiGPO's are shown; the total carries the weights.
    episode = _episode(batch, c)
    step = graphgpo_advantages(
        batch,
        mode=c.mode,
        gamma=c.gamma,
        step_advantage_w=1.0,
        episode_advantage_w=0.0,
        normalize_distance=c.normalize_distance,
        invalid_penalty=c.invalid_penalty,
        epsilon=c.epsilon,
    )
    groups = _anchor_groups(out, batch, keys, None, False)
    out.graph = next(iter(transition_graphs(batch).values()))
    d_anchor, d_next = state_distances(batch)
    out.steps = {
        key: StepCredit(
            advantage=float(total[i]),
            episode=float(episode[i]),
            step=float(step[i]),
            anchor_group=int(groups[i]),
            distances=(int(d_anchor[i]), int(d_next[i])),
        )
        for i, key in enumerate(keys)
    }


def _hgpo(
    out: GroupCredit, batch: StepBatch, keys: list[StepKey], total: NDArray[np.float64], c: HGPOConfig
) -> None:
    levels = hgpo_levels(
        batch,
        mode=c.mode,
        history_length=c.history_length,
        length_weight_alpha=c.length_weight_alpha,
        gamma=c.gamma,
        invalid_penalty=c.invalid_penalty,
        group_by_agent=c.group_by_agent,
        epsilon=c.epsilon,
    )
    peers = [_members(np.where(lv.member, lv.group, -1), keys) for lv in levels]
    # HGPO's base group is GiGPO's episode-level term (mean_std_norm or mean_norm as configured).
    base = _episode(batch, c) if c.base_group else None
    steps = {}
    for i, key in enumerate(keys):
        items = tuple(
            LevelItem(
                level=lv.level,
                weight=lv.weight,
                advantage=float(lv.advantage[i]),
                used=bool(lv.used[i]),
                peers=found[int(lv.group[i])],
            )
            for lv, found in zip(levels, peers, strict=True)
            if lv.member[i]
        )
        steps[key] = StepCredit(
            advantage=float(total[i]), episode=None if base is None else float(base[i]), levels=items
        )
    out.steps = steps

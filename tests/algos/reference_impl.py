"""A slow, obviously-correct pure-Python restatement of the estimators, for comparison.

Written straight from shared/reference/algorithms.md §1-3 and §6 with dicts and loops.
Group statistics sum members in ascending value order (as envhub does) so that the
comparison can be tight: HGPO drops exactly-zero items, so an order-dependent ulp could
otherwise flip an item in or out.
"""

from __future__ import annotations

import difflib
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from .builders import Row


def _group_key(row: Row, by_agent: bool) -> Any:
    return (row.uid, row.agent) if by_agent else (row.uid,)


def _trajectories(rows: Sequence[Row]) -> dict[Any, list[int]]:
    """Row indices of each (uid, traj), in step order."""
    trajs: dict[Any, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        trajs[(row.uid, row.traj)].append(i)
    for members in trajs.values():
        members.sort(key=lambda i: rows[i].step)
    return trajs


def discounted(rows: Sequence[Row], gamma: float) -> list[float]:
    out = [0.0] * len(rows)
    for members in _trajectories(rows).values():
        g = 0.0
        for i in reversed(members):
            g = rows[i].reward + gamma * g
            out[i] = g
    return out


def episode(rows: Sequence[Row]) -> list[float]:
    out = [0.0] * len(rows)
    for members in _trajectories(rows).values():
        total = 0.0
        for i in members:
            total += rows[i].reward
        for i in members:
            out[i] = total
    return out


def _penalty(row: Row, coef: float) -> float:
    return coef * (0.0 if row.valid else 1.0)


def _stats(values: list[float], ddof: int) -> tuple[float, float]:
    vs = sorted(values)
    if vs[0] == vs[-1]:
        return vs[0], 0.0
    total = 0.0
    for v in vs:
        total += v
    mean = total / len(vs)
    squares = 0.0
    for v in vs:
        squares += (v - mean) * (v - mean)
    return mean, math.sqrt(squares / (len(vs) - ddof))


def _norm(x: float, mean: float, std: float, mode: str, eps: float) -> float:
    return x - mean if mode == "mean_norm" else (x - mean) / (std + eps)


def episode_adv(
    rows: Sequence[Row], *, mode: str, coef: float, per_trajectory: bool, by_agent: bool, eps: float
) -> list[float]:
    ret = episode(rows)
    score = [ret[i] - _penalty(r, coef) for i, r in enumerate(rows)]
    # One sample per trajectory (per trajectory and agent with agent grouping): its first step.
    first_step: dict[Any, int] = {}
    for r in rows:
        owner = (r.traj, _group_key(r, by_agent))
        first_step[owner] = min(first_step.get(owner, r.step), r.step)
    samples: dict[Any, list[float]] = defaultdict(list)
    for i, r in enumerate(rows):
        if not per_trajectory or r.step == first_step[(r.traj, _group_key(r, by_agent))]:
            samples[_group_key(r, by_agent)].append(score[i])
    out = []
    for i, r in enumerate(rows):
        vals = samples[_group_key(r, by_agent)]
        mean, std = (0.0, 1.0) if len(vals) == 1 else _stats(vals, ddof=1)
        out.append(_norm(score[i], mean, std, mode, eps))
    return out


def _similarity_keys(rows: Sequence[Row], by_agent: bool, thresh: float) -> list[Any]:
    reps: dict[Any, list[tuple[str, int]]] = defaultdict(list)
    keys = []
    counter = 0
    for r in rows:  # batch order, first matching representative wins
        group = _group_key(r, by_agent)
        for rep, cluster in reps[group]:
            if difflib.SequenceMatcher(None, r.anchor, rep).ratio() >= thresh:
                keys.append(cluster)
                break
        else:
            reps[group].append((r.anchor, counter))
            keys.append(counter)
            counter += 1
    return keys


def step_adv(
    rows: Sequence[Row],
    *,
    mode: str,
    gamma: float,
    coef: float,
    by_agent: bool,
    eps: float,
    ddof: int = 1,
    similarity: float | None = None,
) -> list[float]:
    g = discounted(rows, gamma)
    r_step = [g[i] - _penalty(r, coef) for i, r in enumerate(rows)]
    if similarity is None:
        keys = [(_group_key(r, by_agent), r.anchor) for r in rows]
    else:
        keys = _similarity_keys(rows, by_agent, similarity)
    members: dict[Any, list[float]] = defaultdict(list)
    for i, k in enumerate(keys):
        members[k].append(r_step[i])
    out = []
    for i, k in enumerate(keys):
        if len(members[k]) == 1:
            out.append(0.0)
        else:
            mean, std = _stats(members[k], ddof)
            out.append(_norm(r_step[i], mean, std, mode, eps))
    return out


def gigpo(
    rows: Sequence[Row],
    *,
    mode: str,
    gamma: float,
    coef: float,
    w: float,
    by_agent: bool,
    eps: float,
    per_trajectory: bool = False,
    similarity: float | None = None,
) -> list[float]:
    a_e = episode_adv(rows, mode=mode, coef=coef, per_trajectory=per_trajectory, by_agent=by_agent, eps=eps)
    a_s = step_adv(rows, mode=mode, gamma=gamma, coef=coef, by_agent=by_agent, eps=eps, similarity=similarity)
    return [e + w * s for e, s in zip(a_e, a_s, strict=True)]


def hgpo(
    rows: Sequence[Row],
    *,
    mode: str,
    k: int,
    alpha: float,
    base: bool,
    gamma: float,
    coef: float,
    by_agent: bool,
    eps: float,
) -> list[float]:
    g = discounted(rows, gamma)
    r_step = [g[i] - _penalty(r, coef) for i, r in enumerate(rows)]
    position: dict[int, int] = {}
    history: dict[int, list[Any]] = {}
    for members in _trajectories(rows).values():
        anchors = [rows[i].anchor for i in members]
        for s, i in enumerate(members):
            position[i] = s
            history[i] = anchors
    keys: dict[int, list[tuple[int, Any]]] = {}
    groups: dict[Any, list[float]] = defaultdict(list)
    for i, r in enumerate(rows):
        s = position[i]
        keys[i] = []
        for level in range(min(k, s) + 1):
            key = (_group_key(r, by_agent), level, tuple(history[i][s - level : s + 1]))
            keys[i].append((level, key))
            groups[key].append(r_step[i])
    base_adv = (
        episode_adv(rows, mode=mode, coef=coef, per_trajectory=False, by_agent=by_agent, eps=eps)
        if base
        else None
    )
    out = []
    for i in range(len(rows)):
        items: list[tuple[float, float]] = []  # (raw weight, advantage)
        if base_adv is not None:
            items.append((1.0, base_adv[i]))
        for level, key in keys[i]:
            vals = groups[key]
            if len(vals) < 2:
                continue
            mean, std = _stats(vals, ddof=0)
            items.append((float(level + 2) ** alpha, _norm(r_step[i], mean, std, mode, eps)))
        num = 0.0
        den = 0.0
        for w, a in items:
            if a != 0.0:
                num += w * a
                den += w
        out.append(num / (den + eps))
    return out

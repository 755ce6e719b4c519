"""GraphGPO: step returns from each group's state-transition graph (Cheng et al., ICML 2026).

Per task group (uid) the rows' transitions form a directed graph: nodes are anchor states,
and each row adds the edge ``anchor -> next state``. The next state of a row is the anchor of
the next step of its trajectory; the last step of a *successful* trajectory goes to the
group's ``success`` node (the authors' rule: the episode's summed env reward is > 0). Every
edge weighs 1, so the reverse shortest-path distance ``d`` from ``success`` is a breadth-first
search on the reversed graph. States from which ``success`` cannot be reached get the largest
finite distance of their group plus one (a group without a success gets 0 + 1 = 1 everywhere).

Step return of a row, in the authors' two variants (config ``normalize_distance``):

* ``False`` (absolute): ``10 * gamma ** d(next)``;
* ``True`` (progress): ``10 * gamma ** (d(next) - d(anchor) + 1)``.

The invalid-action penalty is then subtracted, and the returns are normalised within
same-anchor groups exactly as GiGPO's step level (:func:`envhub.algos.gigpo.step_groups`);
the advantage is ``step_advantage_w * A^S + episode_advantage_w * A^E`` with the GRPO
episode-level ``A^E``. Semantics restated from the authors' ``recipe/GraphGPO/core_graph.py``
(``zzj1111/alfworldauto``, a verl-agent fork); pinned by ``tests/reference/test_graphgpo.py``.

The state after a *failed* trajectory's last step is the env's final state, as in the authors'
rollout (each row's ``next_obs`` is the anchor of the observation its step returned). The
rollout records it (``Trajectory.final_anchor``) and :meth:`StepBatch.from_groups
<envhub.core.records.StepBatch.from_groups>` puts it in the batch's ``next_anchor`` column,
which these functions read unless ``next_anchor`` is passed. Where it is unknown (a ``None``
entry, or a batch without the column: records from before it was recorded), each failed
trajectory ends in a terminal node of its own (unreachable), which differs from the authors
wherever that episode really ended in a state of its group's graph.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from envhub.algos.gigpo import step_groups
from envhub.algos.grouping import Mode, check_mode, combine_codes, factorize, normalize_in_groups
from envhub.algos.grpo import episode_advantages
from envhub.algos.layout import BatchLayout
from envhub.algos.returns import episode_score_samples, invalid_penalty_of
from envhub.core.errors import ConfigurationError
from envhub.core.records import StepBatch, canonical_anchor

__all__ = [
    "GraphEdge",
    "GraphNode",
    "TransitionGraph",
    "graph_step_returns",
    "graphgpo_advantages",
    "state_distances",
    "transition_graphs",
]

#: The authors' return scale: a step into ``success`` (d = 0) earns 10.
_RETURN_SCALE = 10.0


@dataclass(frozen=True)
class GraphNode:
    """A node of a group's transition graph.

    Attributes:
        label: the anchor (as text), ``"success"``, or ``"end of <traj_id>"`` for the state
            after a failed trajectory's last step where that state is unknown.
        distance: reverse shortest-path distance to ``success`` (unreachable: the group's
            largest finite distance + 1).
        reachable: whether ``success`` can be reached from it.
        kind: ``"state"``, ``"success"`` or ``"end"``.
    """

    label: str
    distance: int
    reachable: bool
    kind: str


@dataclass(frozen=True)
class GraphEdge:
    """Observed transitions from ``source`` to ``target`` (node indices) and how many rows took them."""

    source: int
    target: int
    count: int


@dataclass(frozen=True)
class TransitionGraph:
    """One group's state-transition graph (for inspection and the run viewer).

    Attributes:
        nodes: the nodes, ``success`` included.
        edges: one entry per distinct (source, target) pair.
        success: index of the ``success`` node in ``nodes``.
    """

    nodes: list[GraphNode]
    edges: list[GraphEdge]
    success: int


@dataclass(frozen=True, eq=False)
class _Graph:
    layout: BatchLayout
    src: NDArray[np.int64]  # node of each row's anchor
    dst: NDArray[np.int64]  # node of each row's next state
    distance: NDArray[np.int64]  # per node
    reachable: NDArray[np.bool_]  # per node
    node_uid: NDArray[np.int64]  # uid code per node
    node_state: NDArray[np.int64]  # state code per node (see _build)
    success_node: NDArray[np.int64]  # per uid code
    n_states: int
    states: list[Any]


def _next_codes(
    batch: StepBatch,
    layout: BatchLayout,
    next_anchor: Sequence[Any] | NDArray[Any] | None,
    success: Sequence[bool] | NDArray[Any] | None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], int, list[Any]]:
    """(anchor state code, next state code) per row; codes >= n_states are success / ends."""
    n = len(batch)
    if next_anchor is not None and len(next_anchor) != n:
        raise ConfigurationError(
            f"next_anchor must have one entry per row ({n}), got {len(next_anchor)}.", rows=n
        )
    if success is not None and len(success) != n:
        raise ConfigurationError(f"success must have one entry per row ({n}), got {len(success)}.", rows=n)
    if next_anchor is None:
        next_anchor = batch.next_anchor
    anchors = list(batch.anchor)
    known = None
    if next_anchor is not None:
        given = [canonical_anchor(a) for a in next_anchor]
        known = np.fromiter((a is not None for a in given), dtype=bool, count=n)
        anchors += [a for a in given if a is not None]
    codes, n_states = factorize(anchors, column="anchor")
    distinct = list(dict.fromkeys(anchors))
    a_code = codes[:n]
    order = layout.order
    is_last = np.zeros(n, dtype=bool)
    is_last[order] = layout.position[order] == layout.length[layout.traj[order]] - 1
    if success is None:
        reward = np.asarray(batch.reward, dtype=np.float64)
        total = np.bincount(layout.traj[order], weights=reward[order], minlength=layout.n_traj)
        won = total[layout.traj] > 0.0
    else:
        won = np.asarray(success, dtype=bool)
    nxt = np.empty(n, dtype=np.int64)
    # Unknown next states: in (trajectory, step) order row i's successor is row i + 1, and
    # after a trajectory's last step comes a terminal node of its own.
    inner = order[:-1][~is_last[order[:-1]]]
    nxt[inner] = a_code[order[1:][~is_last[order[:-1]]]]
    last = np.flatnonzero(is_last)
    nxt[last] = n_states + 1 + layout.traj[last]
    if known is not None:
        nxt[known] = codes[n:]
    winning_last = is_last & won
    nxt[winning_last] = n_states  # the success node
    return a_code, nxt, n_states, distinct


def _build(
    batch: StepBatch,
    next_anchor: Sequence[Any] | NDArray[Any] | None = None,
    success: Sequence[bool] | NDArray[Any] | None = None,
    layout: BatchLayout | None = None,
) -> _Graph:
    if layout is None:
        layout = BatchLayout.from_batch(batch)
    n = len(batch)
    a_code, nxt, n_states, distinct = _next_codes(batch, layout, next_anchor, success)
    n_uid = int(layout.uid.max()) + 1 if n else 0
    uid_all = np.concatenate([layout.uid, layout.uid, np.arange(n_uid, dtype=np.int64)])
    state_all = np.concatenate([a_code, nxt, np.full(n_uid, n_states, dtype=np.int64)])
    node, n_nodes = combine_codes(uid_all, state_all)
    src, dst, success_node = node[:n], node[n : 2 * n], node[2 * n :]
    node_uid = np.zeros(n_nodes, dtype=np.int64)
    node_uid[node] = uid_all
    node_state = np.zeros(n_nodes, dtype=np.int64)
    node_state[node] = state_all
    # Breadth-first search backwards from every group's success node at once: the groups'
    # graphs are disjoint, so one multi-source search gives each group its own distances.
    # One vectorised pass per distance level, never a loop over rows.
    inf = np.iinfo(np.int64).max
    distance = np.full(n_nodes, inf, dtype=np.int64)
    distance[success_node] = 0
    frontier = np.zeros(n_nodes, dtype=bool)
    frontier[success_node] = True
    level = 0
    while frontier.any():
        level += 1
        hit = frontier[dst] & (distance[src] == inf)
        reached = np.unique(src[hit])
        distance[reached] = level
        frontier = np.zeros(n_nodes, dtype=bool)
        frontier[reached] = True
    reachable = distance != inf
    far = np.zeros(n_uid, dtype=np.int64)
    np.maximum.at(far, node_uid[reachable], distance[reachable])
    distance[~reachable] = far[node_uid[~reachable]] + 1
    return _Graph(
        layout=layout,
        src=src,
        dst=dst,
        distance=distance,
        reachable=reachable,
        node_uid=node_uid,
        node_state=node_state,
        success_node=success_node,
        n_states=n_states,
        states=distinct,
    )


def state_distances(
    batch: StepBatch,
    *,
    next_anchor: Sequence[Any] | NDArray[Any] | None = None,
    success: Sequence[bool] | NDArray[Any] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Distances to ``success`` of every row's anchor and next state, in its group's graph.

    Args:
        batch: the steps, any row order.
        next_anchor: the state each row's action led to (canonicalised like anchors); None
            reads the batch's ``next_anchor`` column. Where neither gives a row's (None, the
            entry or the column), it is the next step's anchor and, after a failed trajectory's
            last step, a terminal node of its own. A winning trajectory's last step always
            leads to ``success``.
        success: per row, whether its trajectory succeeded; None uses the authors' rule
            (the trajectory's summed reward is > 0).

    Returns:
        ``(d_anchor, d_next)``, int64, input row order.

    Raises:
        ConfigurationError: a malformed batch or a column of the wrong length.
    """
    g = _build(batch, next_anchor, success)
    return g.distance[g.src], g.distance[g.dst]


def graph_step_returns(
    batch: StepBatch,
    *,
    gamma: float = 0.1,
    normalize_distance: bool = False,
    next_anchor: Sequence[Any] | NDArray[Any] | None = None,
    success: Sequence[bool] | NDArray[Any] | None = None,
) -> NDArray[np.float64]:
    """The authors' graph step return of every row (before the invalid-action penalty).

    Args:
        batch: the steps, any row order.
        gamma: the base, in (0, 1].
        normalize_distance: ``False``: ``10 * gamma ** d(next)``; ``True`` (progress):
            ``10 * gamma ** (d(next) - d(anchor) + 1)``.
        next_anchor: see :func:`state_distances`.
        success: see :func:`state_distances`.

    Returns:
        float64 returns, input row order.

    Raises:
        ConfigurationError: gamma outside (0, 1] or a malformed batch.
    """
    return _returns(_build(batch, next_anchor, success), gamma, normalize_distance)


def _returns(g: _Graph, gamma: float, normalize_distance: bool) -> NDArray[np.float64]:
    _check_gamma(gamma)
    d_anchor, d_next = g.distance[g.src], g.distance[g.dst]
    exponent = d_next - d_anchor + 1 if normalize_distance else d_next
    return _RETURN_SCALE * np.power(float(gamma), exponent.astype(np.float64))


def graphgpo_advantages(
    batch: StepBatch,
    *,
    mode: Mode = "mean_std_norm",
    gamma: float = 0.1,
    step_advantage_w: float = 1.0,
    episode_advantage_w: float = 1.0,
    normalize_distance: bool = False,
    invalid_penalty: float = 0.1,
    next_anchor: Sequence[Any] | NDArray[Any] | None = None,
    success: Sequence[bool] | NDArray[Any] | None = None,
    epsilon: float = 1e-6,
) -> NDArray[np.float64]:
    """GraphGPO advantage ``step_advantage_w * A^S + episode_advantage_w * A^E`` of every row.

    Args:
        batch: the steps, any row order.
        mode: ``"mean_std_norm"`` (the authors' default) or ``"mean_norm"``, both levels.
        gamma: base of the graph step return, in (0, 1] (authors: 0.1 ALFWorld, 0.2 WebShop, 0.8 Sokoban).
        step_advantage_w: weight of the graph step term.
        episode_advantage_w: weight of the episode term (0 leaves only the graph signal).
        normalize_distance: the authors' option: ``True`` uses the distance change (progress).
        invalid_penalty: subtracted from each invalid row's step return and episode score.
        next_anchor: see :func:`state_distances`.
        success: see :func:`state_distances`.
        epsilon: added to the std in ``mean_std_norm``.

    Returns:
        Advantages (float64) in input row order.

    Raises:
        ConfigurationError: a malformed batch or an invalid setting.
    """
    check_mode(mode)
    for name, w in (("step_advantage_w", step_advantage_w), ("episode_advantage_w", episode_advantage_w)):
        if not np.isfinite(w):
            raise ConfigurationError(f"{name} must be a finite number, got {w!r}.", **{name: w})
    _check_gamma(gamma)
    layout = BatchLayout.from_batch(batch)
    returns = _returns(_build(batch, next_anchor, success, layout), gamma, normalize_distance)
    samples = returns - invalid_penalty_of(batch, invalid_penalty)
    codes, n_codes = step_groups(batch, layout)
    step = normalize_in_groups(codes, samples, n_codes, mode=mode, ddof=1, epsilon=epsilon, singleton="zero")
    out = step_advantage_w * step
    if episode_advantage_w != 0.0:
        score = episode_score_samples(batch, layout, invalid_penalty=invalid_penalty)
        out = out + episode_advantage_w * episode_advantages(
            layout, score, mode=mode, per_trajectory=False, epsilon=epsilon
        )
    return out


def transition_graphs(
    batch: StepBatch,
    *,
    next_anchor: Sequence[Any] | NDArray[Any] | None = None,
    success: Sequence[bool] | NDArray[Any] | None = None,
) -> dict[Hashable, TransitionGraph]:
    """Every group's transition graph with its distances, keyed by uid.

    Args:
        batch: the steps.
        next_anchor: see :func:`state_distances`.
        success: see :func:`state_distances`.

    Returns:
        ``{uid: TransitionGraph}``.

    Raises:
        ConfigurationError: a malformed batch.
    """
    g = _build(batch, next_anchor, success)
    traj_names: dict[int, Any] = {}
    for row in range(len(batch)):
        traj_names.setdefault(int(g.layout.traj[row]), batch.traj_id[row])
    uid_names: dict[int, Any] = {}
    for row in range(len(batch)):
        uid_names.setdefault(int(g.layout.uid[row]), batch.uid[row])
    out: dict[Hashable, TransitionGraph] = {}
    for u, name in uid_names.items():
        members = np.flatnonzero(g.node_uid == u)
        index = {int(node): i for i, node in enumerate(members)}
        nodes = []
        for node in members:
            state = int(g.node_state[node])
            if state < g.n_states:
                label, kind = str(g.states[state]), "state"
            elif state == g.n_states:
                label, kind = "success", "success"
            else:
                label, kind = f"end of {traj_names[state - g.n_states - 1]}", "end"
            nodes.append(GraphNode(label, int(g.distance[node]), bool(g.reachable[node]), kind))
        pairs: dict[tuple[int, int], int] = {}
        for member in np.flatnonzero(g.layout.uid == u).tolist():
            key = (index[int(g.src[member])], index[int(g.dst[member])])
            pairs[key] = pairs.get(key, 0) + 1
        edges = [GraphEdge(s, t, c) for (s, t), c in pairs.items()]
        out[name] = TransitionGraph(nodes=nodes, edges=edges, success=index[int(g.success_node[u])])
    return out


def _check_gamma(gamma: float) -> None:
    if not (np.isfinite(gamma) and 0.0 < gamma <= 1.0):
        raise ConfigurationError(
            f"gamma must lie in (0, 1] for GraphGPO (its progress return raises gamma to negative "
            f"powers), got {gamma!r}.",
            gamma=gamma,
        )

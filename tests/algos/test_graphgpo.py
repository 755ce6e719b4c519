"""GraphGPO: state-transition graph per group, reverse distances from success, step returns."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

from envhub.algos import (
    compute_advantages,
    graph_step_returns,
    graphgpo_advantages,
    state_distances,
    transition_graphs,
)
from envhub.algos.gigpo import gigpo_advantages
from envhub.core.errors import ConfigurationError

from .builders import Row, random_rows, row_lists, to_batch, trajectory

EPS = 1e-6
FEW = settings(max_examples=40, deadline=None)


def _example() -> list[Row]:
    # One task. t1 wins via s0 -> s1 -> s2 -> SUCCESS; t2 wanders s0 -> s3 -> s1 then stops (fails);
    # t3 loops s0 -> s0 -> s4 and fails (s4 is never left: its successor is t3's terminal state).
    return (
        trajectory("u", "t1", ["s0", "s1", "s2"], [0, 0, 10])
        + trajectory("u", "t2", ["s0", "s3", "s1"], [0, 0, 0])
        + trajectory("u", "t3", ["s0", "s0", "s4"], [0, 0, 0])
    )


def test_distances_are_reverse_shortest_paths_to_success() -> None:
    d_anchor, d_next = state_distances(to_batch(_example()))
    # s2 -> SUCCESS: 1; s1 -> s2: 2; s0 -> s1: 3; s3 -> s1: 3. Reachable maximum 3 (the success
    # node itself is 0), so the unreachable states (s4, the failed trajectories' terminal
    # states) get 3 + 1 = 4.
    np.testing.assert_array_equal(d_anchor, [3, 2, 1, 3, 3, 2, 3, 3, 4])
    np.testing.assert_array_equal(d_next, [2, 1, 0, 3, 2, 4, 3, 4, 4])


def test_absolute_variant_returns_ten_gamma_to_the_next_distance() -> None:
    batch = to_batch(_example())
    _, d_next = state_distances(batch)
    adv_rows = graphgpo_advantages(
        batch, gamma=0.1, episode_advantage_w=0.0, mode="mean_norm", invalid_penalty=0
    )
    # step groups: s0 has rows 0, 3, 6, 7 (next distances 2, 3, 3, 4); s1 has rows 1, 5 (1, 4)
    r = 10 * 0.1 ** d_next.astype(float)
    s0 = r[[0, 3, 6, 7]]
    s1 = r[[1, 5]]
    expected = np.zeros(9)
    expected[[0, 3, 6, 7]] = s0 - s0.mean()
    expected[[1, 5]] = s1 - s1.mean()
    np.testing.assert_allclose(adv_rows, expected, rtol=1e-12, atol=1e-15)


def test_progress_variant_uses_the_distance_change() -> None:
    batch = to_batch(_example())
    d_anchor, d_next = state_distances(batch)
    adv = graphgpo_advantages(
        batch,
        gamma=0.5,
        episode_advantage_w=0.0,
        normalize_distance=True,
        mode="mean_norm",
        invalid_penalty=0,
    )
    r = 10 * 0.5 ** (d_next - d_anchor + 1).astype(float)
    s0 = r[[0, 3, 6, 7]]
    assert s0.tolist() == [10.0, 5.0, 5.0, 2.5]
    np.testing.assert_allclose(adv[[0, 3, 6, 7]], s0 - s0.mean(), rtol=1e-12)


def test_state_on_every_successful_path_gets_the_top_return_in_its_group() -> None:
    # Every winning trajectory passes through "key"; steps that reach it from the same state
    # must get at least the return of any other step from that state.
    rows = (
        trajectory("u", "a", ["s", "key", "x"], [0, 0, 1])
        + trajectory("u", "b", ["s", "y", "key", "z"], [0, 0, 0, 1])
        + trajectory("u", "c", ["s", "w"], [0, 0])
    )
    batch = to_batch(rows)
    d_anchor, d_next = state_distances(batch)
    returns = 10 * 0.1 ** d_next.astype(float)
    from_s = [0, 3, 7]
    assert returns[0] == max(returns[from_s])  # s -> key
    assert d_anchor[1] < d_anchor[0]  # the key state is closer than the start


def test_group_without_success_gives_every_state_distance_one_and_zero_step_advantage() -> None:
    rows = trajectory("u", "a", ["s", "t"], [0, 0]) + trajectory("u", "b", ["s", "v"], [0, 0])
    batch = to_batch(rows)
    d_anchor, d_next = state_distances(batch)
    assert set(d_anchor.tolist()) | set(d_next.tolist()) == {1}
    adv = graphgpo_advantages(batch, episode_advantage_w=0.0, invalid_penalty=0)
    np.testing.assert_array_equal(adv, np.zeros(4))


def test_groups_are_separate_graphs() -> None:
    # The same anchor strings in another task must not leak distances across tasks.
    rows = trajectory("u1", "a", ["s", "t"], [0, 1]) + trajectory("u2", "a", ["s", "t", "q"], [0, 0, 0])
    d_anchor, _ = state_distances(to_batch(rows))
    assert d_anchor[:2].tolist() == [2, 1]
    assert d_anchor[2:].tolist() == [1, 1, 1]


def test_explicit_next_anchor_joins_the_graph() -> None:
    # A failed trajectory whose final observation is a state on the winning path.
    rows = trajectory("u", "a", ["s", "t"], [0, 1]) + trajectory("u", "b", ["q"], [0])
    nxt = ["t", "ignored-success", "t"]
    d_anchor, d_next = state_distances(to_batch(rows), next_anchor=nxt)
    assert d_next.tolist() == [1, 0, 1]
    assert d_anchor.tolist() == [2, 1, 2]


def test_without_next_anchor_earlier_steps_of_a_failed_trajectory_can_differ() -> None:
    # What docs/training.md states about the trainer's default. t2 wins by s0 -> s4 -> s5 -> s3 ->
    # success (d(s0) = 4, the group's farthest); t1 fails after s0 -> s1 -> s2, and the env's
    # final observation is s3. With it (the authors' graph) s2 -> s3 gives d(s2) = 2, d(s1) = 3,
    # so t1's FIRST step (s0 -> s1) returns 10 * 0.5^3. Without it, s2 leads to t1's own terminal
    # node, s1 and s2 cannot reach success and get d = 4 + 1: that step returns 10 * 0.5^5.
    rows = trajectory("u", "t1", ["s0", "s1", "s2"], [0, 0, 0]) + trajectory(
        "u", "t2", ["s0", "s4", "s5", "s3"], [0, 0, 0, 1]
    )
    batch = to_batch(rows)
    real = graph_step_returns(batch, gamma=0.5, next_anchor=["s1", "s2", "s3", "s4", "s5", "s3", "x"])
    default = graph_step_returns(batch, gamma=0.5)
    np.testing.assert_allclose(real[:3], [1.25, 2.5, 5.0])
    np.testing.assert_allclose(default[:3], [0.3125, 0.3125, 0.3125])
    np.testing.assert_allclose(default[3:], real[3:])  # the winner's steps agree


def test_default_combination_is_step_plus_episode_in_mean_std_norm() -> None:
    batch = to_batch(_example())
    step = graphgpo_advantages(batch, episode_advantage_w=0.0)
    episode = gigpo_advantages(batch, mode="mean_std_norm", step_advantage_w=0.0)
    both = graphgpo_advantages(batch, step_advantage_w=0.5, episode_advantage_w=2.0)
    np.testing.assert_allclose(both, 0.5 * step + 2.0 * episode, rtol=1e-12, atol=1e-12)


def test_result_is_independent_of_row_order() -> None:
    rng = np.random.default_rng(3)
    rows = random_rows(rng)
    batch = to_batch(rows)
    perm = rng.permutation(len(rows))
    shuffled = to_batch([rows[i] for i in perm])
    a = graphgpo_advantages(batch, normalize_distance=True)
    b = graphgpo_advantages(shuffled, normalize_distance=True)
    np.testing.assert_allclose(b, a[perm], rtol=1e-12, atol=1e-12)


def test_transition_graph_lists_nodes_edges_and_distances() -> None:
    graphs = transition_graphs(to_batch(_example()))
    g = graphs["u"]
    by_label = {n.label: n for n in g.nodes}
    assert by_label["s0"].distance == 3 and by_label["s2"].distance == 1
    assert g.nodes[g.success].distance == 0
    edges = {(g.nodes[e.source].label, g.nodes[e.target].label): e.count for e in g.edges}
    assert edges[("s0", "s1")] == 1 and edges[("s0", "s0")] == 1 and ("s2", "success") in edges


def test_compute_advantages_and_config_know_graphgpo() -> None:
    batch = to_batch(_example())
    np.testing.assert_allclose(
        compute_advantages(batch, "graphgpo", normalize_distance=True),
        graphgpo_advantages(batch, normalize_distance=True, gamma=0.1),
        rtol=1e-12,
    )
    with pytest.raises(ConfigurationError):
        compute_advantages(batch, "graphgpo", gamma=0.0)
    with pytest.raises(ConfigurationError):
        compute_advantages(batch, "graphgpo", episode_advantage_w=math.nan)
    with pytest.raises(ConfigurationError):
        state_distances(batch, next_anchor=["x"])


def _bfs_reference(rows: list[Row]) -> dict[tuple[Any, int], tuple[int, int]]:
    """Distances by a plain dict-and-deque search per group, written from the definition."""
    from collections import deque

    out: dict[tuple[Any, int], tuple[int, int]] = {}
    for uid in {r.uid for r in rows}:
        trajs: dict[Any, list[Row]] = {}
        for r in rows:
            if r.uid == uid:
                trajs.setdefault(r.traj, []).append(r)
        edges: list[tuple[Any, Any]] = []
        nxt_of: dict[tuple[Any, int], Any] = {}
        for name, steps in trajs.items():
            steps.sort(key=lambda r: r.step)
            won = sum(r.reward for r in steps) > 0
            for i, r in enumerate(steps):
                if i + 1 < len(steps):
                    nxt: Any = ("s", steps[i + 1].anchor)
                else:
                    nxt = ("success",) if won else ("end", name)
                edges.append((("s", r.anchor), nxt))
                nxt_of[(name, r.step)] = nxt
        nodes = {n for e in edges for n in e} | {("success",)}
        dist = {("success",): 0}
        queue = deque([("success",)])
        while queue:
            v = queue.popleft()
            for a, b in edges:
                if b == v and a not in dist:
                    dist[a] = dist[v] + 1
                    queue.append(a)
        far = max(dist.values())
        full = {n: dist.get(n, far + 1) for n in nodes}
        for name, steps in trajs.items():
            for r in steps:
                out[(uid, name, r.step)] = (full[("s", r.anchor)], full[nxt_of[(name, r.step)]])  # type: ignore[index]
    return out


@FEW
@given(rows=row_lists())
def test_distances_equal_a_plain_breadth_first_search(rows: list[Row]) -> None:
    d_anchor, d_next = state_distances(to_batch(rows))
    expected = _bfs_reference(rows)
    got = {(r.uid, r.traj, r.step): (int(a), int(n)) for r, a, n in zip(rows, d_anchor, d_next, strict=True)}
    assert got == expected


@FEW
@given(rows=row_lists())
def test_returns_are_bounded_and_steps_into_success_get_the_most(rows: list[Row]) -> None:
    batch = to_batch(rows)
    d_anchor, d_next = state_distances(batch)
    # An edge shortens the distance by at most one (unreachable states included: largest + 1).
    assert np.all(d_anchor <= d_next + 1)
    absolute = graph_step_returns(batch, gamma=0.5)
    assert np.all((absolute > 0) & (absolute <= 10.0))
    assert np.all(absolute[d_next == 0] == 10.0)
    progress = graph_step_returns(batch, gamma=0.5, normalize_distance=True)
    # A step that moves one closer earns 10, whatever its distance (the progress variant).
    np.testing.assert_array_equal(progress[d_next == d_anchor - 1], 10.0)


def test_a_batch_next_anchor_column_is_used_and_none_means_unknown() -> None:
    # The trainer's batches carry the recorded next states (StepBatch.from_groups): the same
    # graph as the explicit argument. None entries take the default rule: the next step's
    # anchor, after a failed trajectory's last step a terminal node of its own.
    rows = trajectory("u", "t1", ["s0", "s1", "s2"], [0, 0, 0]) + trajectory(
        "u", "t2", ["s0", "s4", "s5", "s3"], [0, 0, 0, 1]
    )
    full = ["s1", "s2", "s3", "s4", "s5", "s3", "x"]
    finals_only = [None, None, "s3", None, None, None, None]
    explicit = graphgpo_advantages(to_batch(rows), gamma=0.5, next_anchor=full)
    column = dataclasses.replace(to_batch(rows), next_anchor=np.array(finals_only, dtype=object))
    np.testing.assert_allclose(graphgpo_advantages(column, gamma=0.5), explicit, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(
        state_distances(column)[1], state_distances(to_batch(rows), next_anchor=full)[1]
    )
    assert all(n.kind != "end" for n in transition_graphs(column)["u"].nodes)
    # All unknown: the default graph, a terminal node after t1.
    unknown = dataclasses.replace(to_batch(rows), next_anchor=np.array([None] * 7, dtype=object))
    np.testing.assert_allclose(
        graphgpo_advantages(unknown, gamma=0.5),
        graphgpo_advantages(to_batch(rows), gamma=0.5),
        rtol=0,
        atol=0,
    )
    # The argument wins over the column.
    wrong = dataclasses.replace(to_batch(rows), next_anchor=np.array(["zz"] * 7, dtype=object))
    np.testing.assert_allclose(graphgpo_advantages(wrong, gamma=0.5, next_anchor=full), explicit, atol=0)

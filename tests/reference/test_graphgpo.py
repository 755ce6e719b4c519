"""envhub's GraphGPO against the authors' own code (``graphgpo.json.gz``, README.md).

120 seeded random batches of random-walk rollout groups were run through the authors'
``recipe/GraphGPO/core_graph.py`` (``ComplexGraph.from_data``, ``Calculate_all_shortest_path``,
``compute_graph_path_returns``, ``compute_graphgpo_outcome_advantage``; float32), fed as their
trainer feeds them. envhub computes in float64 on the rows in a shuffled order and must give
the same distances exactly, the same graph returns within float32 rounding, and the same
advantages within rtol 1e-4 / atol 1e-5 on every row (the reference's float32
``(x - mean) / (std + 1e-6)`` is the only slack; seen: 1.3e-5 absolute, 5e-6 relative).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import numpy as np
import pytest

from envhub.algos import graph_step_returns, graphgpo_advantages, state_distances
from envhub.core.records import StepBatch

from .fixtures import load_json

BATCHES: list[dict[str, Any]] = load_json("graphgpo.json.gz")["batches"]
# Float32 precision, not GiGPO's looser bound: the worst row of the 120 batches is off by
# 1.3e-5 at |A| = 2.5 (rtol 1e-3 would let a change of 0.1% in any advantage through).
RTOL, ATOL = 1e-4, 1e-5


def _batch(rows: list[dict[str, Any]], order: np.ndarray) -> StepBatch:
    position: Counter[str] = Counter()
    steps = []
    for r in rows:
        steps.append(position[r["traj"]])
        position[r["traj"]] += 1
    pick = [int(i) for i in order]
    return StepBatch.from_columns(
        uid=[rows[i]["uid"] for i in pick],
        traj_id=[rows[i]["traj"] for i in pick],
        step_idx=[steps[i] for i in pick],
        anchor=[rows[i]["anchor"] for i in pick],
        reward=[rows[i]["reward"] for i in pick],
        is_action_valid=[rows[i]["valid"] for i in pick],
    )


def _case(index: int, with_next: bool) -> tuple[dict[str, Any], np.ndarray, StepBatch, list[str] | None]:
    b = BATCHES[index]
    order = np.random.default_rng(index).permutation(len(b["rows"]))
    nxt = [b["rows"][int(i)]["next"] for i in order] if with_next else None
    return b, order, _batch(b["rows"], order), nxt


def test_fixture_covers_both_variants_and_unreachable_states() -> None:
    assert len(BATCHES) == 120 and sum(len(b["rows"]) for b in BATCHES) > 3000
    assert {b["normalize_distance"] for b in BATCHES} == {True, False}
    assert {b["mode"] for b in BATCHES} == {"mean_norm", "mean_std_norm"}
    assert any(b["episode_w"] == 0.0 for b in BATCHES) and any(b["fresh_ends"] for b in BATCHES)
    # Some groups have no success at all, some states cannot reach it in groups that do.
    dists = [d for b in BATCHES for d in b["d_anchor"]]
    assert max(dists) >= 5 and min(dists) == 1


@pytest.mark.parametrize("index", range(len(BATCHES)))
def test_distances_returns_and_advantages_match_the_authors(index: int) -> None:
    b, order, batch, nxt = _case(index, with_next=True)
    d_anchor, d_next = state_distances(batch, next_anchor=nxt)
    np.testing.assert_array_equal(d_anchor, np.asarray(b["d_anchor"])[order])
    np.testing.assert_array_equal(d_next, np.asarray(b["d_next"])[order])
    returns = graph_step_returns(
        batch, gamma=b["gamma"], normalize_distance=b["normalize_distance"], next_anchor=nxt
    )
    np.testing.assert_allclose(returns, np.asarray(b["graph_returns"])[order], rtol=1e-6)
    got = graphgpo_advantages(
        batch,
        mode=b["mode"],
        gamma=b["gamma"],
        step_advantage_w=b["step_w"],
        episode_advantage_w=b["episode_w"],
        normalize_distance=b["normalize_distance"],
        invalid_penalty=b["coef"],
        next_anchor=nxt,
    )
    np.testing.assert_allclose(got, np.asarray(b["advantages"])[order], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("index", [i for i, b in enumerate(BATCHES) if b["fresh_ends"]])
def test_without_next_anchor_matches_when_failed_episodes_end_in_fresh_states(index: int) -> None:
    b, order, batch, _ = _case(index, with_next=False)
    got = graphgpo_advantages(
        batch,
        mode=b["mode"],
        gamma=b["gamma"],
        step_advantage_w=b["step_w"],
        episode_advantage_w=b["episode_w"],
        normalize_distance=b["normalize_distance"],
        invalid_penalty=b["coef"],
    )
    np.testing.assert_allclose(got, np.asarray(b["advantages"])[order], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("index", range(len(BATCHES)))
def test_the_recorded_final_states_alone_reproduce_the_authors(index: int) -> None:
    """What the trainer has: each trajectory's final state (``Trajectory.final_anchor``), no
    other next states. ``StepBatch.from_groups`` puts it on the last row and the next step's
    anchor on the others; here the other rows are left unknown (None), which must give the
    same graph. The authors' rollout takes every row's next state from the env
    (``next_obs['anchor']`` in ``recipe/GraphGPO/rollout_loop.py``)."""
    b, order, batch, nxt = _case(index, with_next=True)
    assert nxt is not None
    last = {b["rows"][int(i)]["traj"]: k for k, i in enumerate(order)}
    steps = batch.step_idx
    for k, i in enumerate(order):  # the row with the largest step of its trajectory
        t = b["rows"][int(i)]["traj"]
        if steps[k] > steps[last[t]]:
            last[t] = k
    finals = np.full(len(order), None, dtype=object)
    for k in last.values():
        finals[k] = nxt[k]
    got = graphgpo_advantages(
        dataclasses.replace(batch, next_anchor=finals),
        mode=b["mode"],
        gamma=b["gamma"],
        step_advantage_w=b["step_w"],
        episode_advantage_w=b["episode_w"],
        normalize_distance=b["normalize_distance"],
        invalid_penalty=b["coef"],
    )
    np.testing.assert_allclose(got, np.asarray(b["advantages"])[order], rtol=RTOL, atol=ATOL)

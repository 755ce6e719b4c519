"""Invariants of the estimators, checked with hypothesis on small random batches.

Group statistics sum members in ascending value order, so these hold bit for bit.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envhub.algos import compute_advantages, hgpo_advantages, step_advantages
from envhub.algos.grouping import Mode
from envhub.core.records import StepBatch

from .builders import Row, relabel, row_lists, to_batch

EPS = 1e-6
FEW = settings(max_examples=30, deadline=None)

configs = st.one_of(
    st.fixed_dictionaries(
        {
            "algo": st.just("grpo"),
            "mode": st.sampled_from(["mean_norm", "mean_std_norm"]),
            "per_trajectory": st.booleans(),
            "group_by_agent": st.booleans(),
        }
    ),
    st.fixed_dictionaries(
        {
            "algo": st.just("gigpo"),
            "mode": st.sampled_from(["mean_norm", "mean_std_norm"]),
            "gamma": st.sampled_from([0.95, 1.0, 0.5]),
            "per_trajectory": st.booleans(),
            "group_by_agent": st.booleans(),
        }
    ),
    st.fixed_dictionaries(
        {
            "algo": st.just("hgpo"),
            "mode": st.sampled_from(["mean_norm", "mean_std_norm"]),
            "history_length": st.integers(0, 4),
            "base_group": st.booleans(),
            "length_weight_alpha": st.sampled_from([1.0, 0.0, 0.5]),
            "group_by_agent": st.booleans(),
        }
    ),
)


def _advantages(rows: list[Row], config: dict) -> np.ndarray:
    return compute_advantages(to_batch(rows, with_agents=True), **config)


@FEW
@given(rows=row_lists(), config=configs, data=st.data())
def test_permuting_rows_permutes_the_advantages(rows: list[Row], config: dict, data: st.DataObject) -> None:
    perm = data.draw(st.permutations(range(len(rows))))
    base = _advantages(rows, config)
    permuted = _advantages([rows[i] for i in perm], config)
    np.testing.assert_array_equal(permuted, base[list(perm)])


@FEW
@given(rows=row_lists(), config=configs)
def test_renaming_uids_changes_nothing(rows: list[Row], config: dict) -> None:
    np.testing.assert_array_equal(_advantages(relabel(rows, "renamed/"), config), _advantages(rows, config))


@FEW
@given(first=row_lists(max_uids=1), second=row_lists(max_uids=2), config=configs)
def test_adding_other_uids_leaves_a_uids_advantages_alone(
    first: list[Row], second: list[Row], config: dict
) -> None:
    # The second batch reuses trajectory ids and anchors; only its uids differ.
    other = relabel(second, "other-")
    alone = _advantages(first, config)
    together = _advantages(first + other, config)
    np.testing.assert_array_equal(together[: len(first)], alone)


@FEW
@given(
    rows=row_lists(), mode=st.sampled_from(["mean_norm", "mean_std_norm"]), gamma=st.sampled_from([0.95, 1.0])
)
def test_hgpo_with_k0_and_no_base_group_is_population_std_step_level(
    rows: list[Row], mode: Mode, gamma: float
) -> None:
    batch = to_batch(rows)
    hgpo = hgpo_advantages(batch, mode=mode, gamma=gamma, history_length=0, base_group=False)
    level0 = step_advantages(batch, mode=mode, gamma=gamma, unbiased=False)
    # One item of weight 2 when it is non-zero: A = 2a / (2 + eps); groups of one give 0 in both.
    np.testing.assert_allclose(hgpo, np.where(level0 != 0, 2 * level0 / (2 + EPS), 0.0), rtol=1e-14, atol=0)
    np.testing.assert_allclose(hgpo, level0, rtol=1e-6, atol=1e-12)  # "up to the eps"


def test_on_one_step_episodes_hgpo_is_grpo_and_gigpo_is_grpo_scaled_by_one_plus_its_step_weight() -> None:
    # The one-push learning recipe's episodes have one step, and a group shares its room: every
    # step group is the episode group. bench/train_step.py --parts algos compares the three
    # there; docs/benchmarks.md reads its numbers with this in mind. Under mean_norm, the
    # recipe's mode (under mean_std_norm each estimates the std its own way: HGPO's population
    # std, GRPO's unbiased one).
    mode = "mean_norm"
    rng = np.random.default_rng(0)
    n = 16
    uid = np.array([f"u{i // 8}" for i in range(n)], dtype=object)
    batch = StepBatch(
        uid=uid,
        traj_id=np.array([f"t{i}" for i in range(n)], dtype=object),
        step_idx=np.zeros(n, dtype=np.int64),
        anchor=np.array([f"room-{u}" for u in uid], dtype=object),
        reward=rng.choice([-0.1, 1.0], size=n).astype(np.float64),
        is_action_valid=rng.random(n) > 0.2,
    )
    grpo = compute_advantages(batch, "grpo", mode=mode, invalid_penalty=0.0)
    np.testing.assert_allclose(
        compute_advantages(batch, "hgpo", mode=mode, invalid_penalty=0.0), grpo, rtol=1e-5, atol=1e-9
    )  # (HGPO's level weights are normalised with an epsilon: equal to 5e-7 relative)
    gigpo = compute_advantages(batch, "gigpo", mode=mode, invalid_penalty=0.0, step_advantage_w=1.0)
    np.testing.assert_allclose(gigpo, 2.0 * grpo, rtol=1e-5, atol=1e-9)

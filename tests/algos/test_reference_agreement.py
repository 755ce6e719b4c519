"""The vectorised estimators agree with the pure-Python reference on random batches.

Random batches have anchor collisions across and inside trajectories, invalid rows, varied
lengths, gaps in step_idx, two agents, reused trajectory ids across uids and shuffled rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from envhub.algos import gigpo_advantages, grpo_advantages, hgpo_advantages, step_advantages

from . import reference_impl as ref
from .builders import random_rows, to_batch

SEEDS = range(25)
EPS = 1e-6
RTOL = ATOL = 1e-12


def _config(seed: int) -> dict:
    rng = np.random.default_rng(10_000 + seed)
    return {
        "mode": ("mean_norm", "mean_std_norm")[seed % 2],
        "gamma": float(rng.choice([0.95, 1.0, 0.5, 0.0])),
        "coef": float(rng.choice([0.1, 0.0, 0.01])),
        "by_agent": bool(seed % 3 == 0),
    }


@pytest.mark.parametrize("seed", SEEDS)
def test_grpo_matches_reference_on_random_batches(seed: int) -> None:
    rows = random_rows(np.random.default_rng(seed))
    c = _config(seed)
    for per_trajectory in (False, True):
        expected = ref.episode_adv(
            rows,
            mode=c["mode"],
            coef=c["coef"],
            per_trajectory=per_trajectory,
            by_agent=c["by_agent"],
            eps=EPS,
        )
        got = grpo_advantages(
            to_batch(rows, with_agents=True),
            mode=c["mode"],
            per_trajectory=per_trajectory,
            invalid_penalty=c["coef"],
            group_by_agent=c["by_agent"],
        )
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_gigpo_matches_reference_on_random_batches(seed: int) -> None:
    rows = random_rows(np.random.default_rng(seed))
    c = _config(seed)
    expected = ref.gigpo(
        rows, mode=c["mode"], gamma=c["gamma"], coef=c["coef"], w=0.7, by_agent=c["by_agent"], eps=EPS
    )
    got = gigpo_advantages(
        to_batch(rows, with_agents=True),
        mode=c["mode"],
        gamma=c["gamma"],
        invalid_penalty=c["coef"],
        step_advantage_w=0.7,
        group_by_agent=c["by_agent"],
    )
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_hgpo_matches_reference_on_random_batches(seed: int) -> None:
    rows = random_rows(np.random.default_rng(seed), anchors=("a", "b", "c"))
    c = _config(seed)
    k = seed % 5
    alpha = (1.0, 0.0, 0.5, 2.0)[seed % 4]
    base = seed % 2 == 1
    expected = ref.hgpo(
        rows,
        mode=c["mode"],
        k=k,
        alpha=alpha,
        base=base,
        gamma=c["gamma"],
        coef=c["coef"],
        by_agent=c["by_agent"],
        eps=EPS,
    )
    got = hgpo_advantages(
        to_batch(rows, with_agents=True),
        mode=c["mode"],
        history_length=k,
        length_weight_alpha=alpha,
        base_group=base,
        gamma=c["gamma"],
        invalid_penalty=c["coef"],
        group_by_agent=c["by_agent"],
    )
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", range(10))
def test_similarity_grouping_matches_reference_on_random_text_anchors(seed: int) -> None:
    texts = (
        "Question: who wrote Hamlet?",
        "Question: who wrote Hamlet ?",
        "Question: who wrote Macbeth?",
        "<information>Shakespeare wrote Hamlet.</information>",
        "<information>Shakespeare wrote Hamlet</information>",
        "<information>Marlowe wrote Faustus.</information>",
    )
    rows = random_rows(np.random.default_rng(seed), anchors=texts)
    c = _config(seed)
    for thresh in (0.9, 0.95, 0.5):
        expected = ref.step_adv(
            rows,
            mode=c["mode"],
            gamma=c["gamma"],
            coef=c["coef"],
            by_agent=c["by_agent"],
            eps=EPS,
            similarity=thresh,
        )
        got = step_advantages(
            to_batch(rows, with_agents=True),
            mode=c["mode"],
            gamma=c["gamma"],
            invalid_penalty=c["coef"],
            group_by_agent=c["by_agent"],
            similarity_thresh=thresh,
        )
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_reference_comparison_on_a_larger_batch() -> None:
    rng = np.random.default_rng(99)
    rows = random_rows(rng, n_uids=8, max_trajs=8, max_len=20, anchors=tuple("abcdef"))
    expected = ref.hgpo(
        rows, mode="mean_std_norm", k=4, alpha=1.0, base=True, gamma=0.95, coef=0.1, by_agent=False, eps=EPS
    )
    got = hgpo_advantages(to_batch(rows), history_length=4, base_group=True)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)

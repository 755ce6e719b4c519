"""TimerPO's formulas (``envhub.algos.timerpo``), each against a case computed by hand.

No runnable original with a licence exists (AnomSeer's repository has none), so there is no
fixture from the authors' code: every expected value below is derived in the comment above it,
in closed form or by hand, never by calling the implementation. Then properties that must hold
for any input: the projection is orthogonal to ``A_main`` in every group, a uniform cost gives
``W`` equal to that cost, and the converged plan has the requested marginals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from envhub.algos.timerpo import (
    clip_similarity,
    cosine_cost,
    grounded_advantages,
    group_centered,
    orthogonal_residual,
    ot_distance,
    semantic_score,
    sinkhorn_plan,
    token_marginal,
)
from envhub.core.errors import ConfigurationError

# -- marginals and cost ----------------------------------------------------------------------------


def test_marginal_is_the_softmax_of_the_token_norms() -> None:
    # norms 1 and 1 + ln 3: softmax = e^1 : e^(1 + ln 3) = 1 : 3, i.e. [1/4, 3/4].
    hidden = [[1.0, 0.0], [0.0, 1.0 + math.log(3.0)]]
    np.testing.assert_allclose(token_marginal(hidden), [0.25, 0.75], rtol=1e-15)


def test_cost_is_one_minus_cosine_floored_at_zero() -> None:
    # (1,0) against (1,0): cos 1 -> 0; (0,1): cos 0 -> 1; (-1,0): cos -1 -> 2; (1,1): cos 1/sqrt2
    # -> 1 - 1/sqrt2; (3,0) (scaled, same direction): 0, and never below 0 by rounding.
    cost = cosine_cost([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [1.0, 1.0], [3.0, 0.0]])
    np.testing.assert_allclose(cost, [[0.0, 1.0, 2.0, 1.0 - 1.0 / math.sqrt(2.0), 0.0]], atol=1e-15)
    assert (cost >= 0).all()


# -- Sinkhorn plan and distance ----------------------------------------------------------------------


def test_one_sinkhorn_iteration_by_hand() -> None:
    # r = [1/4, 3/4], c = [1/2, 1/2], C = [[0, 1], [1, 0]], eps = 1/ln 2 so K = [[1, 1/2], [1/2, 1]].
    # v0 = [1, 1]: K v0 = [3/2, 3/2], u = r / K v0 = [1/6, 1/2];
    # K^T u = [1/6 + 1/4, 1/12 + 1/2] = [5/12, 7/12], v = c / K^T u = [6/5, 6/7].
    # T = diag(u) K diag(v) = [[1/6 * 6/5, 1/6 * 1/2 * 6/7], [1/2 * 1/2 * 6/5, 1/2 * 6/7]]
    #   = [[1/5, 1/14], [3/10, 3/7]]   (columns sum to 1/2 exactly after the v-update)
    # W = 1/14 + 3/10 = 13/35.
    r, c, cost = [0.25, 0.75], [0.5, 0.5], np.array([[0.0, 1.0], [1.0, 0.0]])
    plan = sinkhorn_plan(r, c, cost, eps=1.0 / math.log(2.0), n_iter=1)
    np.testing.assert_allclose(plan, [[1 / 5, 1 / 14], [3 / 10, 3 / 7]], rtol=1e-14)
    assert float((plan * cost).sum()) == pytest.approx(13 / 35, rel=1e-14)


def test_converged_plan_is_the_closed_form_entropic_solution() -> None:
    # Same problem. The entropic optimum is T = [[a, 1/4 - a], [1/2 - a, 1/4 + a]] (marginals r, c)
    # with T11 T22 / (T12 T21) = K11 K22 / (K12 K21) = 4:
    #   a (1/4 + a) = 4 (1/4 - a)(1/2 - a)  ->  12 a^2 - 13 a + 2 = 0  ->  a = (13 - sqrt 73) / 24.
    # W = T12 + T21 = 3/4 - 2a = (sqrt 73 - 4) / 12 = 0.37866...; 50 iterations converge (K's
    # contraction is strong at k = 1/2).
    a = (13 - math.sqrt(73)) / 24
    r, c, cost = [0.25, 0.75], [0.5, 0.5], np.array([[0.0, 1.0], [1.0, 0.0]])
    plan = sinkhorn_plan(r, c, cost, eps=1.0 / math.log(2.0), n_iter=50)
    np.testing.assert_allclose(plan, [[a, 0.25 - a], [0.5 - a, 0.25 + a]], atol=1e-12)
    assert float((plan * cost).sum()) == pytest.approx((math.sqrt(73) - 4) / 12, abs=1e-12)


def test_symmetric_two_by_two_distance_is_k_over_one_plus_k() -> None:
    # r = c = [1/2, 1/2], C = [[0, 1], [1, 0]], K = [[1, k], [k, 1]], k = exp(-1/eps).
    # v0 = 1: u = (1/2) / (1 + k); K^T u = 1/2, so v = 1 again: a fixed point after one iteration,
    # T = K / (2 (1 + k)) and W = 2 k / (2 (1 + k)) = k / (1 + k).
    # eps = 0.5: k = e^-2, W = 1 / (1 + e^2); eps = 0.08 (the authors'): k = e^-12.5.
    cost = np.array([[0.0, 1.0], [1.0, 0.0]])
    for eps in (0.5, 0.08):
        k = math.exp(-1.0 / eps)
        plan = sinkhorn_plan([0.5, 0.5], [0.5, 0.5], cost, eps=eps, n_iter=50)
        np.testing.assert_allclose(
            plan, [[1 / (2 + 2 * k), k / (2 + 2 * k)], [k / (2 + 2 * k), 1 / (2 + 2 * k)]]
        )
        assert float((plan * cost).sum()) == pytest.approx(k / (1 + k), rel=1e-12)


def test_one_response_token_sends_its_mass_by_the_expert_marginal() -> None:
    # One response token: T has one row, and after the v-update its columns are c, so T = c.
    # Hidden states: response (1, 0); expert (1, 0) with norm 1 and (0, 1 + ln 3) with norm
    # 1 + ln 3, so c = [1/4, 3/4] (see the marginal test) and C = [0, 1]: W = 3/4.
    w = ot_distance([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0 + math.log(3.0)]], eps=0.08, n_iter=50)
    assert w == pytest.approx(0.75, rel=1e-14)


def test_identical_single_tokens_are_at_distance_zero() -> None:
    # C = [[0]]: any plan costs 0, so W = 0 and the score is exp(0) = 1.
    assert ot_distance([[0.3, -2.0, 1.0]], [[0.3, -2.0, 1.0]]) == 0.0
    assert semantic_score(0.0) == 1.0


def test_uniform_cost_gives_that_cost_whatever_the_marginals() -> None:
    # C = c0 everywhere: K = e^(-c0/eps) 1 1^T, the first iteration gives T = r c^T (rank one with
    # the exact marginals), so W = c0 sum(r c^T) = c0.
    rng = np.random.default_rng(0)
    for n, m, c0 in ((3, 5, 0.7), (7, 2, 1.3), (1, 1, 2.0)):
        r = rng.dirichlet(np.ones(n))
        c = rng.dirichlet(np.ones(m))
        plan = sinkhorn_plan(r, c, np.full((n, m), c0), eps=0.08, n_iter=50)
        np.testing.assert_allclose(plan, np.outer(r, c), rtol=1e-12)
        assert float((plan * c0).sum()) == pytest.approx(c0, rel=1e-12)


def test_converged_plan_has_both_marginals() -> None:
    rng = np.random.default_rng(1)
    response, expert = rng.normal(size=(6, 8)), rng.normal(size=(9, 8))
    r, c = token_marginal(response), token_marginal(expert)
    plan = sinkhorn_plan(r, c, cosine_cost(response, expert), eps=0.08, n_iter=50)
    np.testing.assert_allclose(plan.sum(axis=0), c, rtol=1e-12)
    # Rows converge towards r (at eps = 0.08, 50 iterations leave about 1e-6 here).
    np.testing.assert_allclose(plan.sum(axis=1), r, atol=1e-5)


def test_a_small_eps_gives_a_finite_plan_not_nan() -> None:
    # grounded.ot_eps accepts any eps > 0. At eps = 1e-3 a cost of 1 makes K = e^-1000, which is 0
    # in float64, so the plain iteration divides by K v = 0 (inf, then NaN) and the NaN score
    # would poison its whole group's advantages. The answer is still defined:
    # one token against one token: T = [[1]] whatever K is, so W = C = 1 (orthogonal states);
    # the symmetric 2x2 of the test above: W = k / (1 + k) with k = e^-1000, i.e. 0.
    assert ot_distance([[1.0, 0.0]], [[0.0, 1.0]], eps=1e-3) == pytest.approx(1.0, rel=1e-12)
    cost = np.array([[1.0, 2.0], [2.0, 1.0]])
    plan = sinkhorn_plan([0.5, 0.5], [0.5, 0.5], cost, eps=1e-3)
    np.testing.assert_allclose(plan, [[0.5, 0.0], [0.0, 0.5]], atol=1e-15)
    # Random states at eps = 1e-3 (K underflows almost everywhere): a plan with the marginals.
    rng = np.random.default_rng(3)
    response, expert = rng.normal(size=(5, 16)), rng.normal(size=(7, 16))
    r, c = token_marginal(response), token_marginal(expert)
    plan = sinkhorn_plan(r, c, cosine_cost(response, expert), eps=1e-3, n_iter=50)
    assert np.isfinite(plan).all()
    np.testing.assert_allclose(plan.sum(axis=0), c, rtol=1e-12)
    assert 0.0 <= ot_distance(response, expert, eps=1e-3) <= 2.0


def test_the_log_domain_iterations_give_the_plain_plan() -> None:
    # The fallback runs the same iterations on logarithms: where the plain one is finite, the
    # two plans agree to rounding (here at the authors' eps and at one 8x smaller, where the
    # plain one still runs; entries far below the plan's mass are compared absolutely).
    from envhub.algos.timerpo import _sinkhorn_log, _sinkhorn_plain

    rng = np.random.default_rng(4)
    response, expert = rng.normal(size=(6, 8)), rng.normal(size=(9, 8))
    r, c = token_marginal(response), token_marginal(expert)
    cost = cosine_cost(response, expert)
    for eps in (0.08, 0.01):
        plain = _sinkhorn_plain(r, c, cost / eps, 50)
        assert np.isfinite(plain).all()
        np.testing.assert_allclose(_sinkhorn_log(r, c, cost / eps, 50), plain, rtol=1e-9, atol=1e-15)


def test_bad_sinkhorn_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="eps"):
        sinkhorn_plan([1.0], [1.0], [[0.0]], eps=0.0)
    with pytest.raises(ConfigurationError, match="cost must be"):
        sinkhorn_plan([0.5, 0.5], [1.0], [[0.0, 1.0]])
    with pytest.raises(ConfigurationError, match="at least one token"):
        ot_distance(np.zeros((0, 4)), [[1.0, 0.0, 0.0, 0.0]])


# -- score -------------------------------------------------------------------------------------------


def test_score_is_exp_minus_w_over_tau_clipped() -> None:
    # W = 0.5, tau = 0.5: e^-1; W = 0: 1; W = 1, tau = 0.25: e^-4; a negative W (impossible for a
    # plan, but clipped all the same): 1.
    np.testing.assert_allclose(semantic_score([0.5, 0.0, -0.2], tau=0.5), [math.exp(-1.0), 1.0, 1.0])
    assert semantic_score(1.0, tau=0.25) == pytest.approx(math.exp(-4.0))


def test_clip_similarity_is_the_cosine_of_the_means_over_a_temperature() -> None:
    # Response tokens (1,0) and (1,2) average to (1,1); expert (2,0): cos = 1/sqrt 2.
    # Temperature 1: 0.7071...; 0.5: 1.414 clamped to 1; an opposite expert (-2,0): cos < 0 -> 0.
    response = [[1.0, 0.0], [1.0, 2.0]]
    assert clip_similarity(response, [[2.0, 0.0]]) == pytest.approx(1 / math.sqrt(2.0))
    assert clip_similarity(response, [[2.0, 0.0]], temperature=0.5) == 1.0
    assert clip_similarity(response, [[-2.0, 0.0]]) == 0.0


# -- group centring, projection and mix --------------------------------------------------------------


def test_semantic_advantage_is_the_score_minus_its_group_mean() -> None:
    # Group a: scores 0.2, 0.4 (mean 0.3) -> -0.1, 0.1; group b: one sample -> 0.
    np.testing.assert_allclose(group_centered([0.2, 0.9, 0.4], ["a", "b", "a"]), [-0.1, 0.0, 0.1], atol=1e-15)


def test_projection_and_mix_by_hand() -> None:
    # R = [1, 0, 0]: A_main = R - mean R = [2/3, -1/3, -1/3] (the fork's form); sum A_main^2 = 2/3.
    # s = [0.9, 0.6, 0.0]: mean 0.5, A_sem = [0.4, 0.1, -0.5].
    # sum A_sem A_main = (0.8 - 0.1 + 0.5) / 3 = 0.4, beta = 0.4 / (2/3 + 1e-8) ~ 0.6,
    # A_perp = A_sem - 0.6 A_main = [0, 0.3, -0.3];
    # A = A_main + 0.3 A_perp = [2/3, -1/3 + 0.09, -1/3 - 0.09].
    beta = 0.4 / (2 / 3 + 1e-8)
    a_main = np.array([2 / 3, -1 / 3, -1 / 3])
    a_sem = np.array([0.4, 0.1, -0.5])
    perp, b = orthogonal_residual(a_sem, a_main, [7, 7, 7])
    np.testing.assert_allclose(b, [beta] * 3, rtol=1e-15)
    np.testing.assert_allclose(perp, a_sem - beta * a_main, atol=1e-15)
    np.testing.assert_allclose(perp, [0.0, 0.3, -0.3], atol=1e-8)
    out = grounded_advantages(a_main, [0.9, 0.6, 0.0], [7, 7, 7], adv_mix=0.3, orth=True)
    np.testing.assert_allclose(out.semantic, a_sem, atol=1e-15)
    np.testing.assert_allclose(out.advantages, [2 / 3, -1 / 3 + 0.09, -1 / 3 - 0.09], atol=1e-8)


def test_a_semantic_advantage_collinear_with_the_main_one_is_removed() -> None:
    # s = [0.9, 0.3, 0.3]: A_sem = [0.4, -0.2, -0.2] = 0.6 A_main, so A_perp = 0 (up to the 1e-8
    # guard) and the mix leaves A_main unchanged; without orth it adds 0.3 * A_sem.
    a_main = [2 / 3, -1 / 3, -1 / 3]
    projected = grounded_advantages(a_main, [0.9, 0.3, 0.3], [0, 0, 0], adv_mix=0.3, orth=True)
    np.testing.assert_allclose(projected.residual, 0.0, atol=1e-8)
    np.testing.assert_allclose(projected.advantages, a_main, atol=1e-8)
    plain = grounded_advantages(a_main, [0.9, 0.3, 0.3], [0, 0, 0], adv_mix=0.3, orth=False)
    np.testing.assert_allclose(plain.advantages, [2 / 3 + 0.12, -1 / 3 - 0.06, -1 / 3 - 0.06], atol=1e-15)
    assert (plain.beta == 0).all()


def test_a_group_whose_main_advantages_are_zero_keeps_its_semantic_advantage() -> None:
    # All rewards equal: A_main = 0, beta = 0 / (0 + 1e-8) = 0, A_perp = A_sem = s - mean s.
    out = grounded_advantages([0.0, 0.0], [0.8, 0.2], ["g", "g"], adv_mix=0.3)
    np.testing.assert_allclose(out.residual, [0.3, -0.3], atol=1e-15)
    np.testing.assert_allclose(out.advantages, [0.09, -0.09], atol=1e-15)


def test_the_residual_is_orthogonal_to_the_main_advantage_in_every_group() -> None:
    rng = np.random.default_rng(2)
    group = rng.integers(0, 6, size=60)
    a_main = group_centered(rng.normal(size=60), group)
    out = grounded_advantages(a_main, rng.uniform(size=60), group)
    for g in np.unique(group):
        members = group == g
        assert abs(float(out.residual[members] @ a_main[members])) < 1e-7
        assert abs(float(out.residual[members].sum())) < 1e-12  # centred scores stay centred

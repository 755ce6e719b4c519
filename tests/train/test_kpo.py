"""KPO's Kalman-filtered importance ratio (``policy_loss(ratio="kpo")``) on hand-computed values.

Source: arXiv 2602.10609 and the authors' ``shuohe1995/verl-kpo`` @ c3135943
(``verl/trainer/ppo/core_algos.py``: ``kalman_gains_nonsteady_1d``, ``kalman_filter``,
``compute_policy_loss_kpo``). The filter, per row, from ``x = x0``, ``P = p0``::

    P⁻ = P + q;  K = P⁻ / (P⁻ + r);  x = (1 - K') x + K' z_t;  P = (1 - K) P⁻
    with K' = clamp(K, gain_eps, 1 - gain_eps)

and the ratio is ``exp(logp - sg(logp) + sg(x̂))``. The comparison with an independent scalar
implementation over many random rows is ``tests/reference/test_kpo.py``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group
from envhub.train.config import KPOConfig, LossConfig, ModelConfig, OptimConfig, load_config
from envhub.train.learner import Learner
from envhub.train.loss import KPOParams, kalman_log_ratio, policy_loss
from envhub.train.rows import RowBatch, build_rows

TEXTBOOK = {"gain_eps": 0.0}  # no gain clamp: the plain Kalman recursion


def t(values: list[list[float]]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def ones(rows: int, tokens: int) -> torch.Tensor:
    return torch.ones(rows, tokens, dtype=torch.float64)


# --------------------------------------------------------------------------- the filter's values


def test_unit_noises_give_fibonacci_gains_and_these_estimates() -> None:
    # q = r = 1, p0 = 0, x0 = 0, z = [1, -0.5, 2, 0]
    # t=1: P⁻ = 0 + 1 = 1,       K = 1/2,   P = (1/2)·1 = 1/2,       x = 1/2·1            = 0.5
    # t=2: P⁻ = 1/2 + 1 = 3/2,   K = 3/5,   P = (2/5)·(3/2) = 3/5,   x = 2/5·0.5 + 3/5·-0.5 = -0.1
    # t=3: P⁻ = 3/5 + 1 = 8/5,   K = 8/13,  P = (5/13)·(8/5) = 8/13, x = 5/13·-0.1 + 8/13·2 = 15.5/13
    # t=4: P⁻ = 8/13 + 1 = 21/13, K = 21/34, P = 21/34,              x = 13/34·15.5/13 + 0  = 15.5/34
    z = t([[1.0, -0.5, 2.0, 0.0]])
    got = kalman_log_ratio(z, ones(1, 4), KPOParams(q=1.0, r=1.0, p0=0.0, **TEXTBOOK))
    assert got.flatten().tolist() == pytest.approx([0.5, -0.1, 15.5 / 13, 15.5 / 34], abs=1e-15)


def test_authors_defaults_clamp_the_first_gain_and_shrink_towards_ratio_one() -> None:
    # q = 1e-6, r = 1, p0 = 0, gain_eps = 1e-6 (the authors'), z = [0.5, 0.5]
    # t=1: P⁻ = 1e-6, K = 1e-6/(1 + 1e-6) = 9.99999000001e-7 < 1e-6, so the applied gain is 1e-6:
    #      x = 1e-6·0.5 = 5e-7; P = (1 - K)·1e-6 = 9.99999000001e-7 (from the unclamped K)
    # t=2: P⁻ = 9.99999000001e-7 + 1e-6 = 1.999999000001e-6, K = P⁻/(P⁻ + 1) = 1.999995000013e-6
    #      x = (1 - K)·5e-7 + K·0.5 = 5e-7 - 1.0e-12 + 9.999975000065e-7 = 1.4999965000089998e-6
    z = t([[0.5, 0.5]])
    got = kalman_log_ratio(z, ones(1, 2))
    assert got[0, 0].item() == pytest.approx(5e-7, rel=1e-12)
    assert got[0, 1].item() == pytest.approx(1.4999965000089998e-6, rel=1e-12)
    # without the clamp the first gain is the exact one
    plain = kalman_log_ratio(z, ones(1, 2), KPOParams(**TEXTBOOK))
    assert plain[0, 0].item() == pytest.approx(0.5 * 9.99999000001e-7, rel=1e-12)


def test_the_gain_clamp_does_not_feed_back_into_the_variance() -> None:
    # The authors clamp only the gain they apply; their variances are the exact recursion's
    # (P_t = r·K_t with the closed-form, unclamped K_t). q = 0, p0 = 1e12, r = 1, z = [1, 0]:
    # t=1: P⁻ = 1e12, K = 1e12/(1e12 + 1) > 1 - 1e-6, applied 1 - 1e-6: x = 0.999999;
    #      P = (1 - K)·1e12 = 1e12/(1e12 + 1) (about 1; from the clamped gain it would be 1e6)
    # t=2: P⁻ = P, K = P/(P + 1) = 0.49999999999975 (0.999999 with P = 1e6),
    #      x = (1 - K)·0.999999 + K·0 = 0.49999950000025 (about 1e-6 with P = 1e6)
    got = kalman_log_ratio(t([[1.0, 0.0]]), ones(1, 2), KPOParams(q=0.0, r=1.0, p0=1e12))
    assert got[0, 0].item() == pytest.approx(0.999999, abs=1e-15)
    p1 = 1e12 / (1e12 + 1)
    k2 = p1 / (p1 + 1)
    assert got[0, 1].item() == pytest.approx((1 - k2) * 0.999999, abs=1e-15)
    assert got[0, 1].item() == pytest.approx(0.49999950000025, abs=1e-12)


def test_no_process_noise_with_a_prior_variance_is_a_shrunk_running_mean() -> None:
    # q = 0, p0 = r = 1: P⁻ = P, K_t = 1/(t + 1) (1/2, 1/3, 1/4, 1/5), P_t = 1/(t + 1);
    # so x_t = (x0 + z_1 + ... + z_t)/(t + 1): x0 = 0 counts as one pseudo-observation.
    # z = [1, -0.5, 2, 0]: sums 1, 0.5, 2.5, 2.5 -> x = 1/2, 0.5/3, 2.5/4, 2.5/5
    z = t([[1.0, -0.5, 2.0, 0.0]])
    got = kalman_log_ratio(z, ones(1, 4), KPOParams(q=0.0, r=1.0, p0=1.0, **TEXTBOOK))
    assert got.flatten().tolist() == pytest.approx([0.5, 0.5 / 3, 0.625, 0.5], abs=1e-15)


def test_no_noise_and_no_prior_variance_never_leaves_the_initial_estimate() -> None:
    # q = p0 = 0: P⁻ = 0, K = 0 at every token, so x stays x0 whatever z is.
    z = t([[3.0, -2.0, 7.0]])
    got = kalman_log_ratio(z, ones(1, 3), KPOParams(q=0.0, p0=0.0, x0=0.3, **TEXTBOOK))
    assert got.flatten().tolist() == [0.3, 0.3, 0.3]
    # the authors' clamp still moves it by 1e-6 per token: x1 = (1 - 1e-6)·0.3 + 1e-6·3
    crept = kalman_log_ratio(z, ones(1, 3), KPOParams(q=0.0, p0=0.0, x0=0.3))
    assert crept[0, 0].item() == pytest.approx(0.3 * (1 - 1e-6) + 3e-6, abs=1e-15)
    # and with x0 = 0 (the authors' setting) the ratio is exactly 1: on-policy REINFORCE weights
    at_one = kalman_log_ratio(z, ones(1, 3), KPOParams(q=0.0, p0=0.0, **TEXTBOOK))
    assert at_one.abs().max().item() == 0.0


def test_vanishing_observation_noise_gives_the_raw_log_ratio() -> None:
    # r -> 0: K = P⁻/(P⁻ + r) -> 1, so x_t -> z_t (the filter trusts every token).
    z = t([[0.3, -0.7, 0.05, 1.1]])
    got = kalman_log_ratio(z, ones(1, 4), KPOParams(q=1e-3, r=1e-15, **TEXTBOOK))
    assert torch.allclose(got, z, atol=1e-11, rtol=0.0)
    # with the authors' clamp the gain stops at 1 - 1e-6: x_t = z_t + 1e-6·(x_{t-1} - z_t)
    clamped = kalman_log_ratio(z, ones(1, 4), KPOParams(q=1e-3, r=1e-15))
    assert clamped[0, 1].item() == pytest.approx(-0.7 + 1e-6 * (clamped[0, 0].item() + 0.7), abs=1e-14)


def test_vanishing_observation_noise_makes_the_loss_verls_token_loss() -> None:
    torch.manual_seed(0)
    old = -torch.rand(3, 5, dtype=torch.float64) * 2
    logp0 = old + 0.15 * torch.randn(3, 5, dtype=torch.float64)
    adv = torch.randn(3, 1, dtype=torch.float64).expand(3, 5)
    mask = t([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0]])
    out: dict[str, tuple[float, float, torch.Tensor]] = {}
    for kind in ("token", "kpo"):
        logp = logp0.clone().requires_grad_()
        kpo = KPOParams(q=1e-3, r=1e-15, gain_eps=0.0) if kind == "kpo" else None
        res = policy_loss(logp, old, adv, mask, ratio=kind, kpo=kpo)  # type: ignore[arg-type]
        res.loss.backward()
        assert logp.grad is not None
        out[kind] = (res.loss.item(), res.clipfrac, logp.grad)
    assert out["kpo"][0] == pytest.approx(out["token"][0], abs=1e-10)
    assert out["kpo"][1] == out["token"][1]
    assert torch.allclose(out["kpo"][2], out["token"][2], atol=1e-10)


# --------------------------------------------------------------------------- masks, causality, rows


def test_masked_tokens_neither_predict_nor_update() -> None:
    # An interior masked token (an env token in a trajectory row) with a wild value, and
    # trailing padding: the valid tokens get exactly the estimates of the compacted row.
    params = KPOParams(q=1.0, r=1.0, **TEXTBOOK)
    padded = t([[1.0, 1e6, -0.5, 2.0, 0.0, -9.0, float("nan")]])
    mask = t([[1, 0, 1, 1, 1, 0, 0]])
    got = kalman_log_ratio(padded, mask, params)
    compact = kalman_log_ratio(t([[1.0, -0.5, 2.0, 0.0]]), ones(1, 4), params)
    assert got[0, [0, 2, 3, 4]].tolist() == compact[0].tolist()
    assert got[0, [1, 5, 6]].tolist() == [0.0, 0.0, 0.0]  # masked positions read 0 (ratio 1)


def test_a_fully_masked_row_is_all_zero() -> None:
    got = kalman_log_ratio(t([[5.0, -5.0]]), t([[0, 0]]), KPOParams(q=1.0))
    assert got.tolist() == [[0.0, 0.0]]


def test_the_filter_is_causal() -> None:
    params = KPOParams(q=0.1, r=1.0)
    z = t([[0.2, -0.4, 0.9, 0.1, -0.3]])
    later = z.clone()
    later[0, 3:] = t([[5.0, -5.0]])
    a, b = kalman_log_ratio(z, ones(1, 5), params), kalman_log_ratio(later, ones(1, 5), params)
    assert torch.equal(a[:, :3], b[:, :3])
    assert not torch.equal(a[:, 3:], b[:, 3:])


def test_rows_are_filtered_independently() -> None:
    torch.manual_seed(1)
    z = torch.randn(4, 9, dtype=torch.float64)
    mask = (torch.rand(4, 9) > 0.3).to(torch.float64)
    params = KPOParams(q=0.05, r=0.5, p0=0.2)
    together = kalman_log_ratio(z, mask, params)
    for i in range(4):
        alone = kalman_log_ratio(z[i : i + 1], mask[i : i + 1], params)
        assert torch.equal(together[i : i + 1], alone)


def test_float32_input_is_filtered_in_float32_and_returned_so() -> None:
    z = t([[1.0, -0.5, 2.0, 0.0]])
    got = kalman_log_ratio(z.float(), ones(1, 4), KPOParams(q=1.0, **TEXTBOOK))
    assert got.dtype == torch.float32
    assert got.flatten().tolist() == pytest.approx([0.5, -0.1, 15.5 / 13, 15.5 / 34], abs=1e-6)


# --------------------------------------------------------------------------- the loss and its gradient


def test_first_pass_ratio_is_one_and_gradient_is_minus_advantage() -> None:
    logp = t([[-1.0, -2.0, -0.5]]).requires_grad_()
    out = policy_loss(logp, logp.detach().clone(), t([[2.0, 2.0, 2.0]]), ones(1, 3), ratio="kpo")
    assert out.loss.item() == pytest.approx(-2.0)
    out.loss.backward()
    assert logp.grad is not None
    assert logp.grad.flatten().tolist() == pytest.approx([-2 / 3] * 3)


def test_value_is_the_filtered_ratio_and_gradient_skips_the_filter() -> None:
    # q = r = 1 on log ratios z = [1, -0.5, 2, 0] gives x̂ = [0.5, -0.1, 15.5/13, 15.5/34].
    # With A = 1 and no clipping, L = -mean(exp(x̂)) and, because x̂ is detached,
    # dL/dlogp_t = -exp(x̂_t)/4 exactly: no term from a token's influence on later estimates.
    x_hat = [0.5, -0.1, 15.5 / 13, 15.5 / 34]
    old = t([[-1.0, -1.0, -1.0, -1.0]])
    logp = (old + t([[1.0, -0.5, 2.0, 0.0]])).requires_grad_()
    kpo = KPOParams(q=1.0, r=1.0, **TEXTBOOK)
    out = policy_loss(logp, old, ones(1, 4), ones(1, 4), ratio="kpo", kpo=kpo, clip_low=0.99, clip_high=100.0)
    assert out.loss.item() == pytest.approx(-sum(math.exp(x) for x in x_hat) / 4, rel=1e-12)
    out.loss.backward()
    assert logp.grad is not None
    assert logp.grad.flatten().tolist() == pytest.approx([-math.exp(x) / 4 for x in x_hat], rel=1e-12)
    assert out.clipfrac == 0.0
    # approx_kl stays the raw tokens' (verl's ppo_kl, as the authors log it): mean(old - logp)
    assert out.approx_kl == pytest.approx(-(1.0 - 0.5 + 2.0 + 0.0) / 4)


def test_clipping_acts_on_the_filtered_ratio_not_the_raw_one() -> None:
    # x̂ = [0.5, -0.1, 1.1923, 0.4559] -> ratios 1.649, 0.905, 3.295, 1.578; band [0.8, 1.2]
    # with A = 1: tokens 1, 3, 4 are clipped (no gradient), token 2 (0.905) is not, although its
    # raw ratio exp(-0.5) = 0.607 lies outside the band and token 4's raw exp(0) = 1 inside it.
    old = t([[-1.0, -1.0, -1.0, -1.0]])
    logp = (old + t([[1.0, -0.5, 2.0, 0.0]])).requires_grad_()
    kpo = KPOParams(q=1.0, r=1.0, **TEXTBOOK)
    out = policy_loss(logp, old, ones(1, 4), ones(1, 4), ratio="kpo", kpo=kpo)
    assert out.loss.item() == pytest.approx(-(1.2 + math.exp(-0.1) + 1.2 + 1.2) / 4)
    assert out.clipfrac == pytest.approx(0.75)
    out.loss.backward()
    assert logp.grad is not None
    assert logp.grad.flatten().tolist() == pytest.approx([0.0, -math.exp(-0.1) / 4, 0.0, 0.0])


def test_no_dual_clip_for_kpo_as_in_the_authors_loss_but_weights_apply() -> None:
    # x0 = log 5 frozen (q = p0 = 0, no clamp): ratio 5 on every token; A = -1. The token ratio
    # would be dual-clipped to 3; the authors' KPO loss (like verl's GSPO) has no dual clip.
    old = t([[-1.0, -1.0]])
    kpo = KPOParams(q=0.0, p0=0.0, x0=math.log(5.0), **TEXTBOOK)
    out = policy_loss(old.clone(), old, t([[-1.0, -1.0]]), ones(1, 2), ratio="kpo", kpo=kpo)
    assert out.loss.item() == pytest.approx(5.0)
    assert out.clipfrac_lower == 0.0
    off = policy_loss(old.clone(), old, t([[-1.0, -1.0]]), ones(1, 2), ratio="kpo", kpo=kpo, clip_c=None)
    assert off.loss.item() == pytest.approx(5.0)
    halved = policy_loss(
        old.clone(), old, t([[-1.0, -1.0]]), ones(1, 2), ratio="kpo", kpo=kpo, weights=t([[0.5, 0.5]])
    )
    assert halved.loss.item() == pytest.approx(2.5)


def test_the_filtered_log_ratio_is_capped_at_ten_like_the_authors() -> None:
    old = t([[-1.0]])
    logp = old.clone().requires_grad_()
    kpo = KPOParams(q=0.0, p0=0.0, x0=12.0, **TEXTBOOK)
    out = policy_loss(logp, old, t([[1.0]]), t([[1]]), ratio="kpo", kpo=kpo, clip_high=1e9)
    assert out.loss.item() == pytest.approx(-math.exp(10.0))
    out.loss.backward()
    assert logp.grad is not None and logp.grad.item() == 0.0  # the clamp cuts the gradient


def test_kpo_parameters_with_another_ratio_are_refused() -> None:
    x = t([[-1.0]])
    with pytest.raises(ValueError, match="only apply to ratio='kpo'"):
        policy_loss(x, x, x, t([[1]]), ratio="token", kpo=KPOParams())


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"r": 0.0}, "KPOParams.r"),
        ({"r": -1.0}, "KPOParams.r"),
        ({"q": -1e-9}, "q and p0"),
        ({"p0": -1.0}, "q and p0"),
        ({"q": math.inf}, "KPOParams.q"),
        ({"x0": math.nan}, "KPOParams.x0"),
        ({"gain_eps": 0.5}, "KPOParams.gain_eps"),
    ],
)
def test_bad_filter_parameters_are_refused(kwargs: dict[str, float], names: str) -> None:
    with pytest.raises(ValueError, match=names):
        KPOParams(**kwargs)


# --------------------------------------------------------------------------- config and learner


def test_config_defaults_are_the_filters_and_bad_values_name_their_key() -> None:
    assert (KPOConfig().q, KPOConfig().r, KPOConfig().p0) == (KPOParams().q, KPOParams().r, KPOParams().p0)
    base = {"env": "envhub/SearchQA-v0", "model.path": "m", "loss.ratio": "kpo"}
    config = load_config(overrides={**base, "loss.kpo.q": 1e-4})
    assert config.loss.ratio == "kpo" and config.loss.kpo == KPOConfig(q=1e-4)
    with pytest.raises(ConfigurationError) as err:
        load_config(overrides={**base, "loss.kpo.r": 0, "loss.kpo.p0": -1, "loss.kpo.Q": 1})
    message = str(err.value)
    assert "loss.kpo.r: Input should be greater than 0" in message
    assert "loss.kpo.p0: Input should be greater than or equal to 0" in message
    assert "loss.kpo.Q: unknown key" in message
    with pytest.raises(ConfigurationError, match=r"loss\.ratio"):
        load_config(overrides={**base, "loss.ratio": "kalman"})


def _model(path: Path) -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32, local_files_only=True)


def _rows(groups: list[Group], advantage: float) -> RowBatch:
    rows = build_rows(groups, pad_token_id=0).rows
    rows.advantages = torch.full((len(rows),), advantage, dtype=torch.float32)
    return rows


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_learner_update_with_kpo_is_finite_and_follows_the_advantage(
    small_model_dir: Path, sampled_groups: list[Group], sign: float
) -> None:
    model = _model(small_model_dir)
    learner = Learner(
        model,
        model_config=ModelConfig(path=str(small_model_dir)),
        # the authors' recipe: KPO-clipped with eps 3e-4/4e-4, seq-mean-token-mean, no KL
        loss=LossConfig(
            ratio="kpo",
            kpo=KPOConfig(q=1e-6, r=1.0, p0=0.0),
            clip_low=3e-4,
            clip_high=4e-4,
            agg="seq-mean-token-mean",
            kl_coef=0.0,
            entropy_coef=0.0,
        ),
        optim=OptimConfig(lr=1e-3, micro_batch_rows=4, shuffle=False, ppo_epochs=2),
        temperature=1.0,
    )
    rows = _rows(sampled_groups, sign)
    before = learner.logprobs(rows)
    stats = learner.update(rows, before)
    assert stats.optimizer_steps == 2 and stats.skipped_steps == 0
    assert all(math.isfinite(v) for v in (stats.loss, stats.pg_loss, stats.grad_norm, stats.approx_kl))
    after = learner.logprobs(rows)
    assert torch.isfinite(after).all()
    change = float(((after - before) * rows.response_mask).sum())
    assert change * sign > 0  # positive advantages make the sampled responses likelier

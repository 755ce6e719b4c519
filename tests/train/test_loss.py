"""verl's actor loss on hand-computed values (shared/reference/round2_rollout_trainer.md §2)."""

from __future__ import annotations

import math

import pytest
import torch

from envhub.train.loss import agg_loss, entropy_from_logits, kl_penalty, policy_loss, tis_weights


def t(values: list[list[float]]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def test_first_pass_ratio_is_one_and_gradient_is_minus_advantage_over_tokens() -> None:
    logp = t([[-1.0, -2.0], [-0.5, -3.0]]).requires_grad_()
    adv = t([[1.0, 1.0], [-0.5, -0.5]])
    mask = t([[1, 1], [1, 0]])
    out = policy_loss(logp, logp.detach().clone(), adv, mask)
    # L = -A·1 on the three live tokens: (-1 - 1 + 0.5) / 3
    assert out.loss.item() == pytest.approx(-0.5)
    assert out.clipfrac == 0.0 and out.clipfrac_lower == 0.0 and out.approx_kl == 0.0
    out.loss.backward()
    assert logp.grad is not None
    assert logp.grad.flatten().tolist() == pytest.approx([-1 / 3, -1 / 3, 0.5 / 3, 0.0])


@pytest.mark.parametrize(
    ("adv", "ratio", "expected", "clipped"),
    [
        (1.0, 1.5, -1.2, True),  # upper clip: max(-1.5, -1.2)
        (1.0, 0.5, -0.5, False),  # A > 0 below 1-ε is not clipped: max(-0.5, -0.8)
        (-1.0, 0.5, 0.8, True),  # lower clip: max(0.5, 0.8)
        (-1.0, 1.1, 1.1, False),  # inside the band
        (-1.0, 5.0, 3.0, False),  # dual clip: min(max(5, 1.2), 3)
    ],
)
def test_clipping_on_both_sides_and_dual_clip(
    adv: float, ratio: float, expected: float, clipped: bool
) -> None:
    old = t([[-1.0]])
    logp = old + math.log(ratio)
    out = policy_loss(logp, old, t([[adv]]), t([[1]]))
    assert out.loss.item() == pytest.approx(expected)
    assert out.clipfrac == (1.0 if clipped else 0.0)
    assert out.clipfrac_lower == (1.0 if (adv < 0 and ratio * -adv > 3.0) else 0.0)


def test_clipped_tokens_carry_no_gradient_and_asymmetric_clip() -> None:
    old = t([[-1.0, -1.0]])
    logp = old + torch.log(t([[1.25, 1.25]]))
    logp.requires_grad_()
    out = policy_loss(logp, old, t([[1.0, 1.0]]), t([[1, 1]]), clip_low=0.2, clip_high=0.28)
    # 1.25 < 1.28: inside the asymmetric band, so unclipped: -1.25 on both tokens
    assert out.loss.item() == pytest.approx(-1.25)
    out2 = policy_loss(logp, old, t([[1.0, 1.0]]), t([[1, 1]]))  # symmetric 0.2: clipped to -1.2
    assert out2.loss.item() == pytest.approx(-1.2)
    out2.loss.backward()
    assert logp.grad is not None and logp.grad.abs().max().item() == 0.0


def test_dual_clip_must_exceed_one() -> None:
    with pytest.raises(ValueError, match="clip_c must be > 1"):
        policy_loss(t([[0.0]]), t([[0.0]]), t([[1.0]]), t([[1]]), clip_c=1.0)


def test_log_ratio_is_clamped_at_20() -> None:
    out = policy_loss(t([[0.0]]), t([[-100.0]]), t([[-1.0]]), t([[1]]), clip_c=None)
    assert out.loss.item() == pytest.approx(math.exp(20.0))


def test_k3_kl_and_the_other_estimators() -> None:
    logp, ref = t([[math.log(0.5)]]), t([[math.log(0.25)]])
    d = math.log(0.5)
    assert kl_penalty(logp, ref).item() == pytest.approx(math.exp(d) - d - 1)  # 0.1931
    assert kl_penalty(logp, ref, "kl").item() == pytest.approx(math.log(2))
    assert kl_penalty(logp, ref, "abs").item() == pytest.approx(math.log(2))
    assert kl_penalty(logp, ref, "mse").item() == pytest.approx(0.5 * math.log(2) ** 2)
    assert kl_penalty(t([[0.0]]), t([[50.0]])).item() == 10.0  # k3 clamped to 10


def test_token_mean_with_masks_and_every_aggregation_mode() -> None:
    loss = t([[1, 2, 3], [4, 0, 0], [9, 9, 9]])
    mask = t([[1, 1, 1], [1, 0, 0], [0, 0, 0]])
    assert agg_loss(loss, mask).item() == pytest.approx(10 / 4)
    assert agg_loss(loss, mask, "token-sum").item() == pytest.approx(10)
    assert agg_loss(loss, mask, "seq-mean-token-sum").item() == pytest.approx(10 / 2)  # masked row left out
    assert agg_loss(loss, mask, "seq-mean-token-mean").item() == pytest.approx((2 + 4) / 2)
    # verl 0.9.1: the seq-mean-token-sum value over the width; verl-agent's older form is the
    # token sum over the width (larger by the live row count)
    assert agg_loss(loss, mask, "seq-mean-token-sum-norm").item() == pytest.approx(10 / 2 / 3)
    assert agg_loss(loss, mask, "token-sum-norm").item() == pytest.approx(10 / 3)
    assert agg_loss(loss, mask, "seq-mean-token-sum-norm", norm_constant=4.0).item() == pytest.approx(
        10 / 2 / 4
    )


def test_micro_batches_with_the_global_token_count_add_up_to_the_mini_batch_token_mean() -> None:
    torch.manual_seed(0)
    loss = torch.randn(6, 5, dtype=torch.float64)
    mask = (torch.rand(6, 5) > 0.3).to(torch.float64)
    whole = agg_loss(loss, mask)
    total = float(mask.sum())
    parts = sum(agg_loss(loss[i : i + 2], mask[i : i + 2], global_tokens=total) for i in range(0, 6, 2))
    assert float(parts) == pytest.approx(whole.item())


def test_sequence_ratio_is_the_length_normalised_ratio_on_every_token() -> None:
    old = t([[-1.0, -1.0]])
    logp = old + t([[math.log(2.0), 0.0]])
    out = policy_loss(
        logp, old, t([[-1.0, -1.0]]), t([[1, 1]]), ratio="sequence", clip_high=1.0, clip_low=0.9
    )
    assert out.loss.item() == pytest.approx(math.sqrt(2.0))


def test_tis_weights_truncate_at_the_threshold() -> None:
    w = tis_weights(t([[math.log(3.0), math.log(1.5)]]), t([[0.0, 0.0]]), threshold=2.0)
    assert w.flatten().tolist() == pytest.approx([2.0, 1.5])
    out = policy_loss(t([[0.0, 0.0]]), t([[0.0, 0.0]]), t([[1.0, 1.0]]), t([[1, 1]]), weights=w)
    assert out.loss.item() == pytest.approx(-(2.0 + 1.5) / 2)


def test_entropy_of_uniform_logits_is_log_vocab() -> None:
    assert entropy_from_logits(torch.zeros(2, 3, 7)).flatten().tolist() == pytest.approx([math.log(7)] * 6)

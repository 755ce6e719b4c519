"""processed_logprobs: the sampling distribution vLLM's processed_logprobs mode reports."""

from __future__ import annotations

import math

import torch

from envhub.policy.sampling import processed_logprobs, prompt_seed

LOGITS = torch.tensor([[2.0, 1.0, 0.5, 0.0, -1.0]])


def test_temperature_divides_the_logits() -> None:
    assert torch.allclose(processed_logprobs(LOGITS, 0.5), torch.log_softmax(LOGITS / 0.5, dim=-1))


def test_temperature_zero_is_greedy_on_the_raw_distribution() -> None:
    assert torch.allclose(processed_logprobs(LOGITS, 0.0), torch.log_softmax(LOGITS, dim=-1))


def test_top_k_keeps_the_k_largest_and_renormalises() -> None:
    out = processed_logprobs(LOGITS, 1.0, top_k=2)
    assert torch.isinf(out[0, 2:]).all()
    assert torch.allclose(out[0, :2], torch.log_softmax(LOGITS[0, :2], dim=-1))


def test_top_p_drops_the_smallest_tail_within_one_minus_p() -> None:
    probs = torch.softmax(LOGITS, dim=-1)[0]
    # The two smallest tokens together hold less than 1 - 0.85 of the mass: both go.
    assert probs[3] + probs[4] < 0.15 < probs[2] + probs[3] + probs[4]
    out = processed_logprobs(LOGITS, 1.0, top_p=0.85)
    assert torch.isinf(out[0, 3:]).all() and torch.isfinite(out[0, :3]).all()
    assert math.isclose(float(out[0, :3].exp().sum()), 1.0, rel_tol=1e-6)


def test_top_p_always_keeps_the_most_likely_token() -> None:
    out = processed_logprobs(LOGITS, 1.0, top_p=1e-9)
    assert torch.isfinite(out[0, 0]) and torch.isinf(out[0, 1:]).all()


def test_prompt_seeds_are_reproducible_and_distinct_within_a_call() -> None:
    assert prompt_seed(None, 0) is None
    assert prompt_seed(7, 3) == prompt_seed(7, 3)
    assert len({prompt_seed(7, i) for i in range(64)}) == 64
    assert prompt_seed(-1, 0) is not None  # negative seeds are accepted

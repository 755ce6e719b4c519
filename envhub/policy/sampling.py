"""The sampling distribution, written once: temperature, top-k and top-p applied to logits.

vLLM with ``--logprobs-mode processed_logprobs`` reports each sampled token's logprob under the
distribution it was actually drawn from. That distribution is built in this order (vLLM v1's
sampler, restated): divide the logits by the temperature; keep the ``top_k`` largest logits
(ties at the k-th value kept); then drop the smallest-probability tokens whose cumulative
probability stays within ``1 - top_p`` (at least one token always survives); masked tokens get
``-inf``; the logprobs are the ``log_softmax`` of what remains. Greedy decoding (temperature 0)
uses the unscaled logits. The in-process backend samples with :func:`processed_logprobs`, and
a trainer that recomputes rollout logprobs uses the same function, so all three agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["GREEDY_EPS", "processed_logprobs", "prompt_seed"]

#: Temperatures below this are greedy decoding (vLLM's ``_SAMPLING_EPS``).
GREEDY_EPS = 1e-5


def processed_logprobs(logits: Any, temperature: float = 1.0, top_k: int = -1, top_p: float = 1.0) -> Any:
    """Log-probabilities of the sampling distribution, one row per row of ``logits``.

    Args:
        logits: a float tensor ``[..., vocab]`` (computed in float32 for exactness).
        temperature: divides the logits; below :data:`GREEDY_EPS` means greedy (no scaling,
            no top-k/top-p, as vLLM does).
        top_k: keep the k largest logits; ``-1`` or ``0`` keeps all.
        top_p: nucleus mass in (0, 1]; ``1.0`` keeps all.

    Returns:
        A float32 tensor of the same shape: ``log_softmax`` of the processed logits, ``-inf``
        on tokens that cannot be sampled.
    """
    import torch

    scores = logits.float()
    if temperature < GREEDY_EPS:
        return torch.log_softmax(scores, dim=-1)
    scores = scores / temperature
    vocab = scores.shape[-1]
    if 0 < top_k < vocab:
        kth = torch.topk(scores, top_k, dim=-1).values[..., -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p < 1.0:
        ascending, order = torch.sort(scores, dim=-1)
        cumulative = torch.softmax(ascending, dim=-1).cumsum(dim=-1)
        drop = cumulative <= 1.0 - top_p
        drop[..., -1] = False  # the most likely token always stays
        # Back from sorted order to vocabulary order.
        scores = scores.masked_fill(torch.zeros_like(drop).scatter(-1, order, drop), float("-inf"))
    return torch.log_softmax(scores, dim=-1)


def prompt_seed(seed: int | None, index: int) -> int | None:
    """The seed of prompt ``index`` in a call seeded with ``seed`` (``None`` stays unseeded).

    Every backend derives per-prompt seeds this way: one call is reproducible, and identical
    prompts in one call (the members of a GRPO group) still draw different samples.
    """
    if seed is None:
        return None
    return int(np.random.SeedSequence([seed & 0xFFFF_FFFF_FFFF_FFFF, index]).generate_state(1)[0])

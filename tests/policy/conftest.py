"""Policy fixtures: logprobs recomputed with the tiny model's weights.

``tiny_model_dir`` and the session's one ``vllm_server`` live in ``tests/conftest.py`` (shared
with ``tests/integration``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from envhub.policy.sampling import processed_logprobs


@pytest.fixture(scope="session")
def recompute_logprobs(tiny_model_dir: Path) -> Callable[..., list[float]]:
    """Logprobs of a completion's tokens recomputed by one fp32 forward pass with the same weights.

    Call it as ``recompute(prompt_ids, token_ids, temperature=..., top_k=..., top_p=...)``; the
    distribution is :func:`processed_logprobs` (what vLLM's processed_logprobs mode reports).
    """
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval()

    def recompute(
        prompt_ids: list[int],
        token_ids: list[int],
        *,
        temperature: float,
        top_k: int = -1,
        top_p: float = 1.0,
    ) -> list[float]:
        ids = torch.tensor([prompt_ids + token_ids])
        with torch.no_grad():
            logits = model(ids).logits[0, len(prompt_ids) - 1 : -1]
        logprobs = processed_logprobs(logits, temperature, top_k, top_p)
        return logprobs[torch.arange(len(token_ids)), torch.tensor(token_ids)].tolist()

    return recompute

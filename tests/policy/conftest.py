"""Shared policy fixtures: the tiny model built locally, and a real vLLM server serving it.

The vLLM server runs from the virtualenv ``scripts/install-vllm.sh`` makes (``.venv-vllm`` at the
repo root, or ``$ENVHUB_VLLM_VENV``). Where it is missing the vLLM tests skip, except under
``CI=true``, where they fail: CI must run them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from envhub.policy.sampling import processed_logprobs
from envhub.policy.tiny import build_tiny_model
from envhub.policy.vllm_server import VllmServer

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Qwen2 model (seed 0), built once per session."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model") / "model", seed=0)


def vllm_python() -> Path:
    """The vLLM virtualenv's interpreter (``$ENVHUB_VLLM_VENV`` or ``<repo>/.venv-vllm``)."""
    venv = Path(os.environ.get("ENVHUB_VLLM_VENV") or REPO_ROOT / ".venv-vllm")
    return venv / "bin" / "python"


@pytest.fixture(scope="session")
def vllm_server(tiny_model_dir: Path) -> Iterator[VllmServer]:
    """A real vLLM OpenAI server (CPU, float32, processed logprobs) serving the tiny model."""
    python = vllm_python()
    if not python.is_file():
        message = f"no vLLM virtualenv at {python.parent.parent}; run `bash scripts/install-vllm.sh`"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the vLLM tests: {message}")
        pytest.skip(message)
    server = VllmServer(python, tiny_model_dir, log_path=tiny_model_dir.parent / "vllm.log")
    with server:
        print(f"\nvLLM server up in {server.startup_s:.1f} s: {' '.join(server.command)}")
        yield server


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

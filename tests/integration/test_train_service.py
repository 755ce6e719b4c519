"""envhub-train through the rollout service: the whole served loop, as the compose `gpu` profile runs it.

Real processes on loopback: vLLM (CPU build) serves the tiny model, an env server plays
Search-QA (or the staleness tests' uneven env), ``envhub serve-rollouts`` plays each
iteration's groups against both and publishes them to a Redis stream, and ``envhub-train``
consumes that stream, updates the model and pushes the new weights into vLLM before the next
iteration's job.
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
from typing import Any, TypeVar

import pytest
import redis
import yaml

from envhub.client import RolloutClient
from envhub.policy.vllm_server import VllmServer
from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread
from envhub.train.weight_sync import DiskVllmSync
from tests.integration.test_rollout_crash import REDIS, Service, free_port, redis_up
from tests.needs import require
from tests.train.test_ranks import SERVED_LR, SERVED_TOLERANCE, _published, _serve_original, _version_gaps
from tests.train.test_staleness import TASKS, UNEVEN

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
        _serve_original(vllm_server, tiny_model_dir, tmp_path)


def _trainer(command: list[str], timeout: float = 600) -> None:
    done = subprocess.run(
        command,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _groups(run: Path) -> dict[int, list[dict[str, Any]]]:
    """Iteration -> the groups it trained on, from the run's records."""
    return {
        int(path.stem.split("_")[1]): [json.loads(line) for line in path.read_text().splitlines()]
        for path in sorted((run / "rollouts").glob("iter_*.jsonl"))
    }


#: Seconds the long group plays on after the trainer wrote iteration 1's groups, right before
#: it pushes version 1: past that push (a few seconds here) unless the push waits for it.
LINGER_S = 8.0


def test_a_push_through_the_rollout_service_waits_for_its_jobs_so_each_group_has_its_versions_weights(
    vllm_server: VllmServer, tiny_model_dir: Path, stream: str, tmp_path: Path
) -> None:
    # k = 1, B = 2: the first job holds four tasks at version 0, the long task t7 among them
    # (the staleness tests' schedule). t7 plays on until LINGER_S after the trainer wrote
    # iteration 1's groups, so its job is in flight when the trainer pushes version 1. A push
    # that did not wait for it would have t7's later turns sampled by version 1's weights
    # under version 0's label.
    run = tmp_path / "run"
    held = {
        "progress": str(run / "rollouts" / "iter_000001.jsonl"),
        "outlast": 1,
        "linger_s": LINGER_S,
        "turn_s": 0.2,
    }
    recipe = {
        "env": UNEVEN,
        "algo": "grpo",
        "seed": 0,
        "max_staleness": 1,
        "model": {"path": str(tiny_model_dir)},
        "optim": {"lr": SERVED_LR, "micro_batch_rows": 8},
        "output": {"checkpoint_every": 1, "keep_checkpoints": 10, "tensorboard": False},
        "rollout": {
            "group_size": 2,
            "batch_tasks": 2,
            "task_ids": TASKS,
            "max_steps": 400,
            "max_tokens": 4,
            "context": {"family": "envhub/SearchQA-v0", "projection": "think_action"},
            "env_kwargs": held,
            "queue_stream": stream,
        },
    }
    config = tmp_path / "recipe.yaml"
    config.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    # A reader of the test's own that holds every entry back from trimming, to read them all.
    client = redis.Redis.from_url(REDIS)
    client.xgroup_create(stream, "monitor", id="0", mkstream=True)
    client.close()
    try:
        with serve_in_thread(ServerSettings(env_id=UNEVEN, workers=1)) as envs:
            service = Service(free_port(), stream, tmp_path / "service.log")
            try:
                _trainer([
                    sys.executable, "-m", "envhub.train.cli", "--config", str(config),
                    "--iterations", "3", "--run-dir", str(run),
                    "--envs", envs.base_url, "--rollout-service", service.url,
                    "--policy-url", vllm_server.base_url, "--queue", REDIS, "--no-progress",
                ])  # fmt: skip
                # The first job (t7's) ends on the service even where the trainer did not wait.
                first = json.loads((run / "rollouts" / "iter_000001.jsonl").read_text().splitlines()[0])
                with RolloutClient(service.url) as jobs:
                    assert jobs.wait(first["job_id"], timeout_s=120).status == "done"
            finally:
                service.stop()
        assert _with_sync(vllm_server, tmp_path, lambda sync: sync.version()) == "3"
    finally:
        _serve_original(vllm_server, tiny_model_dir, tmp_path)

    temperature = json.loads((run / "config.json").read_text())["rollout"]["sampling"]["temperature"]

    def weights(version: int) -> Path:
        return tiny_model_dir if version == 0 else run / "checkpoints" / f"iter_{version}"

    # Every group the service published (trained on or not) was sampled, every turn, by the
    # weights of the version it carries: closest to them, and far from the next version's.
    published = [g for g in _published(stream) if g.policy_version is not None and g.policy_version <= 3]
    assert "t7" in {g.task_id for g in published}
    gaps = _version_gaps(published, weights, 3, temperature)
    print("\n(task, version, largest logprob gap to its version's weights, to the neighbour's):", gaps)
    for task, version, own, other in gaps:
        assert own < SERVED_TOLERANCE, (task, version, own, other)
        assert other > 1000 * SERVED_TOLERANCE, (task, version, own, other)
    # The push waited for t7's job: t7 came before any group of version 1, so iteration 2 (at
    # version 1, k = 1) trained on it, corrected, with the first job's last short group.
    used = _groups(run)
    assert sorted(used) == [1, 2, 3]
    assert [g["policy_version"] for g in used[2]] == [0, 0]
    assert "t7" in {g["task_id"] for g in used[2]}

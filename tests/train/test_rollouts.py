"""The trainer's rollout sources: the ack interval checked at start-up, the jobs they submit,
the served policy they sample from."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from envhub.core.errors import ConfigurationError
from envhub.train.rollouts import check_ack_interval


def test_a_checkpoint_interval_holding_more_groups_than_the_bound_is_refused_at_start_up() -> None:
    # The compose GPU recipe: 150 iterations x 32 groups, checkpoint only at the end.
    with pytest.raises(ConfigurationError, match=r"output\.checkpoint_every") as caught:
        check_ack_interval(checkpoint_every=0, iterations=150, groups_per_iteration=32, max_unacked=1024)
    assert "4800" in str(caught.value) and "ENVHUB_QUEUE_MAX_UNACKED" in str(caught.value)
    check_ack_interval(checkpoint_every=32, iterations=150, groups_per_iteration=32, max_unacked=1024)
    check_ack_interval(checkpoint_every=0, iterations=10, groups_per_iteration=32, max_unacked=1024)


async def test_a_rollout_service_job_carries_trajectory_mode(tmp_path: Path) -> None:
    from envhub.core.wire import PolicyEndpoint, SamplingRequest
    from envhub.rollout.engine import GroupTask
    from envhub.train.config import RolloutSettings
    from envhub.train.rollouts import ServiceRollouts

    settings = RolloutSettings(envs=["http://127.0.0.1:9"], trajectory_mode=True)
    source = ServiceRollouts(
        service_url="http://127.0.0.1:9",
        env_id="envhub/SearchQA-v0",
        settings=settings,
        policy=PolicyEndpoint(base_url="http://127.0.0.1:9", model="policy", tokenizer=str(tmp_path)),
    )
    try:
        request = source.request([GroupTask(0, "t", 0)], version=1, sampling=SamplingRequest())
    finally:
        await source.aclose()
    assert request.trajectory_mode  # the section's one field, passed on in the job


class _Models(BaseHTTPRequestHandler):
    """An OpenAI-compatible server's ``/v1/models`` listing ``first`` then ``policy``."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        data = json.dumps({"object": "list", "data": [{"id": "first"}, {"id": "policy"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def models_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _recipe(model_dir: Path, tmp_path: Path, policy: dict[str, Any], **rollout: Any) -> Any:
    from envhub.train.config import load_config

    return load_config(
        None,
        {
            "env": "envhub/TimeSeries-v0",
            "model": {"path": str(model_dir), "device": "cpu"},
            "output.run_dir": str(tmp_path / "run"),
            "rollout": {"policy": policy, "batch_tasks": 1, **rollout},
        },
    )


async def test_every_field_of_the_recipe_policy_endpoint_reaches_the_backend_the_trainer_samples_with(
    small_model_dir: Path, tmp_path: Path, models_url: str
) -> None:
    from envhub.policy.openai_http import OpenAIBackend
    from envhub.train.rollouts import EngineRollouts
    from envhub.train.trainer import Trainer

    policy = {"base_url": models_url, "model": "policy", "max_concurrency": 3, "timeout_s": 7.5,
              "tokenizer": str(small_model_dir)}  # fmt: skip
    trainer = Trainer(_recipe(small_model_dir, tmp_path, policy))
    source = await trainer._source(trainer._queue())
    try:
        assert isinstance(source, EngineRollouts)
        backend = source._served  # the backend every group of the run is sampled with
        assert isinstance(backend, OpenAIBackend)
        assert backend.base_url == models_url.removesuffix("/v1")
        assert backend.model == "policy"  # the recipe's name, not the first the server lists
        assert (backend.max_concurrency, backend.timeout_s) == (3, 7.5)
    finally:
        await source.aclose()


async def test_a_rollout_service_job_carries_the_recipe_policy_endpoint_whole(
    small_model_dir: Path, tmp_path: Path, models_url: str
) -> None:
    from envhub.core.wire import PolicyEndpoint, SamplingRequest
    from envhub.rollout.engine import GroupTask
    from envhub.train.rollouts import ServiceRollouts
    from envhub.train.trainer import Trainer

    # The tokenizer as the service reaches it (another container's path), not the trainer's.
    policy = {"base_url": models_url, "model": "policy", "max_concurrency": 3, "timeout_s": 7.5,
              "tokenizer": "/models/policy"}  # fmt: skip
    service = {"rollout_service": "http://127.0.0.1:9", "queue": "redis://127.0.0.1:6379/0",
               "env_urls": ["http://127.0.0.1:9"]}  # fmt: skip
    trainer = Trainer(_recipe(small_model_dir, tmp_path, policy, **service))
    source = await trainer._source(trainer._queue())
    try:
        assert isinstance(source, ServiceRollouts)
        job = source.request([GroupTask(0, "test-0", 0)], version=2, sampling=SamplingRequest())
    finally:
        await source.aclose()
    assert job.policy == PolicyEndpoint.model_validate(policy)


async def test_a_recipe_model_the_server_does_not_serve_is_refused_at_start_up(
    small_model_dir: Path, tmp_path: Path, models_url: str
) -> None:
    from envhub.train.trainer import Trainer

    trainer = Trainer(_recipe(small_model_dir, tmp_path, {"base_url": models_url, "model": "qwen"}))
    with pytest.raises(
        ConfigurationError, match=r"rollout\.policy\.model 'qwen' is not served .*first, policy"
    ):
        await trainer._source(trainer._queue())


def test_a_policy_endpoint_with_in_process_generation_is_refused_at_load(
    small_model_dir: Path, tmp_path: Path
) -> None:
    # Sampling in this process uses no served policy: its model, cap and timeout could not apply.
    with pytest.raises(ConfigurationError, match=r"rollout\.policy names a served policy"):
        _recipe(small_model_dir, tmp_path, {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
                generation="transformers")  # fmt: skip


def test_a_policy_url_is_set_over_the_policys_base_url_and_recorded() -> None:
    # policy_url (--policy-url) wins, as documented; the section kept the recipe's policy.base_url,
    # so config.json named a server the run never asked.
    from envhub.core.wire import PolicyEndpoint
    from envhub.train.config import RolloutSettings

    policy = {"base_url": "http://127.0.0.1:8001/v1", "model": "m", "max_concurrency": 3}
    settings = RolloutSettings.model_validate({"policy_url": "http://127.0.0.1:8002/v1", "policy": policy})
    assert isinstance(settings.policy, PolicyEndpoint)
    assert settings.policy.base_url == settings.policy_url == "http://127.0.0.1:8002/v1"
    assert settings.policy.max_concurrency == 3
    saved = settings.model_dump(mode="json")
    assert saved["policy"]["base_url"] == saved["policy_url"]
    assert settings.endpoint(model="x", tokenizer="t").base_url == "http://127.0.0.1:8002/v1"


def test_a_shorthand_beside_a_sampling_object_conflicts_only_with_what_it_set() -> None:
    # The object's defaults were compared too: SamplingRequest(top_p=0.9) with temperature: 0.5
    # was refused as two temperatures.
    from pydantic import ValidationError

    from envhub.core.wire import SamplingRequest
    from envhub.train.config import RolloutSettings

    settings = RolloutSettings(sampling=SamplingRequest(top_p=0.9), temperature=0.5)  # type: ignore[call-arg]
    assert (settings.sampling.top_p, settings.sampling.temperature) == (0.9, 0.5)
    with pytest.raises(ValidationError, match=r"shorthand of rollout\.sampling\.temperature"):
        RolloutSettings(sampling=SamplingRequest(temperature=1.0), temperature=0.5)  # type: ignore[call-arg]

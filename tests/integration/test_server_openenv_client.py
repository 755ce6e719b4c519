"""The real OpenEnv client from PyPI (``openenv-core``) drives an envhub server unmodified."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openenv.core.env_server.types import ResetResponse, StepResponse
from openenv.core.generic_client import GenericEnvClient

from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def _repo_root_importable() -> None:
    """Workers import the test envs (tests/server/envs.py) by name, from the repo root."""
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)


@pytest.fixture(scope="module")
def counter_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="tests.server.envs:CounterEnv", workers=1)) as running:
        yield running


def test_openenv_generic_client_resets_and_steps_over_ws(counter_server: RunningServer) -> None:
    with GenericEnvClient(base_url=counter_server.base_url).sync() as env:
        first = env.reset(seed=3, task_id="t7")
        assert first.done is False and first.reward is None
        assert first.observation["text"].startswith("task t7")
        step = env.step({"action": "hello"})
        assert step.observation["text"] == "echo hello #1"
        assert step.observation["info"]["anchor"] == "t7:1"  # envhub keeps info on the wire
        assert step.reward == 0.0 and step.done is False
        final = env.step({"action": "stop"})
        assert final.done is True and final.reward == 1.0
        assert env.state()["step_count"] == 2


def test_openenv_client_sees_server_errors_as_its_runtime_error(counter_server: RunningServer) -> None:
    with GenericEnvClient(base_url=counter_server.base_url).sync() as env:
        env.reset()
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.step({"wrong": "shape"})
        assert env.step({"action": "still works"}).observation["text"] == "echo still works #1"


def test_openenv_http_reset_and_step_parse_with_openenv_models(counter_server: RunningServer) -> None:
    with httpx.Client(base_url=counter_server.base_url) as c:
        reset = ResetResponse.model_validate(c.post("/reset", json={"seed": 1}).json())
        step = StepResponse.model_validate(c.post("/step", json={"action": {"action": "x"}}).json())
    assert reset.observation["text"].startswith("task ")
    assert step.observation["text"] == "echo x #1"

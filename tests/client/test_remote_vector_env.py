"""RemoteVectorEnv: N sessions of one real server behave like ``make_vec`` of the local env.

A real ``envhub serve`` (uvicorn + worker processes) runs on loopback; the remote vector env
and a local ``gymnasium.make_vec`` play the same seeds and the same action script, and every
observation, reward, flag and info key must match, through episode ends and autoresets.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium
import httpx
import pytest
from gymnasium.vector import AutoresetMode

import envhub
from envhub.client import RemoteVectorEnv
from envhub.core.errors import ConfigurationError, ResetNeededError
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

pytestmark = pytest.mark.integration

NUM_ENVS = 3
ENV_KWARGS = {"images": False}
COMPARED_INFO = ("anchor", "won", "task_id", "task_score", "is_action_valid")


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=2)) as running:
        yield running


def _actions(step: int) -> list[str]:
    # Sub-env i answers (ending its episode) at step 2 + 2i and inspects the series otherwise,
    # so episodes end at different steps, autoresets interleave, and the 8-step limit truncates.
    return ["answer[normal]" if step == 2 + 2 * i else f"stats[0:{step + 2}]" for i in range(NUM_ENVS)]


def _info_view(info: dict[str, Any]) -> dict[str, Any]:
    return {key: (info[key].tolist(), info[f"_{key}"].tolist()) for key in COMPARED_INFO if key in info}


def _play(envs: gymnasium.vector.VectorEnv[Any, Any, Any], steps: int) -> list[Any]:
    obs, info = envs.reset(seed=11, options={"split": "test"})
    trace: list[Any] = [list(obs), _info_view(info)]
    for step in range(steps):
        obs, rewards, terminations, truncations, info = envs.step(_actions(step))
        view = _info_view(info)
        if "final_info" in info:
            view["final"] = (list(info["final_obs"]), _info_view(info["final_info"]))
        trace.append((list(obs), rewards.tolist(), terminations.tolist(), truncations.tolist(), view))
    return trace


def _local(mode: AutoresetMode = AutoresetMode.NEXT_STEP) -> gymnasium.vector.VectorEnv[Any, Any, Any]:
    envhub.register_all()
    return gymnasium.make_vec(
        "envhub/TimeSeries-v0",
        num_envs=NUM_ENVS,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        **ENV_KWARGS,
    )


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=lambda m: m.value)
def test_remote_vector_env_matches_local_make_vec(server: RunningServer, mode: AutoresetMode) -> None:
    local = _local(mode)
    remote = RemoteVectorEnv(server.base_url, NUM_ENVS, env_kwargs=ENV_KWARGS, autoreset_mode=mode)
    try:
        local_trace, remote_trace = _play(local, 14), _play(remote, 14)
        ended = [any(t[2]) or any(t[3]) for t in local_trace[2:]]
        assert sum(ended) >= 3  # the script really crosses episode ends and the step limit
        assert remote_trace == local_trace
    finally:
        local.close()
        remote.close()


def test_make_vec_on_remote_id_builds_the_remote_vector_env(server: RunningServer) -> None:
    envhub.register_all()
    envs = gymnasium.make_vec(
        "envhub/Remote-v0", num_envs=NUM_ENVS, base_url=server.base_url, env_kwargs=ENV_KWARGS
    )
    try:
        assert isinstance(envs.unwrapped, RemoteVectorEnv)
        obs, _ = envs.reset(seed=0)
        assert envs.observation_space.contains(obs) and len(obs) == NUM_ENVS
    finally:
        envs.close()


class _CountingTransport(httpx.HTTPTransport):
    """A real HTTP transport that records each request's method and path."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(f"{request.method} {request.url.path}")
        return super().handle_request(request)


def test_each_step_is_one_batch_request(server: RunningServer) -> None:
    transport = _CountingTransport()
    envs = RemoteVectorEnv(server.base_url, NUM_ENVS, env_kwargs=ENV_KWARGS, transport=transport)
    try:
        envs.reset(seed=0)
        assert transport.calls[-1] == "POST /v1/batch/reset"
        transport.calls.clear()
        envs.step(["stats[0:5]"] * NUM_ENVS)
        assert transport.calls == ["POST /v1/batch/step"]
        transport.calls.clear()
        envs.step(["answer[normal]"] * NUM_ENVS)  # all end ...
        transport.calls.clear()
        envs.step(["ignored"] * NUM_ENVS)  # ... so this step only resets them
        assert transport.calls == ["POST /v1/batch/reset"]
    finally:
        envs.close()


def test_disabled_autoreset_requires_a_masked_reset(server: RunningServer) -> None:
    envs = RemoteVectorEnv(server.base_url, NUM_ENVS, env_kwargs=ENV_KWARGS, autoreset_mode="Disabled")
    try:
        envs.reset(seed=0)
        _, _, terminations, _, _ = envs.step(["answer[normal]", "stats[0:4]", "stats[0:4]"])
        assert terminations.tolist() == [True, False, False]
        with pytest.raises(ConfigurationError, match="reset_mask"):
            envs.step(["stats[0:4]"] * NUM_ENVS)
        obs, info = envs.reset(options={"reset_mask": terminations})
        assert info["_anchor"].tolist() == [True, False, False]
        _, rewards, _, _, _ = envs.step(["stats[0:4]"] * NUM_ENVS)
        assert rewards.shape == (NUM_ENVS,)
    finally:
        envs.close()


def test_misuse_raises_typed_errors_and_close_frees_the_sessions(server: RunningServer) -> None:
    before = httpx.get(server.base_url + "/ready").json()["active_sessions"]
    with pytest.raises(ConfigurationError, match="serves 'envhub/TimeSeries-v0'"):
        RemoteVectorEnv(server.base_url, 2, env_id="envhub/ALFWorld-v0")
    envs = RemoteVectorEnv(server.base_url, 2, env_kwargs=ENV_KWARGS)
    try:
        with pytest.raises(ResetNeededError):
            envs.step(["stats", "stats"])
        envs.reset(seed=[1, 2])
        with pytest.raises(ConfigurationError, match="one per sub-env"):
            envs.step(["stats"])
        with pytest.raises(ConfigurationError, match="one per sub-env"):
            envs.reset(seed=[1, 2, 3])
    finally:
        envs.close()
    assert httpx.get(server.base_url + "/ready").json()["active_sessions"] == before

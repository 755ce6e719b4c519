"""RemoteEnv: a gymnasium.Env over HTTP, checked against the real server and the local env."""

from __future__ import annotations

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import envhub
from envhub.client import EnvClient, RemoteEnv
from envhub.core.errors import ConfigurationError, ResetNeededError, SessionNotFoundError
from envhub.server.testing import RunningServer
from tests.clock import ManualClock, expire_idle_sessions

#: A scripted episode of the time-series env: valid tool calls, an invalid action, the
#: answer, and one action after the end (whose defined answer must match too).
SCRIPT = [
    "stats[0:100]",
    "zscore[0:64]",
    "not a tool",
    "fft[0:128]",
    "zoom[10:40]",
    "answer[normal]",
    "stats[0:5]",
]


def test_remote_env_passes_gymnasium_check_env(ts_server: RunningServer) -> None:
    env = RemoteEnv(ts_server.base_url)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_remote_env_matches_the_local_env_step_for_step(ts_server: RunningServer) -> None:
    remote = RemoteEnv(ts_server.base_url, env_id="envhub/TimeSeries-v0")
    local = envhub.make("envhub/TimeSeries-v0")
    try:
        for seed, task_id in ((0, None), (5, "test-3")):
            options = {} if task_id is None else {"task_id": task_id}
            assert remote.reset(seed=seed, options=options) == local.reset(seed=seed, options=options)
            for action in SCRIPT:
                assert remote.step(action) == local.step(action), action
    finally:
        remote.close()
        local.close()


def test_gymnasium_make_builds_a_remote_env(ts_server: RunningServer) -> None:
    env = gymnasium.make("envhub/Remote-v0", base_url=ts_server.base_url)
    try:
        observation, info = env.reset(seed=1)
        assert observation.startswith("Task: find the anomaly") and info["task_id"]
        _, _, _, _, info = env.step("stats[0:10]")
        assert info["is_action_valid"]
    finally:
        env.close()


def test_close_deletes_the_session_on_the_server(ts_server: RunningServer) -> None:
    env = RemoteEnv(ts_server.base_url)
    env.reset(seed=0)
    session_id = env.session_id
    assert session_id is not None
    env.close()
    with EnvClient(ts_server.base_url) as client, pytest.raises(SessionNotFoundError):
        client.state(session_id)


def test_step_before_reset_raises_reset_needed(ts_server: RunningServer) -> None:
    env = RemoteEnv(ts_server.base_url)
    try:
        with pytest.raises(ResetNeededError):
            env.step("stats[0:10]")
    finally:
        env.close()


def test_env_id_of_another_env_is_a_configuration_error(ts_server: RunningServer) -> None:
    env = RemoteEnv(ts_server.base_url, env_id="envhub/ALFWorld-v0")
    try:
        with pytest.raises(ConfigurationError, match="TimeSeries"):
            env.reset(seed=0)
    finally:
        env.close()


def test_reset_after_the_session_expired_opens_a_new_one(
    ttl_server: RunningServer, ttl_clock: ManualClock
) -> None:
    env = RemoteEnv(ttl_server.base_url)
    try:
        env.reset(seed=0, options={"task_id": "t1"})
        first_session = env.session_id
        expire_idle_sessions(ttl_server, ttl_clock)
        observation, info = env.reset(seed=0, options={"task_id": "t1"})
        assert env.session_id != first_session
        assert info["task_id"] == "t1" and observation.startswith("task t1")
        assert env.step("go")[0] == "echo go #1"
    finally:
        env.close()

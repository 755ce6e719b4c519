"""SkyRL: envhub envs registered in skyrl_gym play the same episodes as the native envs.

Each test drives ``skyrl_gym.make(...)`` the way SkyRL's generator does (``init`` with the
row's prompt, then ``step`` with the model's text until ``done``) and compares every step
with the native envhub env playing the same task, seed and action script.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import envhub
from envhub.core.errors import ConfigurationError
from envhub.envs.alfworld.policy import WalkthroughPolicy
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

skyrl_gym = pytest.importorskip("skyrl_gym")  # the `skyrl` extra; CI installs it, so this runs

from envhub.integrations.skyrl import EnvhubTextEnv, register_envhub_envs, skyrl_id  # noqa: E402

TS_SCRIPT = ["stats[0:50]", "zscore[0:200]", "not a command", "fft[0:128]", "answer[normal]"]
PROMPT = [{"role": "system", "content": "You are a careful agent."}]


def _wrap(action: str) -> str:
    """What a model following the family prompt writes for ``action``."""
    return f"<think>I will do this.</think><action>{action}</action>"


def _native(env_id: str, task_id: str, seed: int, actions: list[str], **kwargs: Any) -> list[Any]:
    env = envhub.make(env_id, **kwargs)
    try:
        obs, info = env.reset(seed=seed, options={"task_id": task_id})
        trace: list[Any] = [(info["anchor"], info["task_id"])]
        for action in actions:
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            trace.append((obs, float(reward), done, info["anchor"], info["won"], info["is_action_valid"]))
            if done:
                break
        return trace
    finally:
        env.close()


def _skyrl(env_class: str, task_id: str, seed: int, actions: list[str], env_config: Any = None) -> list[Any]:
    env = skyrl_gym.make(
        env_class, env_config=env_config or {}, extras={"extra_info": {"task_id": task_id, "seed": seed}}
    )
    try:
        messages, metadata = env.init(PROMPT)
        assert messages[0] == PROMPT[0] and messages[-1]["role"] == "user"
        trace: list[Any] = [(metadata["anchor"], metadata["task_id"])]
        for action in actions:
            out = env.step(_wrap(action))
            meta = out["metadata"]
            assert out["postprocessed_action"] == action
            # The message shows the observation the env gave (then, where the env lists them,
            # the admissible actions); the raw observation is compared through it.
            obs = out["observations"][0]["content"] if out["observations"] else None
            trace.append(
                (obs, out["reward"], out["done"], meta["anchor"], meta["won"], meta["is_action_valid"])
            )
            if out["done"]:
                assert out["observations"] == []
                break
        return trace
    finally:
        env.close()


def _same(native: list[Any], skyrl: list[Any]) -> None:
    assert skyrl[0] == native[0]
    assert len(skyrl) == len(native)
    for mine, theirs in zip(skyrl[1:], native[1:], strict=True):
        obs, *rest = mine
        assert rest == list(theirs[1:])
        assert obs is None if rest[1] else obs.startswith(theirs[0])


def test_register_envhub_envs_registers_every_local_env() -> None:
    ids = register_envhub_envs()
    assert skyrl_id("envhub/ALFWorld-v0") in ids and skyrl_id("envhub/TimeSeries-v0") in ids
    assert all(i in skyrl_gym.registry for i in ids)
    assert "envhub-Remote-v0" not in ids
    assert register_envhub_envs() == ids  # idempotent


def test_time_series_through_skyrl_make_matches_native() -> None:
    register_envhub_envs()
    task = envhub.make("envhub/TimeSeries-v0").unwrapped.task_ids("test")[3]  # type: ignore[attr-defined]
    native = _native("envhub/TimeSeries-v0", task, 5, TS_SCRIPT)
    mine = _skyrl("envhub-TimeSeries-v0", task, 5, TS_SCRIPT)
    _same(native, mine)
    assert mine[-1][2] is True  # the answer ended the episode
    assert [step[-1] for step in mine[1:]] == [True, True, False, True, True]


def test_alfworld_walkthrough_through_skyrl_make_wins_like_native() -> None:
    if not envhub.envs.resolve("envhub/ALFWorld-v0").status().available:
        pytest.fail("ALFWorld's data must be available here (the shipped games)")
    register_envhub_envs()
    env = envhub.make("envhub/ALFWorld-v0")
    task = env.unwrapped.task_ids()[0]  # type: ignore[attr-defined]
    obs, info = env.reset(seed=0, options={"task_id": task})
    policy = WalkthroughPolicy(0)
    policy.reset(obs, info)
    actions, done = [], False
    while not done:
        action = policy.act(obs, info)
        actions.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    env.close()
    native = _native("envhub/ALFWorld-v0", task, 0, actions)
    mine = _skyrl("envhub-ALFWorld-v0", task, 0, actions)
    _same(native, mine)
    assert mine[-1][4] is True  # won


@pytest.fixture(scope="module")
def ts_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1)) as running:
        yield running


def test_remote_env_config_plays_on_the_server_like_native(ts_server: RunningServer) -> None:
    register_envhub_envs()
    task = envhub.make("envhub/TimeSeries-v0").unwrapped.task_ids("test")[1]  # type: ignore[attr-defined]
    native = _native("envhub/TimeSeries-v0", task, 2, TS_SCRIPT)
    mine = _skyrl("envhub-TimeSeries-v0", task, 2, TS_SCRIPT, env_config={"base_url": ts_server.base_url})
    _same(native, mine)


def test_omegaconf_env_config_and_metrics() -> None:
    omegaconf = pytest.importorskip("omegaconf")
    register_envhub_envs()
    config = omegaconf.OmegaConf.create({"env_kwargs": {"images": False}, "projection": "none"})
    env = skyrl_gym.make("envhub-TimeSeries-v0", env_config=config, extras={"seed": 1})
    env.init([])
    out = env.step("answer[normal]")  # projection "none": the text goes to the env as it is
    assert out["done"] and out["postprocessed_action"] == "answer[normal]"
    assert env.get_metrics()["steps"] == 1
    env.close()


def test_bad_text_is_an_invalid_step_not_an_error() -> None:
    register_envhub_envs()
    env = skyrl_gym.make("envhub-TimeSeries-v0", env_config={}, extras={"seed": 0})
    env.init([])
    out = env.step("no tags at all")
    assert out["metadata"]["is_action_valid"] is False
    assert out["metadata"]["projection_reason"]
    env.close()


def test_missing_env_id_says_how_to_fix() -> None:
    with pytest.raises(ConfigurationError, match="register_envhub_envs"):
        EnvhubTextEnv(env_config={}, extras={})

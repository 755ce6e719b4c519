"""Every registered env honours the contract: check_env, determinism, docstring, listing.

These tests run over the whole catalogue, so an env added to it is checked automatically.
Envs whose data is not available here are skipped with the reason `envhub list` gives (a failure
under CI=true; tests/envs/conftest.py provides generated UCR data for TimeSeriesUCR-v0).
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import envhub
from envhub.core import INFO_KEYS, AgentEnv, UnknownEnvError
from envhub.core.policy import RandomPolicy
from envhub.core.registry import load_entry_point
from envhub.envs.catalog import CATALOG
from tests.needs import missing as skip_missing
from tests.needs import require_data

SECTIONS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Rewards",
    "Starting State",
    "Episode End",
    "Information",
    "Arguments",
    "Reference",
    "Version History",
)


def _available(spec_id: str) -> None:
    require_data(next(s for s in CATALOG if s.id == spec_id))


@pytest.mark.parametrize("spec", CATALOG, ids=lambda s: s.id)
def test_docstring_has_every_contract_section(spec: Any) -> None:
    try:
        cls = load_entry_point(spec.entry_point)
    except ImportError as exc:
        skip_missing(f"{spec.id}'s module ({exc})", extra="all")
    doc = cls.__doc__ or ""
    missing = [s for s in SECTIONS if not re.search(rf"^\s*#*\s*{s}\b", doc, re.MULTILINE)]
    assert not missing, f"{cls.__name__} docstring lacks sections {missing}"


@pytest.mark.parametrize("spec", CATALOG, ids=lambda s: s.id)
def test_registered_with_gymnasium(spec: Any) -> None:
    assert spec.id in gymnasium.registry
    assert gymnasium.registry[spec.id].max_episode_steps == spec.max_episode_steps


def _local_envs() -> list[Any]:
    return [s for s in CATALOG if "Remote" not in s.id]


@pytest.mark.parametrize("spec", _local_envs(), ids=lambda s: s.id)
def test_check_env_passes(spec: Any) -> None:
    _available(spec.id)
    env = envhub.make(spec.id)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("spec", _local_envs(), ids=lambda s: s.id)
def test_envhub_check_env_passes(spec: Any) -> None:
    """envhub's public checker: Gymnasium's checks plus the contract (determinism, anchors, ...)."""
    _available(spec.id)
    env = envhub.make(spec.id)
    try:
        slow = spec.demo_episodes is not None  # real engines and browsers: fewer steps, same checks
        envhub.check_env(env, steps=2 if slow else 5, tasks=1 if slow else 2)
    finally:
        env.close()


def _rollout(env: gymnasium.Env[Any, Any], task_id: str, seed: int, steps: int) -> list[Any]:
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    trace: list[Any] = [obs, {k: info[k] for k in INFO_KEYS}]
    policy = RandomPolicy(seed)
    policy.reset(obs, info)
    for _ in range(steps):
        action = policy.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((action, obs, float(reward), terminated, truncated, {k: info[k] for k in INFO_KEYS}))
        if terminated or truncated:
            break
    return trace


@pytest.mark.parametrize("spec", _local_envs(), ids=lambda s: s.id)
def test_same_task_id_gives_same_trajectory_across_instances(spec: Any) -> None:
    _available(spec.id)
    first, second = envhub.make(spec.id), envhub.make(spec.id)
    try:
        task_ids = list(first.unwrapped.task_ids()[:2])  # type: ignore[attr-defined]
        # The second instance plays another task first: nothing may leak between episodes.
        _rollout(second, task_ids[-1], seed=99, steps=3)
        assert _rollout(first, task_ids[0], seed=5, steps=6) == _rollout(second, task_ids[0], seed=5, steps=6)
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("spec", _local_envs(), ids=lambda s: s.id)
def test_every_info_has_the_contract_keys(spec: Any) -> None:
    _available(spec.id)
    env = envhub.make(spec.id)
    try:
        trace = _rollout(env, env.unwrapped.task_ids()[0], seed=0, steps=3)  # type: ignore[attr-defined]
        assert isinstance(env.unwrapped, AgentEnv)
        assert set(trace[1]) == set(INFO_KEYS)
    finally:
        env.close()


def test_list_envs_reports_every_catalogue_entry() -> None:
    rows = {row.id: row for row in envhub.list_envs()}
    assert set(rows) == {s.id for s in CATALOG}
    for row in rows.values():
        assert row.data_available or row.how_to_get, (
            f"{row.id} is unavailable but says nothing about how to get data"
        )


def test_make_accepts_short_names_family_names_and_entry_points() -> None:
    assert envhub.make("TimeSeries-v0").spec.id == "envhub/TimeSeries-v0"  # type: ignore[union-attr]
    assert envhub.make("timeseries").spec.id == "envhub/TimeSeries-v0"  # type: ignore[union-attr]
    env = envhub.make("envhub.envs.timeseries.env:TimeSeriesEnv", images=False)
    assert type(env).__name__ == "TimeSeriesEnv"


def test_resolve_is_the_one_name_resolver() -> None:
    from envhub.envs import resolve, resolve_all

    spec = resolve("envhub/WebShop-v0")
    assert resolve("WebShop-v0") is spec and resolve("webshop") is spec  # a family: its first entry
    assert [s.id for s in resolve_all("webshop")] == ["envhub/WebShop-v0", "envhub/WebShopHTML-v0"]
    assert resolve("envhub.envs.search.env:SearchQAEnv").entry_point == "envhub.envs.search.env:SearchQAEnv"
    for bad in ("envhub/Nope-v0", "WebShop", "not_a_module:Nope"):
        with pytest.raises(UnknownEnvError):
            resolve(bad)


def test_make_unknown_id_raises_with_known_ids() -> None:
    with pytest.raises(UnknownEnvError, match="envhub/TimeSeries-v0"):
        envhub.make("envhub/Nope-v0")
    with pytest.raises(UnknownEnvError):
        envhub.make("not_a_module:Nope")


def test_gymnasium_make_works_after_importing_envhub() -> None:
    env = gymnasium.make("envhub/TimeSeries-v0", images=False)
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str) and info["task_id"].startswith("train-")

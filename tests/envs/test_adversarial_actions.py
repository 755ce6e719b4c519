"""Every registered env survives any action string, and stepping after the end is defined.

Hypothesis draws arbitrary text (any Unicode, control characters, tag-like fragments, huge
strings) and feeds it to every env whose data is available. No action may raise; each answer
is a string observation with the contract's info keys.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envhub
from envhub.core import INFO_KEYS
from envhub.envs.catalog import CATALOG
from tests.needs import require_data

FRAGMENTS = [
    "<action>",
    "</action>",
    "<search>",
    "</search>",
    "<answer>",
    "</answer>",
    "<think>",
    "<tool_call>",
    "</tool_call>",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    '"',
    ":",
    "search[",
    "click[",
    "answer[",
    "stats[",
    "go to ",
    "take ",
    "###STOP###",
    "buy now",
    "\x00",
    "\n",
    "🙂",
    "中文",
    "-1",
    "99999999999999999999",
]
ACTIONS = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join),
    st.builds(lambda s, n: s * n, st.sampled_from(FRAGMENTS), st.integers(1, 2000)),
)
# Real browsers and engines are slow: fewer examples there, the same properties.
FAST = [s for s in CATALOG if "Remote" not in s.id and s.demo_episodes is None]
SLOW = [s for s in CATALOG if "Remote" not in s.id and s.demo_episodes is not None]


def _check(env: Any, actions: list[str]) -> None:
    obs, info = env.reset(options={"task_id": env.unwrapped.task_ids()[0]})
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and set(INFO_KEYS) <= set(info)
        assert isinstance(float(reward), float)
        if terminated or truncated:
            obs, info = env.reset(options={"task_id": env.unwrapped.task_ids()[0]})


def _make(spec: Any) -> Any:
    require_data(spec)
    return envhub.make(spec.id)


class _AnswerFirstClass:
    """Ends a TimeSeriesUCR-v0 episode at once (the catalogue gives that env no demo policy)."""

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._classes = info["classes"]

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return f"answer[{self._classes[0]}]"


#: Policies for specs without a ``demo_policy``, to reach a terminal state.
_TERMINATING = {"envhub/TimeSeriesUCR-v0": _AnswerFirstClass}


@pytest.mark.parametrize("spec", FAST, ids=lambda s: s.id)
def test_any_action_string_is_answered_not_raised(spec: Any) -> None:
    env = _make(spec)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(ACTIONS, min_size=1, max_size=4))
    def run(actions: list[str]) -> None:
        _check(env, actions)

    try:
        run()
    finally:
        env.close()


@pytest.mark.parametrize("spec", SLOW, ids=lambda s: s.id)
def test_any_action_string_is_answered_not_raised_slow_envs(spec: Any) -> None:
    env = _make(spec)
    try:
        _check(env, ["", "\x00" * 10, "🙂" * 5000, "click[", "go to <action>]]", "take 99999999999999999999"])
    finally:
        env.close()


@pytest.mark.parametrize("spec", FAST, ids=lambda s: s.id)
def test_stepping_after_the_end_repeats_the_final_state(spec: Any) -> None:
    env = _make(spec).unwrapped  # no TimeLimit: play until the env itself terminates
    if spec.demo_policy:
        policy = envhub.core.load_entry_point(spec.demo_policy)(0)
    else:
        assert spec.id in _TERMINATING, f"{spec.id} has no demo_policy: add one to _TERMINATING"
        policy = _TERMINATING[spec.id]()
    obs, info = env.reset(options={"task_id": env.task_ids()[0]})
    policy.reset(obs, info)
    for _ in range(200):
        obs, _, terminated, _, info = env.step(policy.act(obs, info))
        if terminated:
            break
    else:
        pytest.fail(f"{spec.id}: the built-in policy did not finish an episode in 200 steps")
    again = env.step("anything")
    assert again[0] == obs and again[1] == 0.0 and again[2] is True
    assert again[4]["is_action_valid"] is False and "reset()" in again[4]["error"]
    env.close()

"""The AgentEnv contract, on a minimal env defined here."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from envhub.core import INFO_KEYS, AgentEnv, ConfigurationError, Outcome, ResetNeededError, UnknownTaskError


class CounterEnv(AgentEnv):
    """Counts 'inc' actions; 'done' ends the episode and wins when the count is 2."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.count = 0

    def _task_ids(self, split: str) -> Sequence[str]:
        return [f"{split}-{i}" for i in range(3)]

    def _reset_task(self, task_id: str) -> Outcome:
        self.count = int(task_id.rpartition("-")[2])
        return Outcome(f"count={self.count}")

    def _step(self, action: str) -> Outcome:
        if action == "inc":
            self.count += 1
            return Outcome(f"count={self.count}")
        if action == "done":
            return Outcome("bye", terminated=True, won=self.count == 2, reward=float(self.count == 2))
        return Outcome(f"unknown action {action!r}", is_action_valid=False, anchor=f"count={self.count}")


def test_reset_with_task_id_starts_that_task() -> None:
    env = CounterEnv()
    obs, info = env.reset(options={"task_id": "test-1"})
    assert obs == "count=1"
    assert info["task_id"] == "test-1"
    assert set(INFO_KEYS) <= set(info)


def test_reset_without_task_id_draws_from_default_split_reproducibly() -> None:
    first = CounterEnv().reset(seed=7)[1]["task_id"]
    assert first in CounterEnv().task_ids("train")
    assert all(CounterEnv().reset(seed=7)[1]["task_id"] == first for _ in range(3))


def test_reset_split_option_draws_from_that_split() -> None:
    _, info = CounterEnv().reset(seed=1, options={"split": "test"})
    assert info["task_id"].startswith("test-")


def test_unknown_task_raises_with_examples() -> None:
    with pytest.raises(UnknownTaskError, match="train-0"):
        CounterEnv().reset(options={"task_id": "nope"})


def test_unknown_split_raises_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="no split 'dev'"):
        CounterEnv().task_ids("dev")


def test_step_before_reset_raises_reset_needed() -> None:
    with pytest.raises(ResetNeededError):
        CounterEnv().step("inc")


@pytest.mark.parametrize("action", [b"inc", 42, None, object(), "x" * 100_000])
def test_any_action_is_coerced_not_rejected(action: object) -> None:
    env = CounterEnv()
    env.reset(options={"task_id": "train-0"})
    obs, reward, terminated, truncated, info = env.step(action)
    assert isinstance(obs, str)
    assert truncated is False
    assert info["is_action_valid"] is (action == b"inc")


def test_bytes_action_is_decoded() -> None:
    env = CounterEnv()
    env.reset(options={"task_id": "train-0"})
    assert env.step(b"inc")[0] == "count=1"


def test_step_after_termination_repeats_final_state_with_zero_reward() -> None:
    env = CounterEnv()
    env.reset(options={"task_id": "train-2"})
    final = env.step("done")
    assert final[1] == 1.0 and final[2] is True
    obs, reward, terminated, truncated, info = env.step("inc")
    assert (obs, reward, terminated, truncated) == (final[0], 0.0, True, False)
    assert info["is_action_valid"] is False
    assert "reset()" in info["error"]
    assert info["won"] is True


def test_info_defaults_anchor_to_observation_and_score_to_won() -> None:
    env = CounterEnv()
    _, info = env.reset(options={"task_id": "train-2"})
    assert info["anchor"] == "count=2"
    _, _, _, _, info = env.step("done")
    assert info["task_score"] == 1.0


def test_invalid_action_keeps_explicit_anchor() -> None:
    env = CounterEnv()
    env.reset(options={"task_id": "train-1"})
    _, _, _, _, info = env.step("jump")
    assert info["anchor"] == "count=1"
    assert info["is_action_valid"] is False


def test_render_ansi_shows_task_step_and_observation() -> None:
    env = CounterEnv(render_mode="ansi")
    env.reset(options={"task_id": "train-0"})
    env.step("inc")
    assert env.render() == "[CounterEnv task=train-0 step=1]\ncount=1"


def test_render_without_mode_warns_and_returns_none() -> None:
    env = CounterEnv()
    env.reset(options={"task_id": "train-0"})
    with pytest.warns(UserWarning, match="render_mode='ansi'"):
        assert env.render() is None


def test_unsupported_render_mode_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="render_mode='human'"):
        CounterEnv(render_mode="human")


def test_spaces_accept_any_unicode_text() -> None:
    env = CounterEnv()
    assert env.action_space.contains("日本語 ✓ \x00")
    assert env.observation_space.contains("")
    assert not env.action_space.contains(b"bytes")

"""``envhub.check_env``: a good env passes; each kind of contract breach is named."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

import envhub
from envhub.core import AgentEnv, ContractViolation, Outcome


class Counter(AgentEnv):
    """Count up to the target of the task. (A minimal env that keeps the contract.)"""

    splits = ("train", "test")
    default_split = "train"

    def __init__(self, *, render_mode: str | None = None) -> None:
        super().__init__(render_mode=render_mode)
        self.value = 0
        self.target = 0

    def _task_ids(self, split: str) -> Sequence[str]:
        return [f"{split}-{k}" for k in range(1, 4)]

    def _outcome(self, valid: bool = True) -> Outcome:
        won = self.value == self.target
        return Outcome(
            observation=f"value {self.value} of {self.target}",
            anchor=f"{self.value}/{self.target}",
            reward=1.0 if won else 0.0,
            terminated=won,
            won=won,
            is_action_valid=valid,
            admissible_actions=["inc"],
        )

    def _reset_task(self, task_id: str) -> Outcome:
        self.value, self.target = 0, int(task_id.rpartition("-")[2])
        return self._outcome()

    def _step(self, action: str) -> Outcome:
        if action.strip() != "inc":
            return self._outcome(valid=False)
        self.value += 1
        return self._outcome()


class NoisyStart(Counter):
    def _reset_task(self, task_id: str) -> Outcome:
        super()._reset_task(task_id)
        self.value = random.randint(-(10**9), -1)  # not from the task id: groups would not start identical
        return self._outcome()


class Fragile(Counter):
    def _step(self, action: str) -> Outcome:
        if "\x00" in action:
            raise ValueError("NUL in action")
        return super()._step(action)


class LyingAdmissible(Counter):
    def _outcome(self, valid: bool = True) -> Outcome:
        out = super()._outcome(valid)
        out.admissible_actions = ["increment"]  # listed, but _step only takes "inc"
        return out


class NoAnchor(Counter):
    def _info(self, outcome: Outcome) -> dict[str, Any]:
        info = super()._info(outcome)
        del info["anchor"]
        return info


def test_a_good_env_passes() -> None:
    envhub.check_env(Counter())


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (NoisyStart, "another seed gives another initial state"),
        (Fragile, "raised ValueError: NUL in action"),
        (LyingAdmissible, "the admissible action 'increment' was not valid"),
        (NoAnchor, "info lacks 'anchor'"),
    ],
)
def test_each_breach_is_named(cls: type[Counter], message: str) -> None:
    with pytest.raises(ContractViolation) as caught:
        envhub.check_env(cls())
    assert message in str(caught.value), str(caught.value)
    assert cls.__name__ in str(caught.value)


def test_gymnasium_warnings_count_as_violations() -> None:
    class WrongSpace(Counter):
        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
            obs, info = super().reset(seed=seed, options=options)
            return obs.encode(), info  # bytes: not in the text observation space

    with pytest.raises(ContractViolation, match="gymnasium"):
        envhub.check_env(WrongSpace())


class FailingTask(Counter):
    def _reset_task(self, task_id: str) -> Outcome:
        if task_id.endswith("-2"):
            raise KeyError("no such level file")
        return super()._reset_task(task_id)


class FailingStep(Counter):
    def _step(self, action: str) -> Outcome:
        if action == "inc":
            raise RuntimeError("engine crashed")
        return super()._step(action)


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (FailingTask, "reset(task_id='train-2') raised KeyError"),
        (FailingStep, "raised RuntimeError: engine crashed"),
    ],
)
def test_an_env_that_raises_is_a_named_violation_not_a_crash(cls: type[Counter], message: str) -> None:
    with pytest.raises(ContractViolation) as caught:
        envhub.check_env(cls(), gymnasium_checks=False)
    assert message in str(caught.value), str(caught.value)


def test_random_transitions_are_caught_without_gymnasiums_checker() -> None:
    class NoisyStep(Counter):
        def _step(self, action: str) -> Outcome:
            out = super()._step(action)
            out.observation += f" (noise {random.random()})"
            return out

    with pytest.raises(ContractViolation, match="the same actions gave different transitions"):
        envhub.check_env(NoisyStep(), gymnasium_checks=False)

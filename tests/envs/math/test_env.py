"""The Math env: one step, the last boxed answer scored against the gold, bad answers never raise."""

from __future__ import annotations

from typing import Any

import pytest

import envhub
from envhub.envs.math.env import NO_ANSWER_FEEDBACK


@pytest.fixture
def env() -> Any:
    made = envhub.make("envhub/Math-v0")
    yield made
    made.close()


def _gold(env: Any, task_id: str) -> str:
    env.reset(options={"task_id": task_id})
    return str(env.unwrapped.task.answer)


def test_the_right_answer_wins_and_ends_the_episode(env: Any) -> None:
    gold = _gold(env, "test-00003")
    obs, reward, terminated, _, info = env.step(f"<think>work</think> So: \\boxed{{{gold}}}.")
    assert (obs, reward, terminated) == ("", 1.0, True)
    assert info["won"] and info["is_action_valid"] and info["task_score"] == 1.0
    assert (info["answer"], info["gold"], info["data_source"]) == (gold, gold, "envhub-arithmetic")


def test_a_wrong_answer_ends_the_episode_with_nothing(env: Any) -> None:
    gold = _gold(env, "test-00003")
    _, reward, terminated, _, info = env.step(f"\\boxed{{{int(gold) + 1}}}")
    assert (reward, terminated, info["won"], info["is_action_valid"]) == (0.0, True, False, True)


def test_an_answer_inside_the_thinking_only_is_no_answer(env: Any) -> None:
    gold = _gold(env, "test-00003")
    obs, reward, terminated, truncated, info = env.step(f"<think>\\boxed{{{gold}}}</think> done")
    assert (obs, reward, info["won"], info["is_action_valid"], info["answer"]) == (
        NO_ANSWER_FEEDBACK,
        0.0,
        False,
        False,
        None,
    )
    # One step as registered: the time limit ends the episode (the authors' env is done too).
    assert not terminated and truncated


def test_without_the_step_limit_an_answerless_step_can_be_followed_by_an_answer() -> None:
    env = envhub.make("envhub/Math-v0", max_episode_steps=3)
    gold = _gold(env, "test-00001")
    assert env.step("I am not sure")[2:4] == (False, False)
    assert env.step(f"\\boxed{{{gold}}}")[1:3] == (1.0, True)
    env.close()


def test_the_same_task_reads_the_same_and_the_anchor_is_the_problem(env: Any) -> None:
    obs, info = env.reset(options={"task_id": "train-00007"})
    again, _ = env.reset(options={"task_id": "train-00007"})
    assert obs == again == info["anchor"] and info["admissible_actions"] is None
    assert info["kind"] in {"add-subtract", "multiply", "divide", "change", "rate", "ages", "leftover"}

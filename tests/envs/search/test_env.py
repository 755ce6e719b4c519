"""SearchQAEnv: Search-R1 transitions, rewards, turn limit, info and anchors."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import pytest

import envhub
from envhub.core.errors import ConfigurationError
from envhub.envs.search.env import SearchQAEnv
from envhub.envs.search.parsing import INVALID_ACTION_FEEDBACK


@pytest.fixture
def env(world_dir: Path, tmp_path: Path) -> SearchQAEnv:
    return SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "index")


def _task(env: SearchQAEnv, hops: int) -> str:
    return next(q.id for q in env._dataset.splits["test"] if q.hops == hops)


def test_reset_shows_the_question_and_anchors_on_it(env: SearchQAEnv) -> None:
    task = _task(env, 1)
    obs, info = env.reset(options={"task_id": task})
    assert obs == env.question.question and obs.endswith("?")
    assert info["anchor"] == obs
    assert info["n_searches"] == 0 and info["retrieved_ids"] == [] and info["supporting_recall"] == 0.0


def test_searching_the_right_query_then_answering_wins(env: SearchQAEnv) -> None:
    obs, _ = env.reset(options={"task_id": _task(env, 1)})
    question = env.question
    obs, reward, terminated, truncated, info = env.step(f"<think>look it up</think><search>{obs}</search>")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert obs.startswith("\n\n<information>Doc 1(Title: ") and obs.endswith("</information>\n\n")
    assert info["supporting_hit"] and info["supporting_recall"] == 1.0 and info["n_searches"] == 1
    assert len(info["retrieved_ids"]) == 3
    obs, reward, terminated, truncated, info = env.step(
        f"<answer> {question.golden_answers[0].upper()}. </answer>"
    )
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["won"] and info["em"] == 1.0 and info["task_score"] == 1.0 and obs == ""


def test_wrong_answer_loses(env: SearchQAEnv) -> None:
    env.reset(options={"task_id": _task(env, 1)})
    _, reward, terminated, _, info = env.step("<answer>definitely not it</answer>")
    assert (reward, terminated, info["won"]) == (0.0, True, False)
    assert info["is_action_valid"] and info["answer"] == "definitely not it"


def test_invalid_action_gets_corrective_text_and_keeps_the_state(env: SearchQAEnv) -> None:
    obs0, info0 = env.reset(options={"task_id": _task(env, 2)})
    obs, reward, terminated, _, info = env.step("I would search for it")
    assert obs == INVALID_ACTION_FEEDBACK and reward == 0.0 and not terminated
    assert not info["is_action_valid"] and info["parse_error"]
    assert info["anchor"] == info0["anchor"]


def test_anchor_after_search_is_the_normalised_information(
    env: SearchQAEnv, world_dir: Path, tmp_path: Path
) -> None:
    task = _task(env, 2)
    env.reset(options={"task_id": task})
    _, _, _, _, info = env.step("<search>mayor river</search>")
    anchor = info["anchor"]
    assert anchor == anchor.lower() and "<" not in anchor and "doc 1title" in anchor
    _, _, _, _, after_invalid = env.step("oops")
    assert after_invalid["anchor"] == anchor
    # another instance reaching the same state has the same anchor, whatever its history
    other = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "index")
    other.reset(options={"task_id": task})
    other.step("<answer")
    assert other.step("<search>mayor   river</search>")[4]["anchor"] == anchor


def test_max_turns_truncates_through_time_limit() -> None:
    env = gymnasium.make("envhub/SearchQA-v0")
    obs, _ = env.reset(seed=0)
    outcomes = [env.step(f"<search>{obs}</search>") for _ in range(4)]
    assert [o[3] for o in outcomes] == [False, False, False, True]  # truncated at turn 4
    assert all(not o[2] and o[1] == 0.0 for o in outcomes)
    assert not outcomes[-1][4]["won"]
    env.close()


@pytest.mark.parametrize(
    ("reward", "answer", "expected"), [("subem", "it was in {g} indeed", 1.0), ("f1", "{g} xyz", None)]
)
def test_reward_options(
    world_dir: Path, tmp_path: Path, reward: str, answer: str, expected: float | None
) -> None:
    env = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "i", reward=reward)
    env.reset(options={"task_id": _task(env, 1)})
    golden = env.question.golden_answers[0]
    _, value, _, _, info = env.step(f"<answer>{answer.format(g=golden)}</answer>")
    assert value == (expected if expected is not None else info["f1"])
    assert 0.0 < value <= 1.0 and not info["won"] and info["task_score"] == value


def test_step_after_the_answer_repeats_final_state(env: SearchQAEnv) -> None:
    env.reset(options={"task_id": _task(env, 1)})
    env.step("<answer>x</answer>")
    obs, reward, terminated, _, info = env.step("<search>more</search>")
    assert (obs, reward, terminated, info["is_action_valid"]) == ("", 0.0, True, False)


def test_same_task_same_transitions_across_instances(world_dir: Path, tmp_path: Path) -> None:
    actions = ["<search>founded year</search>", "bad", "<search>mayor</search>", "<answer>1900</answer>"]
    traces = []
    for _ in range(2):
        env = envhub.make("envhub/SearchQA-v0", data_dir=world_dir, index_dir=tmp_path / "i")
        trace = [env.reset(options={"task_id": "test-00003"})]
        trace += [env.step(a) for a in actions]
        traces.append(trace)
        env.close()
    assert traces[0] == traces[1]


def test_bad_configuration_raises_a_clear_error(world_dir: Path) -> None:
    with pytest.raises(ConfigurationError, match="reward="):
        SearchQAEnv(data_dir=world_dir, reward="bleu")
    with pytest.raises(ConfigurationError, match="topk"):
        SearchQAEnv(data_dir=world_dir, topk=0)
    with pytest.raises(ConfigurationError, match="retriever_url"):
        SearchQAEnv(data_dir=world_dir, retriever="remote")
    with pytest.raises(ConfigurationError, match="Unknown retriever"):
        SearchQAEnv(data_dir=world_dir, retriever="splade")


def test_topk_controls_the_number_of_passages(world_dir: Path, tmp_path: Path) -> None:
    env = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "i", topk=5)
    obs, _ = env.reset(seed=1)
    obs, *_, info = env.step(f"<search>{obs}</search>")
    assert len(info["retrieved_ids"]) == 5 and "Doc 5(Title:" in obs

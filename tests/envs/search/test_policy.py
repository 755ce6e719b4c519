"""Built-in policies: the scripted multi-hop reader wins, the baseline does not."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from envhub.envs.search.env import SearchQAEnv
from envhub.envs.search.policy import FirstTitlePolicy, ScriptedSearchPolicy, parse_question, team_searcher
from envhub.envs.search.world import RELATIONS


def _play(env: SearchQAEnv, policy: object, task_id: str, max_turns: int = 4) -> dict[str, object]:
    obs, info = env.reset(options={"task_id": task_id})
    policy.reset(obs, info)  # type: ignore[attr-defined]
    for _ in range(max_turns):
        obs, _, terminated, _, info = env.step(policy.act(obs, info))  # type: ignore[attr-defined]
        if terminated:
            break
    return info


def test_parse_question_follows_nested_phrases() -> None:
    plan = parse_question("In which year was the founder of the company that employs Alena Vostrik born?")
    assert plan is not None and plan.entity == "Alena Vostrik"
    assert [r.name for r in plan.chain] == ["employer", "founder", "born_year"]
    assert parse_question("Who wrote Hamlet?") is None


def test_every_relation_question_is_recognised() -> None:
    for relation in RELATIONS:
        plan = parse_question(relation.question.format(s="Velmora Dynamics"))
        assert plan is not None and plan.chain[-1] == relation


def test_scripted_policy_wins_generated_questions_of_every_hop_count(world_dir: Path, tmp_path: Path) -> None:
    env = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "i")
    results = {}
    for question in env._dataset.splits["test"]:
        info = _play(env, ScriptedSearchPolicy(0), question.id)
        results.setdefault(question.hops, []).append(info["won"])
    assert set(results) == {1, 2, 3}
    assert sum(results[1]) / len(results[1]) >= 0.9
    assert sum(map(sum, results.values())) / sum(map(len, results.values())) >= 0.8


def test_scripted_policy_answers_on_the_last_turn_at_the_latest(world_dir: Path, tmp_path: Path) -> None:
    env = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "i")
    task = next(q.id for q in env._dataset.splits["test"] if q.hops == 3)
    info = _play(env, ScriptedSearchPolicy(0, max_turns=2), task, max_turns=2)
    assert info["action_type"] == "answer"


def test_first_title_baseline_answers_after_one_search(world_dir: Path, tmp_path: Path) -> None:
    env = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "i")
    info = _play(env, FirstTitlePolicy(0), env.task_ids("test")[0])
    assert info["action_type"] == "answer" and info["n_searches"] == 1


def test_the_reader_searches_the_question_first_unless_told_to_search_the_first_hop() -> None:
    question = "In which city was the founder of Velmora Dynamics born?"
    demo, hop_first = ScriptedSearchPolicy(0), ScriptedSearchPolicy(0, question_first=False)
    for policy in (demo, hop_first):
        policy.reset(question, {})
    assert demo.act(question, {}) == f"<search>{question}</search>"
    assert hop_first.act(question, {}) == "<search>Velmora Dynamics was established by</search>"


def test_the_team_searcher_copies_the_first_hop_not_the_whole_question() -> None:
    question = "In which year was Ines Vaendpernend born?"
    prompt = SimpleNamespace(metadata={"observations": [question]})
    assert team_searcher(prompt).endswith("<search>Ines Vaendpernend was born in the year</search>")
    # An unknown phrasing has no hop to search: the question itself.
    prompt = SimpleNamespace(metadata={"observations": ["Who wrote Hamlet?"]})
    assert team_searcher(prompt).endswith("<search>Who wrote Hamlet?</search>")

"""The blind-policy ceiling (envhub.train.blind) is exact, and the learning task leaves room above it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import envhub
from envhub.envs.sokoban.room import ACTIONS
from envhub.train.blind import blind_ceiling, recipe_blind_ceiling
from envhub.train.config import load_config

TRAINERS = Path(__file__).resolve().parents[2] / "trainers"
LEARNING_RECIPE = TRAINERS / "gigpo_sokoban_onepush.yaml"
MOVES = (*ACTIONS, "still")


def _sokoban(**kwargs: object) -> Any:
    return envhub.make("envhub/Sokoban-v0", **kwargs)


def test_the_corridor_room_is_won_blind_once_a_second_move_is_allowed() -> None:
    # One row of three cells, box between player and target on either side: one move wins the
    # rooms of its side; "right, left" wins every room (a bump into the wall moves nothing).
    ids = [f"room-{s}" for s in range(1_000_000, 1_000_040)]
    rooms = [_sokoban(dim_room=[3, 5]) for _ in range(1)]
    env = rooms[0]
    right = 0
    for task in ids:
        env.reset(options={"task_id": task})
        right += env.unwrapped.room.player[1] == 1
    one = blind_ceiling(lambda: _sokoban(dim_room=[3, 5]), ids, max_steps=1, actions=MOVES)
    assert one.success == max(right, len(ids) - right) / len(ids)
    assert one.sequences == 5
    two = blind_ceiling(lambda: _sokoban(dim_room=[3, 5]), ids, max_steps=2, actions=MOVES)
    assert two.success == 1.0 and set(two.sequence) == {"left", "right"}


def test_one_push_rooms_are_won_blind_only_in_the_majority_direction() -> None:
    ids = [f"room-{s}" for s in range(1_000_000, 1_000_064)]
    env = _sokoban(dim_room=[3, 7], rooms="one-push")
    sides = {"left": 0, "right": 0}
    for task in ids:
        env.reset(options={"task_id": task})
        room = env.unwrapped.room
        (box,) = room.boxes
        sides["right" if box[1] > room.player[1] else "left"] += 1
    for steps in (1, 2, 3):
        ceiling = blind_ceiling(
            lambda: _sokoban(dim_room=[3, 7], rooms="one-push"), ids, max_steps=steps, actions=MOVES
        )
        if steps == 1:
            assert ceiling.success == max(sides.values()) / len(ids)
        assert ceiling.success >= max(sides.values()) / len(ids)
        print(steps, ceiling.describe())


def test_the_learning_recipe_leaves_a_margin_of_03_above_the_blind_ceiling() -> None:
    """The learned greedy success must beat the blind ceiling by 0.3 and stay reachable (<= 0.95)."""
    config = load_config(LEARNING_RECIPE, {"model.path": "unused"})
    ceiling = recipe_blind_ceiling(config)
    print(ceiling.describe())
    assert ceiling.success + 0.3 <= 0.95, ceiling.describe()


def test_the_training_cli_prints_the_blind_ceiling_beside_the_learned_greedy_success(tmp_path: Path) -> None:
    from rich.console import Console

    from envhub.train.cli import _print_learning_check
    from envhub.train.trainer import IterationResult, TrainResult

    config = load_config(LEARNING_RECIPE, {"model.path": "unused"})
    result = TrainResult(
        run_dir=tmp_path,
        policy_version=100,
        validation=[IterationResult(0, {"val/success": 0.0}), IterationResult(100, {"val/success": 0.9})],
    )
    console = Console(record=True, width=120)
    _print_learning_check(console, config, result)
    text = console.export_text()
    ceiling = recipe_blind_ceiling(config)
    assert f"{ceiling.success:.3f}" in text and "best observation-blind" in text
    assert "learned, iteration 100" in text and "0.900" in text
    assert f"{0.9 - ceiling.success:+.3f}" in text


# -- answer envs: Search-QA ----------------------------------------------------------------------

DRMAS_SEARCH = TRAINERS / "drmas_search_scratch.yaml"  # the embedded corpus


def _search_world(root: Path, golden: list[list[str]]) -> Path:
    """A Search-QA dataset of hand-built test questions (and one train question) in ``root``."""
    from envhub.envs.search.data import Passage, Question, write_corpus_jsonl, write_questions_jsonl

    passages = [Passage(id=str(i), title=f"Doc {i}", text=f"Passage {i} about cities.") for i in range(4)]
    write_corpus_jsonl(passages, root / "corpus.jsonl")
    questions = [
        Question(id=f"q{i}", question=f"Question {i}?", golden_answers=tuple(g)) for i, g in enumerate(golden)
    ]
    write_questions_jsonl(questions, root / "test.jsonl")
    write_questions_jsonl(questions[:1], root / "train.jsonl")
    return root


def test_the_search_ceiling_is_the_normalised_golden_answer_most_tasks_accept(tmp_path: Path) -> None:
    from envhub.train.blind import search_blind_ceiling

    golden = [
        ["Paris"],
        ["the Paris.", "Lyon"],  # "the Paris." normalises to "paris": one candidate with "Paris"
        ["PARIS"],
        ["Lyon"],
        ["Nice", "nice!"],  # two golden strings, one key: the task counts once for "nice"
        ["Nice"],
    ]
    root = _search_world(tmp_path, golden)
    ids = [f"q{i}" for i in range(len(golden))]
    ceiling = search_blind_ceiling(lambda: envhub.make("envhub/SearchQA-v0", data_dir=root), ids)
    # "paris" wins q0, q1, q2; "lyon" q1, q3; "nice" q4, q5; any other answer wins nothing.
    assert ceiling.success == 3 / 6
    assert ceiling.sequence == ("<answer>paris</answer>",)
    assert (ceiling.sequences, ceiling.tasks, ceiling.max_steps) == (3, 6, 1)
    # A task subset changes the winner: over q3..q5 "nice" (2 of 3) beats "lyon" (1).
    sub = search_blind_ceiling(lambda: envhub.make("envhub/SearchQA-v0", data_dir=root), ids[3:])
    assert (sub.success, sub.sequence) == (2 / 3, ("<answer>nice</answer>",))


def test_no_fixed_answer_beats_the_search_ceiling_on_the_real_env(tmp_path: Path) -> None:
    """Every golden string, raw and normalised, and a few others, played on every task."""
    from envhub.train.blind import search_blind_ceiling

    golden = [["Paris"], ["the Paris.", "Lyon"], ["PARIS"], ["Lyon"], ["Nice", "nice!"], ["Nice"]]
    root = _search_world(tmp_path, golden)
    ids = [f"q{i}" for i in range(len(golden))]
    ceiling = search_blind_ceiling(lambda: envhub.make("envhub/SearchQA-v0", data_dir=root), ids)
    env = envhub.make("envhub/SearchQA-v0", data_dir=root)
    best = 0
    for answer in {a for g in golden for a in g} | {"paris lyon", "", "a Paris", "Marseille"}:
        won = 0
        for task in ids:
            env.reset(options={"task_id": task})
            env.step("<search>cities</search>")  # searching first changes nothing a blind policy uses
            won += bool(env.step(f"<answer>{answer}</answer>")[4]["won"])
        best = max(best, won)
    env.close()
    assert best / len(ids) == ceiling.success


def test_the_scratch_search_recipe_s_blind_ceiling_on_the_embedded_corpus() -> None:
    """The numbers docs/training.md records (exact: the embedded dataset is fixed)."""
    config = load_config(DRMAS_SEARCH, {"model.path": "unused"})
    held_out = recipe_blind_ceiling(config)  # the 32 validation tasks: the first 32 of test
    assert (held_out.tasks, held_out.success) == (32, 3 / 32)
    assert held_out.sequence == ("<answer>architect</answer>",)
    test = recipe_blind_ceiling(config, split="test", tasks=10_000)
    assert (test.tasks, test.success) == (150, 4 / 150)
    train = recipe_blind_ceiling(config, split="train", tasks=10_000)
    assert (train.tasks, train.success) == (400, 11 / 400)


def test_the_blind_ceiling_command_prints_a_recipe_s_ceiling() -> None:
    from typer.testing import CliRunner

    from envhub.train.cli import blind_app

    result = CliRunner().invoke(
        blind_app, ["--config", str(DRMAS_SEARCH), "--split", "train", "--tasks", "400"], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert "best blind policy: 0.028 on 400 tasks" in result.output


def test_a_blind_ceiling_for_a_family_without_one_is_refused_when_the_recipe_loads() -> None:
    from envhub.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"validation\.blind_ceiling"):
        load_config(
            None, {"env": "envhub/TimeSeries-v0", "model.path": "unused", "validation.blind_ceiling": True}
        )


# -- answer envs: Math -------------------------------------------------------------------------


def test_the_math_ceiling_is_the_gold_number_most_tasks_share(tmp_path: Path) -> None:
    import json

    from envhub.train.blind import math_blind_ceiling

    golds = ["12", "12.0", "1,200", "7", "1200", "7"]  # 12 and 12.0 are one number; 1,200 and 1200 too
    rows = [{"question": f"Problem {i}?", "answer": f"Work.\n#### {g}"} for i, g in enumerate(golds)]
    for split in ("train", "test"):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ids = [f"test-{i:05d}" for i in range(len(golds))]
    ceiling = math_blind_ceiling(lambda: envhub.make("envhub/Math-v0", data_dir=tmp_path), ids)
    # 12: two tasks; 1200: two; 7: two; the first met in task order wins the tie.
    assert (ceiling.success, ceiling.sequence, ceiling.sequences) == (2 / 6, ("\\boxed{12}",), 3)
    sub = math_blind_ceiling(lambda: envhub.make("envhub/Math-v0", data_dir=tmp_path), ids[2:])
    assert (sub.success, sub.sequence) == (2 / 4, ("\\boxed{1200}",))


def test_the_drmas_math_recipe_s_blind_ceiling_on_the_generated_problems() -> None:
    """The numbers docs/training.md records (exact: the generated problems are fixed)."""
    config = load_config(TRAINERS / "drmas_math.yaml", {"model.path": "unused"})
    held_out = recipe_blind_ceiling(config)
    assert (held_out.tasks, held_out.success, held_out.sequence) == (32, 3 / 32, ("\\boxed{2}",))
    test = recipe_blind_ceiling(config, split="test", tasks=10_000)
    assert (test.tasks, test.success) == (200, 8 / 200)
    train = recipe_blind_ceiling(config, split="train", tasks=10_000)
    assert (train.tasks, train.success, train.sequence) == (1000, 37 / 1000, ("\\boxed{6}",))

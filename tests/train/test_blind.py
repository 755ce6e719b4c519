"""The blind-policy ceiling (envhub.train.blind) is exact, and the learning task leaves room above it."""

from __future__ import annotations

from pathlib import Path

import envhub
from envhub.envs.sokoban.room import ACTIONS
from envhub.train.blind import blind_ceiling, recipe_blind_ceiling
from envhub.train.config import load_config

TRAINERS = Path(__file__).resolve().parents[2] / "trainers"
LEARNING_RECIPE = TRAINERS / "gigpo_sokoban_onepush.yaml"
MOVES = (*ACTIONS, "still")


def _sokoban(**kwargs: object) -> object:
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

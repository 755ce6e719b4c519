"""envhub's ALFWorld generator: real-format, solvable games of every task type."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from envhub.core.errors import ConfigurationError
from envhub.envs.alfworld.data import TASK_TYPES, DataRoot, discover_games, embedded_data_dir
from tests.needs import requires_modules

pytestmark = requires_modules("alfworld", "textworld", extra="alfworld")

from envhub.cli import app  # noqa: E402
from envhub.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from envhub.envs.alfworld.fixtures import WheelTables, draft_trial, generate_games, load_scenes  # noqa: E402


def test_cli_generates_a_solvable_game_of_every_task_type_from_a_fresh_seed(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["data", "alfworld", "generate", "--out", str(tmp_path), "--per-type", "1", "--seed", "90210"]
    )
    assert result.exit_code == 0, result.output
    games = discover_games(DataRoot(tmp_path / "json_2.1.1", "argument"), "train")
    assert sorted(g.task_type for g in games) == sorted(TASK_TYPES.values())
    assert (tmp_path / "logic" / "alfred.pddl").is_file() and (tmp_path / "logic" / "alfred.twl2").is_file()
    env = ALFWorldEnv(data_dir=tmp_path)
    for game in games:
        plan = json.loads(game.gamefile.read_text())["walkthrough"]
        env.reset(options={"task_id": game.task_id})
        for command in plan:
            _, reward, terminated, _, info = env.step(command)
        assert terminated and info["won"] and reward == 10.0, game.task_id
    env.close()


def test_same_seed_drafts_identical_games_and_other_seeds_differ() -> None:
    tables, scenes = WheelTables.load(), load_scenes()

    def draft(seed: int) -> list[tuple[str, str, str]]:
        out = []
        for tt, task_type in TASK_TYPES.items():
            for attempt in range(20):
                rng = np.random.default_rng([seed, tt, 0, attempt])
                found = draft_trial(
                    task_type, scenes[int(rng.integers(len(scenes)))], rng, tables, "trial_T0"
                )
                if found is not None:
                    out.append((found.folder, found.problem, json.dumps(found.traj, sort_keys=True)))
                    break
        return out

    first = draft(11)
    assert len(first) == 6 and draft(11) == first
    assert draft(12) != first


def test_generator_writes_eval_splits_under_alfworld_directory_names(tmp_path: Path) -> None:
    games = generate_games(tmp_path, per_type=1, seed=1, split="eval_out_of_distribution", task_types=(1,))
    assert games[0].task_id.startswith("valid_unseen/pick_and_place_simple-")
    root = DataRoot(tmp_path / "json_2.1.1", "argument")
    assert [g.task_id for g in discover_games(root, "eval_out_of_distribution")] == [games[0].task_id]
    assert discover_games(root, "train") == ()


def test_bad_generator_arguments_raise_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError):
        generate_games(tmp_path, per_type=0)
    with pytest.raises(ConfigurationError):
        generate_games(tmp_path, split="valid_seen")
    with pytest.raises(ConfigurationError):
        generate_games(tmp_path, task_types=(7,))


@pytest.mark.parametrize("trial", sorted(embedded_data_dir().glob("*/*/*")), ids=lambda p: p.parent.name)
def test_shipped_games_have_alfworlds_file_format(trial: Path) -> None:
    traj = json.loads((trial / "traj_data.json").read_text())
    game = json.loads((trial / "game.tw-pddl").read_text())
    problem = (trial / "initial_state.pddl").read_text()
    assert traj["task_type"] == trial.parent.name.split("-")[0]
    assert set(traj["pddl_params"]) == {
        "object_target",
        "parent_target",
        "toggle_target",
        "mrecep_target",
        "object_sliced",
    }
    assert traj["turk_annotations"]["anns"][0]["task_desc"]
    assert set(game) == {"pddl_domain", "grammar", "pddl_problem", "solvable", "walkthrough"}
    assert game["solvable"] is True and 0 < len(game["walkthrough"]) <= 40
    assert game["pddl_problem"] == problem and "(:domain alfred)" in problem and "(:goal" in problem
    assert "(define (domain alfred)" in game["pddl_domain"] and "UNKNOWN GOAL" not in game["grammar"]

"""ALFWorld game discovery: ALFWorld's filters, verl-agent's split names, where data comes from."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from envhub.core.errors import ConfigurationError, DataNotFoundError
from envhub.envs.alfworld._engine import import_alfworld
from envhub.envs.alfworld.data import (
    DataRoot,
    data_status,
    discover_games,
    embedded_data_dir,
    resolve_data_root,
    task_type_of,
)
from tests.needs import require_module

SHIPPED = sorted(embedded_data_dir().glob("*/*/*"))


def shipped_trial(task_type: str) -> Path:
    return next(p for p in SHIPPED if p.parent.name.startswith(task_type + "-"))


def add_trial(
    json_dir: Path,
    split_dir: str,
    folder: str,
    *,
    source: str = "pick_and_place_simple",
    task_type: str | None = None,
    solvable: object = True,
    traj: bool = True,
    game: bool = True,
) -> str:
    """Copy a real shipped trial into a fake tree, then break it the way the test needs."""
    src = shipped_trial(source)
    trial = json_dir / split_dir / folder / src.name
    trial.mkdir(parents=True)
    shutil.copy(src / "initial_state.pddl", trial / "initial_state.pddl")
    if traj:
        data = json.loads((src / "traj_data.json").read_text())
        if task_type is not None:
            data["task_type"] = task_type
        (trial / "traj_data.json").write_text(json.dumps(data))
    if game:
        data = json.loads((src / "game.tw-pddl").read_text())
        if solvable is None:
            del data["solvable"]
        else:
            data["solvable"] = solvable
        (trial / "game.tw-pddl").write_text(json.dumps(data))
    return f"{split_dir}/{folder}/{src.name}"


def ids(root: Path, split: str, task_types: tuple[int, ...] = (1, 2, 3, 4, 5, 6)) -> list[str]:
    return [g.task_id for g in discover_games(DataRoot(root, "argument"), split, task_types)]


def test_discovery_keeps_only_games_alfworld_would_load(tmp_path: Path) -> None:
    good = add_trial(tmp_path, "train", "pick_and_place_simple-Mug-None-Desk-301")
    add_trial(tmp_path, "train", "pick_and_place_simple-Pen-None-Desk-302", traj=False)
    add_trial(tmp_path, "train", "pick_and_place_simple-Pen-None-Desk-303", game=False)
    add_trial(tmp_path, "train", "pick_and_place_simple-Pen-None-Desk-304", solvable=False)
    add_trial(tmp_path, "train", "pick_and_place_simple-Pen-None-Desk-305", solvable=None)
    add_trial(tmp_path, "train", "pick_and_place_with_movable_recep-Pen-Bowl-Desk-306")
    add_trial(tmp_path, "train", "pick_clean_then_place_in_recep-AppleSliced-None-Fridge-7")
    add_trial(
        tmp_path,
        "train",
        "pick_and_place_simple-Pen-None-Desk-308",
        task_type="pick_and_place_with_movable_recep",
    )
    assert ids(tmp_path, "train") == [good]


def test_a_broken_json_file_is_skipped_not_raised(tmp_path: Path) -> None:
    good = add_trial(tmp_path, "train", "pick_and_place_simple-Mug-None-Desk-301")
    broken = add_trial(tmp_path, "train", "pick_and_place_simple-Mug-None-Desk-302")
    (tmp_path / broken / "game.tw-pddl").write_text("{not json")
    assert ids(tmp_path, "train") == [good]


def test_task_type_filter_uses_alfworld_numbering(tmp_path: Path) -> None:
    simple = add_trial(tmp_path, "train", "pick_and_place_simple-Mug-None-Desk-301")
    two = add_trial(
        tmp_path, "train", "pick_two_obj_and_place-Mug-None-Desk-302", source="pick_two_obj_and_place"
    )
    assert ids(tmp_path, "train", (1,)) == [simple]
    assert ids(tmp_path, "train", (6,)) == [two]
    assert ids(tmp_path, "train") == sorted([simple, two])


def test_splits_map_to_valid_seen_and_valid_unseen(tmp_path: Path) -> None:
    train = add_trial(tmp_path, "train", "pick_and_place_simple-Mug-None-Desk-301")
    seen = add_trial(tmp_path, "valid_seen", "pick_and_place_simple-Mug-None-Desk-302")
    unseen = add_trial(tmp_path, "valid_unseen", "pick_and_place_simple-Mug-None-Desk-303")
    assert ids(tmp_path, "train") == [train]
    assert ids(tmp_path, "eval_in_distribution") == [seen]
    assert ids(tmp_path, "eval_out_of_distribution") == [unseen]


def test_task_ids_are_sorted_relative_paths_independent_of_location(tmp_path: Path) -> None:
    for name in ("b", "a"):
        add_trial(tmp_path / name / "json_2.1.1", "train", "pick_and_place_simple-Mug-None-Desk-301")
        add_trial(tmp_path / name / "json_2.1.1", "train", "pick_and_place_simple-Cup-None-Desk-301")
    found = [ids(tmp_path / name / "json_2.1.1", "train") for name in ("a", "b")]
    assert found[0] == found[1] == sorted(found[0])
    assert all(not Path(t).is_absolute() and t.startswith("train/") for t in found[0])


def test_unknown_split_or_task_type_raises_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="eval_in_distribution"):
        ids(tmp_path, "valid_seen")
    with pytest.raises(ConfigurationError, match="task_types"):
        ids(tmp_path, "train", (7,))


def test_embedded_games_appear_in_every_split() -> None:
    root = DataRoot(embedded_data_dir(), "embedded")
    lists = [
        [g.task_id for g in discover_games(root, s)]
        for s in ("train", "eval_in_distribution", "eval_out_of_distribution")
    ]
    assert len(lists[0]) == 12 and lists[0] == lists[1] == lists[2]
    assert {task_type_of(t) for t in lists[0]} == {g.task_type for g in discover_games(root, "train")}


def test_explicit_path_wins_over_alfworld_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_trial(tmp_path / "mine" / "json_2.1.1", "train", "pick_and_place_simple-Mug-None-Desk-301")
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path / "elsewhere"))
    root = resolve_data_root(tmp_path / "mine")
    assert root.source == "argument" and root.json_dir == (tmp_path / "mine" / "json_2.1.1").resolve()


def test_alfworld_data_variable_is_used_when_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_trial(tmp_path / "json_2.1.1", "train", "pick_and_place_simple-Mug-None-Desk-301")
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    root = resolve_data_root()
    assert root.source == "ALFWORLD_DATA" and not root.embedded


def test_alfworld_data_without_games_raises_with_download_instructions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError) as caught:
        resolve_data_root()
    assert "ALFWORLD_DATA" in caught.value.message and "alfworld-download" in caught.value.message
    assert not data_status().available


def test_without_alfworld_data_the_embedded_games_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    assert resolve_data_root().embedded


def test_alfworld_import_side_effect_on_alfworld_data_is_undone(monkeypatch: pytest.MonkeyPatch) -> None:
    require_module("textworld", extra="alfworld")
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    # Forget the module so its import-time code (which sets the variable) runs again.
    monkeypatch.delitem(sys.modules, "alfworld.info", raising=False)
    import_alfworld("alfworld.info")
    assert "ALFWORLD_DATA" not in os.environ


def test_alfworld_default_cache_without_games_counts_as_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".cache" / "alfworld").mkdir(parents=True)
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path / ".cache" / "alfworld"))
    assert resolve_data_root().embedded


def test_games_added_to_a_scanned_root_are_found_on_the_next_listing(tmp_path: Path) -> None:
    first = add_trial(tmp_path, "train", "pick_and_place_simple-Mug-None-Desk-301")
    assert ids(tmp_path, "train") == [first]
    second = add_trial(tmp_path, "train", "pick_and_place_simple-Cup-None-Desk-302")
    assert ids(tmp_path, "train") == sorted([first, second])

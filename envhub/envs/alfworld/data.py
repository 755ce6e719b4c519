"""Finding ALFWorld games on disk: the real ``json_2.1.1`` layout and envhub's embedded games.

A game is one *trial* directory::

    <root>/json_2.1.1/<split dir>/<task_type>-<Obj>-<MRecep|None>-<Recep>-<scene>/trial_T.../
        traj_data.json  initial_state.pddl  game.tw-pddl

Discovery applies ALFWorld's own filters (``AlfredTWEnv.collect_game_files``; reference notes
A4): ``traj_data.json`` present, no ``movable``/``Sliced`` in the path, ``task_type`` among the
selected types, ``game.tw-pddl`` present with ``"solvable": true``. Split names are
verl-agent's: ``train`` -> ``train/``, ``eval_in_distribution`` -> ``valid_seen/``,
``eval_out_of_distribution`` -> ``valid_unseen/``. A task id is the trial directory relative to
``json_2.1.1`` (``"train/pick_and_place_simple-Mug-None-Desk-308/trial_T..."``), so ids are the
same on every machine and sort in a stable order.

Where the data comes from, in order: an explicit ``data_dir``; the ``ALFWORLD_DATA``
environment variable (ALFWorld's own convention); otherwise the small set of games envhub
ships in ``envhub/envs/alfworld/data/`` (made by :mod:`envhub.envs.alfworld.fixtures`). The
embedded set is a smoke-test set: every split lists all of its games.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from envhub.core.errors import ConfigurationError, DataNotFoundError
from envhub.core.registry import DataStatus

__all__ = [
    "ALL_TASK_TYPES",
    "GAME_FILE",
    "JSON_DIR",
    "SPLIT_DIRS",
    "TASK_TYPES",
    "TRAJ_FILE",
    "AlfworldDataSettings",
    "DataRoot",
    "GameRecord",
    "breakdown",
    "data_status",
    "discover_games",
    "embedded_data_dir",
    "load_game_record",
    "resolve_data_root",
    "task_type_of",
]

#: ALFWorld's task-type numbering (``env.task_types`` in its configs).
TASK_TYPES: dict[int, str] = {
    1: "pick_and_place_simple",
    2: "look_at_obj_in_light",
    3: "pick_clean_then_place_in_recep",
    4: "pick_heat_then_place_in_recep",
    5: "pick_cool_then_place_in_recep",
    6: "pick_two_obj_and_place",
}
ALL_TASK_TYPES: tuple[int, ...] = tuple(TASK_TYPES)

#: verl-agent's split names -> ALFWorld's directories under ``json_2.1.1``.
SPLIT_DIRS: dict[str, str] = {
    "train": "train",
    "eval_in_distribution": "valid_seen",
    "eval_out_of_distribution": "valid_unseen",
}

GAME_FILE = "game.tw-pddl"
TRAJ_FILE = "traj_data.json"
JSON_DIR = "json_2.1.1"
HOW_TO_GET = (
    "on a machine with internet run `pip install alfworld==0.4.2 && alfworld-download` and copy the "
    "resulting $ALFWORLD_DATA folder here; or make games offline with "
    "`envhub data alfworld generate --out DIR` and set ALFWORLD_DATA=DIR."
)


class AlfworldDataSettings(BaseSettings):
    """Where the user keeps ALFWorld data: ALFWorld's own ``ALFWORLD_DATA`` variable."""

    model_config = SettingsConfigDict(extra="ignore", env_ignore_empty=True)

    alfworld_data: Path | None = Field(
        default=None,
        validation_alias="ALFWORLD_DATA",
        description="Folder holding json_2.1.1/ (what `alfworld-download` fills).",
    )


@dataclass(frozen=True)
class DataRoot:
    """A resolved data location.

    Attributes:
        json_dir: the ``json_2.1.1`` directory.
        source: ``"embedded"``, ``"ALFWORLD_DATA"`` or ``"argument"``.
    """

    json_dir: Path
    source: str

    @property
    def embedded(self) -> bool:
        """Whether these are envhub's shipped games (every split lists all of them)."""
        return self.source == "embedded"


@dataclass(frozen=True)
class GameRecord:
    """One playable game.

    Attributes:
        task_id: trial directory relative to ``json_2.1.1``.
        gamefile: absolute path of its ``game.tw-pddl``.
        task_type: one of :data:`TASK_TYPES`' names.
    """

    task_id: str
    gamefile: Path
    task_type: str


def embedded_data_dir() -> Path:
    """The ``json_2.1.1`` directory of the games shipped with envhub."""
    return Path(__file__).resolve().parent / "data" / JSON_DIR


def _json_dir_under(path: Path) -> Path | None:
    if (path / JSON_DIR).is_dir():
        return path / JSON_DIR
    if path.name == JSON_DIR and path.is_dir():
        return path
    return None


def _alfworld_default_cache() -> Path:
    return Path("~/.cache/alfworld").expanduser()


def resolve_data_root(data_dir: str | Path | None = None) -> DataRoot:
    """Pick the data location (see the module docstring for the order).

    Args:
        data_dir: a folder holding ``json_2.1.1/`` (or that folder itself); ``None`` to use
            ``ALFWORLD_DATA`` or the embedded games.

    Returns:
        The resolved :class:`DataRoot`.

    Raises:
        DataNotFoundError: the folder given (or named by ``ALFWORLD_DATA``) has no ``json_2.1.1``.
    """
    if data_dir is not None:
        source, path = "argument", Path(data_dir).expanduser()
    else:
        env_path = AlfworldDataSettings().alfworld_data
        if env_path is None:
            return DataRoot(embedded_data_dir(), "embedded")
        source, path = "ALFWORLD_DATA", env_path.expanduser()
        # `import alfworld` sets ALFWORLD_DATA to its empty default cache when it was unset; a
        # process that imported it before envhub would otherwise never see the embedded games.
        if path.resolve() == _alfworld_default_cache().resolve() and _json_dir_under(path) is None:
            return DataRoot(embedded_data_dir(), "embedded")
    json_dir = _json_dir_under(path)
    if json_dir is None:
        raise DataNotFoundError(
            f"ALFWorld games ({JSON_DIR}/)",
            path=path,
            env_var="ALFWORLD_DATA",
            how_to_get=HOW_TO_GET,
        )
    return DataRoot(json_dir.resolve(), source)


def task_type_of(task_id: str) -> str:
    """The task type encoded in a task id's task folder (``"train/pick_two_obj_and_place-..."``)."""
    parts = task_id.split("/")
    folder = parts[-2] if len(parts) >= 2 else parts[-1]
    return folder.split("-", 1)[0]


def load_game_record(
    json_dir: Path, task_id: str, task_types: Sequence[int] = ALL_TASK_TYPES
) -> GameRecord | None:
    """Apply ALFWorld's filters to one trial directory.

    Args:
        json_dir: the ``json_2.1.1`` directory.
        task_id: the trial directory relative to ``json_dir``.
        task_types: the ALFWorld task-type numbers to keep.

    Returns:
        The game, or ``None`` when ALFWorld would skip this trial.
    """
    if not task_id or task_id.startswith("/") or ".." in task_id.split("/"):
        return None
    trial = json_dir / task_id
    traj_path, game_path = trial / TRAJ_FILE, trial / GAME_FILE
    if not traj_path.is_file():
        return None
    # ALFWorld's rule: movable-receptacle and sliced-object trials are not supported.
    if "movable" in task_id or "Sliced" in task_id:
        return None
    traj = _read_json(traj_path)
    wanted = {TASK_TYPES[t] for t in task_types if t in TASK_TYPES}
    if traj is None or traj.get("task_type") not in wanted or not game_path.is_file():
        return None
    game = _read_json(game_path)
    if game is None or game.get("solvable") is not True:
        return None
    return GameRecord(task_id=task_id, gamefile=game_path.resolve(), task_type=str(traj["task_type"]))


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # a broken file is skipped like a missing one, never a crash mid-listing
    return data if isinstance(data, dict) else None


def discover_games(
    root: DataRoot, split: str, task_types: Sequence[int] = ALL_TASK_TYPES
) -> tuple[GameRecord, ...]:
    """Every playable game of ``split``, sorted by task id.

    Args:
        root: where the data is (:func:`resolve_data_root`).
        split: one of :data:`SPLIT_DIRS` (verl-agent's names).
        task_types: ALFWorld task-type numbers to keep (default: all six).

    Returns:
        The games, sorted by task id (ALFWorld walks the disk in file-system order; sorting
        makes the list identical on every machine).

    Raises:
        ConfigurationError: ``split`` or a task type is unknown.
    """
    if split not in SPLIT_DIRS:
        raise ConfigurationError(
            f"ALFWorld has no split {split!r}; use one of {list(SPLIT_DIRS)}.", split=split
        )
    bad = [t for t in task_types if t not in TASK_TYPES]
    if bad or not task_types:
        raise ConfigurationError(
            f"task_types must be a non-empty subset of {list(TASK_TYPES)} (ALFWorld's numbering); "
            f"got {list(task_types)}.",
            task_types=list(task_types),
        )
    split_dirs = tuple(SPLIT_DIRS.values()) if root.embedded else (SPLIT_DIRS[split],)
    # The folders' modification times are part of the cache key, so adding or removing a task
    # folder (e.g. generating more games into the same root) is seen without a restart.
    stamps = tuple(_mtime(root.json_dir / d) for d in split_dirs)
    return _discover_cached(str(root.json_dir), split_dirs, tuple(sorted(set(task_types))), stamps)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


# Scanning a full ALFWorld split parses thousands of game files (seconds); every env of a
# process and every split query would repeat it. The result is a pure function of the files.
@functools.lru_cache(maxsize=32)
def _discover_cached(
    json_dir: str, split_dirs: tuple[str, ...], task_types: tuple[int, ...], stamps: tuple[int, ...]
) -> tuple[GameRecord, ...]:
    base = Path(json_dir)
    found: list[GameRecord] = []
    for split_dir in split_dirs:
        top = base / split_dir
        if not top.is_dir():
            continue
        for dirpath, _dirnames, filenames in os.walk(top):
            if TRAJ_FILE not in filenames:
                continue
            task_id = Path(dirpath).relative_to(base).as_posix()
            record = load_game_record(base, task_id, task_types)
            if record is not None:
                found.append(record)
    return tuple(sorted(found, key=lambda g: g.task_id))


def data_status() -> DataStatus:
    """Whether ``envhub/ALFWorld-v0`` can run here and which games it would use."""
    if importlib.util.find_spec("alfworld") is None or importlib.util.find_spec("textworld") is None:
        return DataStatus(available=False, source="-", how_to_get="pip install 'envhub-rl[alfworld]'")
    try:
        root = resolve_data_root()
    except DataNotFoundError as exc:
        return DataStatus(available=False, source="-", how_to_get=exc.message)
    games = discover_games(root, "train")
    if not games:
        return DataStatus(
            available=False, source=str(root.json_dir), how_to_get=f"no solvable games; {HOW_TO_GET}"
        )
    source = (
        f"embedded, {len(games)} games" if root.embedded else f"{root.json_dir} ({len(games)} train games)"
    )
    return DataStatus(available=True, source=source)


def breakdown(task_id: str, task_score: float) -> dict[str, str]:
    """``envhub eval``'s breakdown of an ALFWorld episode: its task type (one of the six)."""
    return {"task_type": task_type_of(task_id)}

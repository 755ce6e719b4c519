"""envhub's own ALFWorld game generator: real-format trials from the data inside the alfworld wheel.

The ``alfworld`` wheel ships no games, but it does ship what a game is made of (reference
notes A2, A6): 120 AI2-THOR floor plans (``gen/layouts/FloorPlanN-openable.json`` gives each
receptacle's ALFRED id and the agent pose in front of it, ``-objects.json`` the object types in
the scene), the object tables (``gen/constants.py``: which receptacle type can hold which
object, which objects are cleanable/heatable/coolable/toggleable) and the goal library
(``gen/goal_library.py``: each task type's PDDL goal and English templates).

:func:`generate_games` draws, per game, a floor plan that supports the task type, a target
object and a destination receptacle, places the target (never already in the destination)
and a handful of distractors in receptacles that can hold them, and writes the three files of
an ALFWorld trial: ``traj_data.json``, ``initial_state.pddl`` and ``game.tw-pddl`` (the wheel's
domain and grammar with the goal text filled in). It then asks ALFWorld's planner expert (Fast
Downward, what ``alfworld-generate --expert_type planner`` runs) for a plan; a game is kept
only if the plan exists and fits in ``max_walkthrough`` steps, and the plan is stored as the
game's ``walkthrough`` with ``"solvable": true``. Every draw comes from a generator seeded by
``(seed, task type, index, attempt)``, so the same arguments give byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from envhub.core.errors import ConfigurationError
from envhub.envs.alfworld._engine import alfworld_package_dir, import_alfworld, make_engine
from envhub.envs.alfworld.data import ALL_TASK_TYPES, GAME_FILE, JSON_DIR, SPLIT_DIRS, TASK_TYPES, TRAJ_FILE

__all__ = [
    "GeneratedGame",
    "SceneLayout",
    "TrialDraft",
    "WheelTables",
    "draft_trial",
    "generate_games",
    "load_scenes",
    "solve_game",
]

#: Appliance receptacle each state-change task needs (and that is not a sensible destination).
_APPLIANCE = {
    "pick_clean_then_place_in_recep": "SinkBasin",
    "pick_heat_then_place_in_recep": "Microwave",
    "pick_cool_then_place_in_recep": "Fridge",
}
#: ``VAL_ACTION_OBJECTS`` capability a target of the task type must have.
_CAPABILITY = {
    "pick_clean_then_place_in_recep": "Cleanable",
    "pick_heat_then_place_in_recep": "Heatable",
    "pick_cool_then_place_in_recep": "Coolable",
}
_LAMPS = ("DeskLamp", "FloorLamp")
#: Receptacles a lamp stands on in ALFRED scenes, preferred when present.
_LAMP_STANDS = ("Desk", "SideTable", "Dresser", "DiningTable", "CoffeeTable", "Shelf")
#: Scene object types that are fixtures, not things an agent picks up.
_NOT_PICKUPABLE = frozenset(
    {
        "HousePlant",
        "Television",
        "Painting",
        "Window",
        "Blinds",
        "Curtains",
        "Mirror",
        "LightSwitch",
        "StoveKnob",
        "Faucet",
        "ShowerHead",
        "ShowerCurtain",
        "ShowerDoor",
        "ShowerGlass",
        "Chair",
        "Stool",
        "Footstool",
        "Poster",
        "Lamp",
        "Sink",
        "Bathtub",
        "Boots",
        "Cart",
        "Safe",
        "LaundryHamperLid",
        *_LAMPS,
    }
)
_MAX_DISTRACTORS = 8
_START_LOCATION = "loc_bar_0_bar_0_bar_0_bar_30"


@dataclass(frozen=True)
class SceneLayout:
    """One AI2-THOR floor plan as the wheel describes it.

    Attributes:
        floorplan: the scene number (``FloorPlan<N>``).
        receptacles: ALFRED receptacle id -> agent pose ``[x, z, rotation, horizon]``.
        object_types: object types present in the scene.
    """

    floorplan: int
    receptacles: dict[str, list[float]]
    object_types: frozenset[str]


@dataclass
class TrialDraft:
    """A game before solving: the trial folder name and the two source files' contents."""

    task_type: str
    folder: str
    trial: str
    traj: dict[str, Any]
    problem: str
    goal_text: str


@dataclass(frozen=True)
class GeneratedGame:
    """A written, solvable game.

    Attributes:
        task_id: trial directory relative to ``json_2.1.1`` (the env's task id).
        path: the trial directory.
        walkthrough: the planner's plan, as text commands.
    """

    task_id: str
    path: Path
    walkthrough: list[str] = field(default_factory=list)


# -- wheel data -------------------------------------------------------------------------------


def _layouts_dir() -> Path:
    return alfworld_package_dir() / "gen" / "layouts"


def load_scenes() -> list[SceneLayout]:
    """Every floor plan shipped in the alfworld wheel, sorted by scene number."""
    scenes = []
    for path in sorted(_layouts_dir().glob("FloorPlan*-openable.json")):
        number = int(path.name.removeprefix("FloorPlan").split("-", 1)[0])
        objects = json.loads((path.parent / f"FloorPlan{number}-objects.json").read_text())
        scenes.append(SceneLayout(number, json.loads(path.read_text()), frozenset(objects)))
    return sorted(scenes, key=lambda s: s.floorplan)


def _mangle(alfred_id: str) -> str:
    """ALFRED id -> PDDL name, the encoding ALFWorld's Demangler reverses."""
    for old, new in (("|", "_bar_"), ("-", "_minus_"), ("+", "_plus_"), (".", "_dot_"), (",", "_comma_")):
        alfred_id = alfred_id.replace(old, new)
    return alfred_id


def _location(pose: Sequence[float]) -> str:
    """Agent pose -> ALFWorld location name ``loc|x/0.25|z/0.25|rotation/90|horizon``."""
    x, z, rotation, horizon = pose
    return _mangle(f"loc|{round(x / 0.25)}|{round(z / 0.25)}|{int(rotation) // 90 % 4}|{int(horizon)}")


def _rtype(receptacle_id: str) -> str:
    # ALFRED names basins "Sink|x|y|z|SinkBasin"; the type is the last part for those.
    parts = receptacle_id.split("|")
    return parts[-1] if parts[-1].endswith("Basin") else parts[0]


# -- drafting ---------------------------------------------------------------------------------


@dataclass
class WheelTables:
    """The wheel's object tables, as plain sets."""

    can_hold: dict[str, frozenset[str]]
    capability: dict[str, frozenset[str]]
    known_objects: frozenset[str]
    movable_receptacles: frozenset[str]
    static_receptacles: frozenset[str]
    goals: dict[str, dict[str, Any]]
    domain: str
    grammar: str

    @classmethod
    def load(cls) -> WheelTables:
        constants = import_alfworld("alfworld.gen.constants")
        goal_library = import_alfworld("alfworld.gen.goal_library")
        data = alfworld_package_dir() / "data"
        return cls(
            can_hold={k: frozenset(v) for k, v in constants.VAL_RECEPTACLE_OBJECTS.items()},
            capability={k: frozenset(v) for k, v in constants.VAL_ACTION_OBJECTS.items()},
            known_objects=frozenset(constants.OBJECTS_SET),
            movable_receptacles=frozenset(constants.MOVABLE_RECEPTACLES_SET),
            static_receptacles=frozenset(constants.STATIC_RECEPTACLES),
            goals=dict(goal_library.gdict),
            domain=(data / "alfred.pddl").read_text(),
            grammar=(data / "alfred.twl2").read_text(),
        )


def _pickable(scene: SceneLayout, tables: WheelTables, rtypes: set[str]) -> list[str]:
    return sorted(
        t
        for t in scene.object_types
        if t in tables.known_objects
        and t not in _NOT_PICKUPABLE
        and (t not in tables.static_receptacles or t in tables.movable_receptacles)
        and any(t in tables.can_hold.get(r, ()) for r in rtypes)
    )


def _choose(rng: np.random.Generator, items: Sequence[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _object_id(rng: np.random.Generator, otype: str, taken: set[str]) -> str:
    while True:
        x, y, z = rng.uniform(-3.0, 3.0), rng.uniform(0.0, 2.0), rng.uniform(-3.0, 3.0)
        oid = f"{otype}|{x:+06.2f}|{y:+06.2f}|{z:+06.2f}"
        if oid not in taken:
            taken.add(oid)
            return oid


def draft_trial(
    task_type: str, scene: SceneLayout, rng: np.random.Generator, tables: WheelTables, trial: str
) -> TrialDraft | None:
    """Draft one game of ``task_type`` in ``scene``, or ``None`` if the scene cannot host it.

    Args:
        task_type: one of :data:`~envhub.envs.alfworld.data.TASK_TYPES`' names.
        scene: the floor plan.
        rng: the only source of randomness.
        tables: the wheel's object tables.
        trial: the trial folder name.

    Returns:
        The draft, not yet solved.
    """
    receptacles = sorted(scene.receptacles)
    rtypes = {_rtype(r) for r in receptacles}
    appliance = _APPLIANCE.get(task_type)
    if appliance is not None and appliance not in rtypes:
        return None
    pickable = _pickable(scene, tables, rtypes)
    targets = [
        t for t in pickable if task_type not in _CAPABILITY or t in tables.capability[_CAPABILITY[task_type]]
    ]
    lamps = [lamp for lamp in _LAMPS if lamp in scene.object_types]
    if task_type == "look_at_obj_in_light" and not lamps:
        return None
    rng_targets = list(targets)
    rng.shuffle(rng_targets)
    for target in rng_targets:
        holders = [r for r in receptacles if target in tables.can_hold.get(_rtype(r), ())]
        parents = sorted({_rtype(r) for r in holders} - {appliance})
        if task_type == "look_at_obj_in_light":
            parents = [""]
        for parent in [parents[i] for i in rng.permutation(len(parents))]:
            sources = [r for r in holders if _rtype(r) != parent]
            if sources:
                toggle = _choose(rng, lamps) if task_type == "look_at_obj_in_light" else ""
                return _assemble(
                    task_type, scene, rng, tables, trial, target, parent, toggle, sources, pickable
                )
    return None


def _assemble(
    task_type: str,
    scene: SceneLayout,
    rng: np.random.Generator,
    tables: WheelTables,
    trial: str,
    target: str,
    parent: str,
    toggle: str,
    sources: list[str],
    pickable: list[str],
) -> TrialDraft:
    taken: set[str] = set()
    placed: list[tuple[str, str]] = []  # (object id, receptacle id)
    for _ in range(2 if task_type == "pick_two_obj_and_place" else 1):
        placed.append((_object_id(rng, target, taken), _choose(rng, sources)))
    others = [t for t in pickable if t != target]
    for otype in [others[i] for i in rng.permutation(len(others))][: min(_MAX_DISTRACTORS, len(others) // 2)]:
        holders = sorted(r for r in scene.receptacles if otype in tables.can_hold.get(_rtype(r), ()))
        placed.append((_object_id(rng, otype, taken), _choose(rng, holders)))
    lamp: tuple[str, str] | None = None
    if toggle:
        stands = [r for r in sorted(scene.receptacles) if _rtype(r) in _LAMP_STANDS] or sorted(
            scene.receptacles
        )
        lamp = (_object_id(rng, toggle, taken), _choose(rng, stands))
    goal_entry = tables.goals[task_type]
    goal_pddl = (
        goal_entry["pddl"].format(obj=target, recep=parent, toggle=toggle, mrecep="").replace("#", "-")
    )
    template = _choose(rng, goal_entry["templates"])
    goal_text = template.format(obj=target.lower(), recep=parent.lower(), toggle=toggle.lower(), mrecep="")
    problem = _problem_text(scene, tables, trial, placed, lamp, goal_pddl)
    traj = {
        "task_type": task_type,
        "task_id": trial,
        "scene": {"floor_plan": f"FloorPlan{scene.floorplan}", "scene_num": scene.floorplan},
        "pddl_params": {
            "object_target": target,
            "parent_target": parent,
            "toggle_target": toggle,
            "mrecep_target": "",
            "object_sliced": False,
        },
        "turk_annotations": {
            "anns": [{"task_desc": goal_text.capitalize() + ".", "high_descs": [], "votes": [1]}]
        },
        "envhub": {"generator": "envhub.envs.alfworld.fixtures"},
    }
    folder = f"{task_type}-{target}-None-{parent or toggle}-{scene.floorplan}"
    return TrialDraft(task_type, folder, trial, traj, problem, goal_text)


def _problem_text(
    scene: SceneLayout,
    tables: WheelTables,
    trial: str,
    placed: list[tuple[str, str]],
    lamp: tuple[str, str] | None,
    goal_pddl: str,
) -> str:
    receptacles = sorted(scene.receptacles)
    loc = {r: _location(scene.receptacles[r]) for r in receptacles}
    objects_all = [*placed, *([lamp] if lamp else [])]
    otypes = sorted({o.split("|")[0] for o, _ in objects_all})
    rtypes = sorted({_rtype(r) for r in receptacles})
    declared = (
        ["agent1 - agent"]
        + [f"{_mangle(o)} - object" for o, _ in objects_all]
        + [f"{t}Type - otype" for t in otypes]
        + [f"{t}Type - rtype" for t in rtypes]
        + [f"{_mangle(r)} - receptacle" for r in receptacles]
        + [f"{name} - location" for name in sorted({_START_LOCATION, *loc.values()})]
    )
    init = [f"(atLocation agent1 {_START_LOCATION})"]
    for r in receptacles:
        init += [
            f"(receptacleType {_mangle(r)} {_rtype(r)}Type)",
            f"(receptacleAtLocation {_mangle(r)} {loc[r]})",
        ]
        if r.split("|")[0] in ("Fridge", "Cabinet", "Microwave", "Drawer", "Safe", "Box"):
            init.append(f"(openable {_mangle(r)})")
    init += [
        f"(canContain {r}Type {o}Type)"
        for r in rtypes
        for o in otypes
        if o in tables.can_hold.get(r, frozenset())
    ]
    for oid, rid in objects_all:
        otype, name = oid.split("|")[0], _mangle(oid)
        init += [
            f"(objectType {name} {otype}Type)",
            f"(inReceptacle {name} {_mangle(rid)})",
            f"(objectAtLocation {name} {loc[rid]})",
        ]
        if otype in tables.capability["Toggleable"]:
            init.append(f"(toggleable {name})")
        else:
            init.append(f"(pickupable {name})")
        if otype in tables.movable_receptacles:
            init.append(f"(isReceptacleObject {name})")
        for capability, predicate in (
            ("Cleanable", "cleanable"),
            ("Heatable", "heatable"),
            ("Coolable", "coolable"),
            ("Sliceable", "sliceable"),
        ):
            if otype in tables.capability[capability]:
                init.append(f"({predicate} {name})")
    sep = "\n        "
    return (
        f"\n(define (problem plan_{trial})\n    (:domain alfred)\n"
        f"    (:objects{sep}{sep.join(declared)}\n        )\n"
        f"    (:init{sep}{sep.join(init)}\n        )\n{goal_pddl}\n"
    )


# -- writing and solving ----------------------------------------------------------------------


def _write_draft(draft: TrialDraft, split_dir: Path, tables: WheelTables) -> Path:
    trial_dir = split_dir / draft.folder / draft.trial
    trial_dir.mkdir(parents=True, exist_ok=True)
    (trial_dir / TRAJ_FILE).write_text(json.dumps(draft.traj, indent=1))
    (trial_dir / "initial_state.pddl").write_text(draft.problem)
    game = {
        "pddl_domain": tables.domain,
        # What alfworld's add_task_to_grammar does, with the template drawn from our seeded rng.
        "grammar": tables.grammar.replace("UNKNOWN GOAL", draft.goal_text),
        "pddl_problem": draft.problem,
        "solvable": None,
        "walkthrough": None,
    }
    (trial_dir / GAME_FILE).write_text(json.dumps(game))
    return trial_dir


def solve_game(engine: Any, gamefile: Path) -> list[str] | None:
    """Ask ALFWorld's planner expert for a plan of ``gamefile``.

    Args:
        engine: from :func:`~envhub.envs.alfworld._engine.make_engine` with ``planner=True``.
        gamefile: a ``game.tw-pddl`` file.

    Returns:
        The plan as text commands, or ``None`` when the planner finds none.
    """
    try:
        engine.load(str(gamefile))
        state = engine.reset()
        plan = state["extra.expert_plan"]
    except (
        Exception
    ):  # the planner signals "no plan" with assorted exceptions (as alfworld-generate treats them)
        return None
    return [str(c) for c in plan] if plan else None


def _record_solution(trial_dir: Path, plan: list[str] | None) -> None:
    path = trial_dir / GAME_FILE
    game = json.loads(path.read_text())
    game["solvable"] = plan is not None
    game["walkthrough"] = plan
    path.write_text(json.dumps(game))


def generate_games(
    out: str | Path,
    *,
    per_type: int = 2,
    seed: int = 0,
    split: str = "train",
    task_types: Sequence[int] = ALL_TASK_TYPES,
    max_walkthrough: int = 40,
    max_attempts: int = 20,
    write_logic: bool = True,
) -> list[GeneratedGame]:
    """Write ``per_type`` solvable games of each task type under ``out/json_2.1.1/<split dir>/``.

    Args:
        out: the data root (what ``ALFWORLD_DATA`` should then point at).
        per_type: games per task type.
        seed: the generator seed; same arguments give identical files.
        split: verl-agent split name (``train``, ``eval_in_distribution``, ``eval_out_of_distribution``).
        task_types: ALFWorld task-type numbers to generate.
        max_walkthrough: longest plan kept (the env allows 50 steps).
        max_attempts: drafts tried per game before giving up.
        write_logic: also copy the domain and grammar to ``out/logic/`` as ``alfworld-download`` does.

    Returns:
        The games written, in generation order.

    Raises:
        ConfigurationError: bad arguments, or no solvable game within ``max_attempts``.
        DependencyMissingError: the ``alfworld`` extra is not installed.
    """
    if split not in SPLIT_DIRS:
        raise ConfigurationError(f"Unknown split {split!r}; use one of {list(SPLIT_DIRS)}.", split=split)
    if per_type < 1 or any(t not in TASK_TYPES for t in task_types):
        raise ConfigurationError(
            f"per_type must be >= 1 and task_types a subset of {list(TASK_TYPES)}.", per_type=per_type
        )
    out = Path(out)
    json_dir = out / JSON_DIR
    split_dir = json_dir / SPLIT_DIRS[split]
    tables, scenes, engine = WheelTables.load(), load_scenes(), make_engine(planner=True)
    games: list[GeneratedGame] = []
    for tt in task_types:
        for index in range(per_type):
            games.append(_generate_one(TASK_TYPES[tt], (seed, tt, index), scenes, tables, engine, split_dir,
                                       json_dir, max_walkthrough, max_attempts))  # fmt: skip
    if write_logic:
        logic = out / "logic"
        logic.mkdir(parents=True, exist_ok=True)
        (logic / "alfred.pddl").write_text(tables.domain)
        (logic / "alfred.twl2").write_text(tables.grammar)
    return games


def _generate_one(
    task_type: str,
    key: tuple[int, int, int],
    scenes: list[SceneLayout],
    tables: WheelTables,
    engine: Any,
    split_dir: Path,
    json_dir: Path,
    max_walkthrough: int,
    max_attempts: int,
) -> GeneratedGame:
    seed, tt, index = key
    for attempt in range(max_attempts):
        rng = np.random.default_rng([seed, tt, index, attempt])
        trial = f"trial_T{seed % 10**8:08d}_{tt:02d}{index:04d}_{attempt:06d}"
        draft = draft_trial(task_type, _choose(rng, scenes), rng, tables, trial)
        if draft is None:
            continue
        trial_dir = _write_draft(draft, split_dir, tables)
        plan = solve_game(engine, trial_dir / GAME_FILE)
        if plan is not None and len(plan) > max_walkthrough:
            plan = None  # too long for a 50-step episode: draw again
        _record_solution(trial_dir, plan)
        if plan is not None:
            return GeneratedGame(trial_dir.relative_to(json_dir).as_posix(), trial_dir, plan)
        _remove_trial(trial_dir)
    raise ConfigurationError(
        f"No solvable {task_type} game in {max_attempts} attempts (seed={seed}); try another --seed.",
        task_type=task_type,
        seed=seed,
    )


def _remove_trial(trial_dir: Path) -> None:
    # Unsolvable drafts are removed so the output holds only games worth playing.
    for name in (TRAJ_FILE, "initial_state.pddl", GAME_FILE):
        (trial_dir / name).unlink(missing_ok=True)
    trial_dir.rmdir()
    if not any(trial_dir.parent.iterdir()):
        trial_dir.parent.rmdir()

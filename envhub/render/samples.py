"""Seeded ALFWorld-style histories for demos, tests and benchmarks (no dataset needed).

The lines read like ALFWorld transcripts (receptacles, objects, the engine's answers) in
AgentOCR's line format. For real histories, record episodes of ``envhub/ALFWorld-v0``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["alfworld_style_steps"]

_RECEPTACLES = ("cabinet", "countertop", "drawer", "shelf", "diningtable", "sinkbasin", "fridge", "microwave")
_OBJECTS = (
    "apple",
    "bread",
    "butterknife",
    "cup",
    "fork",
    "knife",
    "lettuce",
    "mug",
    "pan",
    "plate",
    "tomato",
)


def _objects(rng: np.random.Generator) -> str:
    picks = [f"a {rng.choice(_OBJECTS)} {int(rng.integers(1, 4))}" for _ in range(int(rng.integers(0, 7)))]
    if not picks:
        return "you see nothing"
    if len(picks) == 1:
        return f"you see {picks[0]}"
    return "you see " + ", ".join(picks[:-1]) + f", and {picks[-1]}"


def alfworld_style_steps(steps: int, *, seed: int = 0) -> list[tuple[str, str]]:
    """``steps`` (observation, action) pairs of an ALFWorld-like episode.

    Args:
        steps: how many steps.
        seed: seed of the generator (same seed, same steps).

    Returns:
        The pairs, first step first; the first observation holds the task.
    """
    rng = np.random.default_rng(seed)
    room = ", ".join(f"a {r} {i}" for r in _RECEPTACLES for i in range(1, int(rng.integers(2, 4))))
    obs = (
        f"-= Welcome to TextWorld, ALFRED! =- You are in the middle of a room. Looking quickly around you, "
        f"you see {room}. Your task is to: put a clean {rng.choice(_OBJECTS)} in {rng.choice(_RECEPTACLES)}."
    )
    out: list[tuple[str, str]] = []
    for _ in range(steps):
        place = f"{rng.choice(_RECEPTACLES)} {int(rng.integers(1, 4))}"
        kind = rng.random()
        if kind < 0.55:
            action = f"go to {place}"
        elif kind < 0.75:
            action = f"open {place}"
        elif kind < 0.9:
            action = f"take {rng.choice(_OBJECTS)} {int(rng.integers(1, 4))} from {place}"
        else:
            action = "inventory"
        out.append((obs, action))
        if action.startswith("go to"):
            obs = f"You arrive at {place}. On the {place}, {_objects(rng)}."
        elif action.startswith("open"):
            obs = f"You open the {place}. The {place} is open. In it, {_objects(rng)}."
        elif action.startswith("take") and rng.random() < 0.5:
            obs = f"You pick up the {action.split(' from ')[0][5:]} from the {place}."
        else:
            obs = "Nothing happens."
    return out

"""envhub's generated arithmetic problems: deterministic, disjoint splits, answers that add up."""

from __future__ import annotations

import re

from envhub.envs.math.data import GENERATED_SIZES, load_dataset
from envhub.envs.math.fixtures import TEMPLATES, generate_tasks


def test_the_same_seed_gives_the_same_problems_and_another_seed_others() -> None:
    assert generate_tasks("train", 30, seed=3) == generate_tasks("train", 30, seed=3)
    assert generate_tasks("train", 30, seed=3) != generate_tasks("train", 30, seed=4)


def test_the_embedded_default_has_disjoint_splits_of_the_documented_sizes() -> None:
    data = load_dataset()
    assert data.source == "generated"
    assert {s: len(t) for s, t in data.splits.items()} == dict(GENERATED_SIZES)
    train = {t.question for t in data.splits["train"]}
    assert not train & {t.question for t in data.splits["test"]}
    assert {t.kind for t in data.splits["test"]} == {t.kind for t in TEMPLATES}


def test_every_solution_s_arithmetic_is_right_and_ends_in_the_answer() -> None:
    for task in load_dataset().splits["test"]:
        lines = task.solution.splitlines()
        assert lines[-1] == f"#### {task.answer}" and int(task.answer) >= 0
        for line in lines[:-1]:
            x, op, y, z = re.fullmatch(r"(\d+) ([-+*/]) (\d+) = <<\1\2\3=(\d+)>>\4", line).groups()  # type: ignore[union-attr]
            assert (
                int(z)
                == {"+": int(x) + int(y), "-": int(x) - int(y), "*": int(x) * int(y), "/": int(x) // int(y)}[
                    op
                ]
            )
            assert op != "/" or int(x) % int(y) == 0  # shares are whole

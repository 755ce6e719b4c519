"""envhub's own arithmetic word problems: the embedded default data and real-format test data.

:func:`generate_tasks` draws problems from a handful of templates (one to three operations on
small integers, every answer a non-negative integer), deterministically from a seed: the same
``(split, n, seed)`` always gives the same problems. Each problem carries a GSM8K-style
solution: one line per operation with the calculator annotation GSM8K uses
(``5 + 3 = <<5+3=8>>8``), then ``#### <answer>``. :func:`write_gsm8k_jsonl` writes them in
GSM8K's file format (``{"question", "answer"}`` per line), which :mod:`envhub.envs.math.data`
reads back, so the loader of real data is tested on files made here.

The templates are data (:data:`TEMPLATES`), so :mod:`envhub.envs.math.policy` can read a
question back into its numbers with :meth:`Template.pattern` and solve it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from envhub.envs.math.data import MathTask

__all__ = ["TEMPLATES", "Template", "generate_tasks", "write_gsm8k_jsonl"]

_NAMES = ("Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jonah", "Kira", "Liam")
_ITEMS = (
    ("apple", "apples"),
    ("marble", "marbles"),
    ("sticker", "stickers"),
    ("book", "books"),
    ("pencil", "pencils"),
    ("cookie", "cookies"),
    ("shell", "shells"),
    ("card", "cards"),
)


@dataclass(frozen=True)
class Template:
    """One kind of word problem.

    Attributes:
        kind: the template's name (a task's ``kind``).
        text: the question, a ``str.format`` string over ``{name}``, ``{other}``, ``{item}``,
            ``{items}`` (singular and plural) and one-letter number fields ``{a}``, ``{b}``, ...
        draw: draws the number fields from a generator (only values with a valid answer).
        steps: the worked solution's operations, in order, from the number fields:
            ``(left, operator, right)`` where a side is a field letter, an earlier step's result
            (``"#0"``, ``"#1"``) or a literal.
    """

    kind: str
    text: str
    draw: Callable[[np.random.Generator], dict[str, int]]
    steps: tuple[tuple[str, str, str], ...]

    def solve(self, numbers: Mapping[str, int]) -> tuple[int, list[str]]:
        """The answer and the solution's lines (GSM8K's annotated arithmetic)."""
        results: list[int] = []
        lines = []

        def value(side: str) -> int:
            if side.startswith("#"):
                return results[int(side[1:])]
            return numbers[side] if side in numbers else int(side)

        for left, op, right in self.steps:
            x, y = value(left), value(right)
            z = {"+": x + y, "-": x - y, "*": x * y, "/": x // y}[op]
            results.append(z)
            lines.append(f"{x} {op} {y} = <<{x}{op}{y}={z}>>{z}")
        return results[-1], lines

    def pattern(self) -> re.Pattern[str]:
        """A regex that reads a question of this template back (number fields as named groups)."""
        parts = re.split(r"(\{[a-z]+\})", self.text)
        out = []
        for part in parts:
            match = re.fullmatch(r"\{([a-z]+)\}", part)
            if match is None:
                out.append(re.escape(part))
            elif len(match.group(1)) == 1:
                out.append(f"(?P<{match.group(1)}>\\d+)")
            else:
                out.append(r"[A-Za-z]+")
        return re.compile("".join(out))


def _ints(**ranges: tuple[int, int]) -> Callable[[np.random.Generator], dict[str, int]]:
    def draw(rng: np.random.Generator) -> dict[str, int]:
        return {k: int(rng.integers(lo, hi + 1)) for k, (lo, hi) in ranges.items()}

    return draw


def _give_away(rng: np.random.Generator) -> dict[str, int]:
    a, b = int(rng.integers(5, 60)), int(rng.integers(2, 40))
    return {"a": a, "b": b, "c": int(rng.integers(1, a + b))}


def _share(rng: np.random.Generator) -> dict[str, int]:
    k, q = int(rng.integers(2, 10)), int(rng.integers(2, 15))
    return {"a": k * q, "b": k}


def _change(rng: np.random.Generator) -> dict[str, int]:
    a, b = int(rng.integers(2, 12)), int(rng.integers(2, 9))
    bill = next(v for v in (10, 20, 50, 100, 200) if v > a * b)
    return {"a": a, "b": b, "c": bill}


def _leftover(rng: np.random.Generator) -> dict[str, int]:
    a, b = int(rng.integers(3, 12)), int(rng.integers(3, 12))
    return {"a": a, "b": b, "c": int(rng.integers(1, a * b))}


#: The problem templates (see :class:`Template`).
TEMPLATES: tuple[Template, ...] = (
    Template(
        "add-subtract",
        "{name} has {a} {items}. {name} buys {b} more {items} and then gives {c} {items} to {other}. "
        "How many {items} does {name} have now?",
        _give_away,
        (("a", "+", "b"), ("#0", "-", "c")),
    ),
    Template(
        "multiply",
        "{name} buys {a} boxes of {items}. Each box holds {b} {items}. How many {items} does {name} buy?",
        _ints(a=(2, 15), b=(2, 24)),
        (("a", "*", "b"),),
    ),
    Template(
        "divide",
        "{name} shares {a} {items} equally among {b} friends. How many {items} does each friend get?",
        _share,
        (("a", "/", "b"),),
    ),
    Template(
        "change",
        "One {item} costs {a} dollars. {name} buys {b} {items} and pays with a {c} dollar bill. "
        "How many dollars of change does {name} get?",
        _change,
        (("a", "*", "b"), ("c", "-", "#0")),
    ),
    Template(
        "rate",
        "{name} packs {a} {items} every day for {b} days, and {c} more {items} on the last day. "
        "How many {items} does {name} pack in all?",
        _ints(a=(2, 30), b=(2, 14), c=(1, 20)),
        (("a", "*", "b"), ("#0", "+", "c")),
    ),
    Template(
        "ages",
        "{name} is {a} years old. {other} is {b} times as old as {name}. How old will {other} be in "
        "{c} years?",
        _ints(a=(2, 15), b=(2, 5), c=(1, 20)),
        (("a", "*", "b"), ("#0", "+", "c")),
    ),
    Template(
        "leftover",
        "{name} has {a} bags with {b} {items} in each bag. {name} gives away {c} of the {items}. "
        "How many {items} are left?",
        _leftover,
        (("a", "*", "b"), ("#0", "-", "c")),
    ),
)


def _task(split: str, index: int, template: Template, rng: np.random.Generator) -> MathTask:
    name, other = (str(n) for n in rng.choice(_NAMES, size=2, replace=False))
    item, items = _ITEMS[int(rng.integers(len(_ITEMS)))]
    numbers = template.draw(rng)
    question = template.text.format(name=name, other=other, item=item, items=items, **numbers)
    answer, lines = template.solve(numbers)
    return MathTask(
        id=f"{split}-{index:05d}",
        question=question,
        answer=str(answer),
        solution="\n".join([*lines, f"#### {answer}"]),
        data_source="envhub-arithmetic",
        kind=template.kind,
    )


def generate_tasks(split: str, n: int, *, seed: int, exclude: Iterable[str] = ()) -> list[MathTask]:
    """``n`` problems for ``split``, the same for the same arguments.

    Args:
        split: the split's name (the task ids' prefix; it also seeds the draw).
        n: how many problems.
        seed: the generator's seed.
        exclude: questions that must not occur (another split's), so splits never overlap.

    Raises:
        ValueError: ``n`` distinct problems could not be drawn.
    """
    rng = np.random.default_rng([seed, sum(split.encode())])
    seen = set(exclude)
    tasks: list[MathTask] = []
    for _ in range(50 * n + 100):
        if len(tasks) == n:
            break
        template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
        task = _task(split, len(tasks), template, rng)
        if task.question not in seen:
            seen.add(task.question)
            tasks.append(task)
    if len(tasks) < n:
        raise ValueError(f"drew only {len(tasks)} distinct problems of the {n} asked for")
    return tasks


def write_gsm8k_jsonl(tasks: Sequence[MathTask], path: Path) -> Path:
    """Write tasks in GSM8K's format: ``{"question", "answer"}`` per line, the answer a worked
    solution ending in ``#### <number>``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for task in tasks:
            handle.write(json.dumps({"question": task.question, "answer": task.solution}) + "\n")
    return path

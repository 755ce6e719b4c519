"""How fast are envhub's advantage estimators, and do they scale linearly in rows?

Builds ALFWorld-shaped batches (groups x trajectories x steps, text anchors drawn from a
per-task pool of states so that anchors collide across and inside trajectories, sparse
terminal rewards of 10, ~10% invalid actions; rows in rollout order, or shuffled) and times
GRPO, GiGPO, HGPO (K = 2 and 4) and GraphGPO with the ALFWorld defaults, side by side in one run,
next to the tests' pure-Python implementation at the smallest size. Reports wall-clock
medians and process-CPU medians (CPU time is the steadier number on a shared machine).
Prints a table and writes ``bench/results/advantages.json``.

    .venv/bin/python bench/advantages.py                 # 6,400 / 100,000 / 1,000,000 rows
    .venv/bin/python bench/advantages.py --sizes 16 --repeats 200 --no-baseline
"""

from __future__ import annotations

import argparse
import functools
import importlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result

from envhub.algos import compute_advantages
from envhub.core.records import StepBatch
from envhub.envs import resolve

#: The spec whose advantage defaults the estimators use (they never look a name up themselves).
ALFWORLD = resolve("alfworld")

TRAJS_PER_GROUP = 8
STEPS = 50
STATES_PER_TASK = 40
TARGETS_MS = {("gigpo", 6400): 5.0, ("hgpo K=4", 6400): 15.0}


def make_batch(groups: int, *, shuffle: bool = False, seed: int = 0) -> StepBatch:
    """``groups`` x 8 trajectories x 50 steps of ALFWorld-like rows.

    Rows come in rollout order (grouped by trajectory, steps in order) unless ``shuffle``.
    """
    rng = np.random.default_rng(seed)
    n_traj = groups * TRAJS_PER_GROUP
    n = n_traj * STEPS
    group_of_row = np.repeat(np.arange(groups), TRAJS_PER_GROUP * STEPS)
    traj_of_row = np.repeat(np.arange(n_traj), STEPS)
    step = np.tile(np.arange(STEPS), n_traj)
    # Each task has its own pool of states; a trajectory wanders through it, so states repeat.
    state = rng.integers(0, STATES_PER_TASK, n)
    state[step == 0] = 0  # every trajectory of a task starts in the same state
    pool = np.array(
        [
            f"You are in the middle of a room. Looking around you, you see object {i % 97}, "
            f"a shelf {i // 97}, and a countertop."
            for i in range(groups * STATES_PER_TASK)
        ],
        dtype=object,
    )
    anchor = pool[group_of_row * STATES_PER_TASK + state]
    won = rng.random(n_traj) < 0.3
    reward = np.where((step == STEPS - 1) & won[traj_of_row], 10.0, 0.0)
    uids = np.array([f"task-{g}" for g in range(groups)], dtype=object)
    trajs = np.array([f"traj-{t}" for t in range(n_traj)], dtype=object)
    perm = rng.permutation(n) if shuffle else np.arange(n)
    return StepBatch(
        uid=uids[group_of_row][perm],
        traj_id=trajs[traj_of_row][perm],
        step_idx=step[perm].astype(np.int64),
        anchor=anchor[perm],
        reward=reward[perm],
        is_action_valid=(rng.random(n) > 0.1)[perm],
    )


ESTIMATORS: dict[str, Callable[[StepBatch], Any]] = {
    "grpo": lambda b: compute_advantages(b, "grpo", env=ALFWORLD),
    "gigpo": lambda b: compute_advantages(b, "gigpo", env=ALFWORLD),
    "hgpo K=2": lambda b: compute_advantages(b, "hgpo", env=ALFWORLD, history_length=2),
    "hgpo K=4": lambda b: compute_advantages(b, "hgpo", env=ALFWORLD, history_length=4),
    "graphgpo": lambda b: compute_advantages(b, "graphgpo", env=ALFWORLD),
}


def python_baselines(batch: StepBatch) -> dict[str, Callable[[], Any]]:
    """The tests' pure-Python (dict and loop) estimators on the same rows, for a ratio."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    # tests/algos/reference_impl.py, imported by name: tests/ is not an installed package.
    ref = importlib.import_module("algos.reference_impl")
    row = importlib.import_module("algos.builders").Row

    rows = [
        row(u, t, int(s), a, float(r), bool(v))
        for u, t, s, a, r, v in zip(
            batch.uid,
            batch.traj_id,
            batch.step_idx,
            batch.anchor,
            batch.reward,
            batch.is_action_valid,
            strict=True,
        )
    ]
    common = {"gamma": 0.95, "coef": 0.1, "by_agent": False, "eps": 1e-6, "mode": "mean_std_norm"}
    return {
        "gigpo (python loops)": lambda: ref.gigpo(rows, w=1.0, **common),
        "hgpo K=4 (python loops)": lambda: ref.hgpo(rows, k=4, alpha=1.0, base=False, **common),
    }


def time_call(fn: Callable[[], Any], repeats: int) -> tuple[list[float], list[float]]:
    """Wall-clock and process-CPU seconds of ``repeats`` calls (after one warm-up call)."""
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return wall, cpu


def measure(groups: int, *, shuffle: bool, baseline: bool, repeats: int) -> list[dict[str, Any]]:
    """Time every estimator (and, with ``baseline``, the pure-Python ones) on one batch."""
    batch = make_batch(groups, shuffle=shuffle)
    n = len(batch)
    repeats = repeats or (50 if n <= 10_000 else 7 if n <= 200_000 else 3)
    calls: dict[str, Callable[[], Any]] = {
        name: functools.partial(fn, batch) for name, fn in ESTIMATORS.items()
    }
    if baseline:
        calls.update(python_baselines(batch))
    out = []
    for name, call in calls.items():
        count = 5 if "python" in name else repeats
        wall, cpu = time_call(call, count)
        median, cpu_median = statistics.median(wall), statistics.median(cpu)
        out.append(
            {
                "estimator": name,
                "order": "shuffled" if shuffle else "rollout",
                "rows": n,
                "groups": groups,
                "repeats": count,
                "median_ms": median * 1e3,
                "min_ms": min(wall) * 1e3,
                "cpu_median_ms": cpu_median * 1e3,
                "rows_per_s": n / median,
                "cpu_rows_per_s": n / cpu_median if cpu_median > 0 else None,
                "cpu_ns_per_row": cpu_median / n * 1e9,
                "target_ms": TARGETS_MS.get((name, n)),
            }
        )
    return out


def print_table(rows: list[dict[str, Any]]) -> None:
    table = Table(
        title=f"Advantage estimators ({TRAJS_PER_GROUP} traj x {STEPS} steps per group, ALFWorld defaults)"
    )
    columns = ("estimator", "order", "rows", "wall median ms", "wall min ms", "cpu median ms", "cpu rows/s")
    for col in (*columns, "cpu ns/row", "target"):
        table.add_column(col, justify="left" if col in ("estimator", "order") else "right")
    for r in rows:
        table.add_row(
            r["estimator"],
            r["order"],
            f"{r['rows']:,}",
            f"{r['median_ms']:.2f}",
            f"{r['min_ms']:.2f}",
            f"{r['cpu_median_ms']:.2f}",
            f"{r['cpu_rows_per_s']:,.0f}" if r["cpu_rows_per_s"] else "-",
            f"{r['cpu_ns_per_row']:.0f}",
            "" if r["target_ms"] is None else f"<= {r['target_ms']:g} ms",
        )
    Console(width=130).print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 250, 2500], help="groups per batch")
    parser.add_argument("--repeats", type=int, default=0, help="timed calls per cell (0: by size)")
    parser.add_argument(
        "--shuffled-max-rows",
        type=int,
        default=200_000,
        help="also time shuffled rows for batches up to this many rows (0: never)",
    )
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip the pure-Python estimators at the smallest size"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 16 groups, one timed call per cell (tests/test_bench.py)",
    )
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeats = [16], 1

    rows: list[dict[str, Any]] = []
    for groups in args.sizes:
        n = groups * TRAJS_PER_GROUP * STEPS
        baseline = groups == min(args.sizes) and not args.no_baseline
        rows += measure(groups, shuffle=False, baseline=baseline, repeats=args.repeats)
        if n <= args.shuffled_max_rows:
            rows += measure(groups, shuffle=True, baseline=False, repeats=args.repeats)
    print_table(rows)
    parameters = {
        "sizes_groups": args.sizes,
        "trajs_per_group": TRAJS_PER_GROUP,
        "steps": STEPS,
        "states_per_task": STATES_PER_TASK,
        "shuffled_max_rows": args.shuffled_max_rows,
        "config": "compute_advantages(batch, algo, env=envhub.envs.resolve('alfworld'))",
    }
    print(f"wrote {write_result('advantages', parameters, rows)}")


if __name__ == "__main__":
    main()

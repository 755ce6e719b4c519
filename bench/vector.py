"""Stepping N sessions of one server: one batch request per step, or N separate clients?

``envhub/TimeSeries-v0`` served by ``envhub serve`` (a subprocess, 2 workers) is played by
two Gymnasium vector envs with the same N, the same seeds and the same action script (seven
tool calls and an answer, autoreset by the vector env):

* ``RemoteVectorEnv``: ``gymnasium.make_vec("envhub/Remote-v0", num_envs=N, base_url=...)``,
  one ``POST /v1/batch/step`` per vector step;
* ``N x RemoteEnv``: ``gymnasium.make_vec(..., vectorization_mode="sync")``, a
  ``SyncVectorEnv`` of N ``RemoteEnv`` clients, N ``POST /v1/sessions/{id}/step`` per step.

For reference, ``local sync`` is ``make_vec("envhub/TimeSeries-v0", N)`` in this process.
Client and server share the machine. Steps/s counts sub-env steps (N per vector step).

Usage::

    python bench/vector.py           # N = 4, 16, 64; 40 vector steps each
    python bench/vector.py --quick   # N = 4, 16; 10 vector steps
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import envhub
from bench._common import write_result
from bench.server_load import TS_SCRIPT, running_server

ENV_KWARGS = {"images": False}


@dataclass
class Row:
    """One line of the result table."""

    system: str
    num_envs: int
    vector_steps: int
    seconds: float
    steps_per_s: float
    ms_per_vector_step: float


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _time(
    system: str, make: Callable[[], gymnasium.vector.VectorEnv[Any, Any, Any]], n: int, steps: int
) -> Row:
    envs = make()
    try:
        envs.reset(seed=0)
        envs.step([TS_SCRIPT[0]] * n)  # warm connections and workers
        start = time.perf_counter()
        for k in range(steps):
            envs.step([TS_SCRIPT[(k + i) % len(TS_SCRIPT)] for i in range(n)])
        seconds = time.perf_counter() - start
    finally:
        envs.close()
    return Row(
        system, n, steps, round(seconds, 3), round(n * steps / seconds, 1), round(1000 * seconds / steps, 2)
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="N = 4, 16 and 10 vector steps")
    args = parser.parse_args()
    sizes, steps = ((4, 16), 10) if args.quick else ((4, 16, 64), 40)
    envhub.register_all()
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    cmd = ["-m", "envhub.cli", "serve", "envhub/TimeSeries-v0", "--port", str(port), "--workers", "2"]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as logs, running_server(cmd, port, log=Path(logs) / "server.log"):
        for n in sizes:
            rows.append(
                _time(
                    "RemoteVectorEnv",
                    lambda n=n: gymnasium.make_vec(  # type: ignore[misc]
                        "envhub/Remote-v0", num_envs=n, base_url=base_url, env_kwargs=ENV_KWARGS
                    ),
                    n,
                    steps,
                )
            )
            rows.append(
                _time(
                    "N x RemoteEnv",
                    lambda n=n: gymnasium.make_vec(  # type: ignore[misc]
                        "envhub/Remote-v0",
                        num_envs=n,
                        vectorization_mode="sync",
                        base_url=base_url,
                        env_kwargs=ENV_KWARGS,
                    ),
                    n,
                    steps,
                )
            )
            rows.append(
                _time(
                    "local sync",
                    lambda n=n: gymnasium.make_vec(  # type: ignore[misc]
                        "envhub/TimeSeries-v0", num_envs=n, vectorization_mode="sync", **ENV_KWARGS
                    ),
                    n,
                    steps,
                )
            )
    print(f"{'system':<17} {'N':>4} {'steps':>6} {'s':>8} {'steps/s':>9} {'ms/vec step':>12}")
    for row in rows:
        print(
            f"{row.system:<17} {row.num_envs:>4} {row.vector_steps:>6} {row.seconds:>8.3f} "
            f"{row.steps_per_s:>9.1f} {row.ms_per_vector_step:>12.2f}"
        )
    path = write_result(
        "vector",
        {"env": "envhub/TimeSeries-v0", "sizes": list(sizes), "vector_steps": steps, "server_workers": 2},
        [asdict(row) for row in rows],
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

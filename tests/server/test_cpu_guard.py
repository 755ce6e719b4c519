"""Guard: envhub's server spends less CPU per step than OpenEnv's on the same trivial env.

A short version of ``bench/server_load.py`` part A: both servers up at once, the systems run
in turn for a few rounds after a warm-up round (interleaved, so a busy moment on a shared
machine hits both), and the median server CPU per step (the server process and its
workers, from psutil) is compared as a ratio within this one run, never against an absolute
time: the machine's speed cancels.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.needs import require_module

ROUNDS = 5
SESSIONS = 32
STEPS = 100  # 3,200 steps a round: CPU ticks of 10 ms are ~3 us per step


@pytest.mark.timeout(300)
def test_envhub_server_cpu_per_step_is_below_openenv_in_the_same_run(tmp_path: Path) -> None:
    require_module("openenv.core", extra="openenv")
    from bench import server_load as bench

    oe_port, eh_port = bench._free_port(), bench._free_port()
    openenv_cmd = ["-m", "uvicorn", "--factory", "bench.counter_env:create_openenv_app"]
    openenv_cmd += ["--port", str(oe_port), "--workers", "1", "--log-level", "warning", "--no-access-log"]
    envhub_cmd = ["-m", "envhub.cli", "serve", "bench.counter_env:CounterEnv", "--port", str(eh_port)]
    with contextlib.ExitStack() as stack:
        openenv = stack.enter_context(bench.running_server(openenv_cmd, oe_port, log=tmp_path / "oe.log"))
        envhub = stack.enter_context(bench.running_server(envhub_cmd, eh_port, log=tmp_path / "eh.log"))
        oe_url, eh_url = f"http://127.0.0.1:{oe_port}", f"http://127.0.0.1:{eh_port}"
        runs = bench.interleaved(
            {
                "OpenEnv WS": lambda: bench.ws_load(openenv, oe_url, "OpenEnv WS", SESSIONS, STEPS),
                "envhub REST": lambda: bench.rest_load(envhub, eh_url, SESSIONS, STEPS),
                "envhub WS": lambda: bench.ws_load(envhub, eh_url, "envhub WS", SESSIONS, STEPS),
                "envhub batch": lambda: bench.batch_load(envhub, eh_url, SESSIONS, STEPS),
            },
            ROUNDS + 1,
        )
    assert all(row.errors == 0 for rows in runs.values() for row in rows)
    # The first round warms both servers up (imports on first use, connection setup): not counted.
    reference = bench.median_row(runs["OpenEnv WS"][1:]).server_cpu_us_per_step
    for name in ("envhub REST", "envhub WS", "envhub batch"):
        mine = bench.median_row(runs[name][1:]).server_cpu_us_per_step
        assert mine / reference < 1.0, (
            f"{name}: {mine:.0f} us of server CPU per step against OpenEnv's {reference:.0f} in the same run"
        )

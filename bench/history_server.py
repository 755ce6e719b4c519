"""Server-side AgentOCR history: inline PNG in the step response, or a link the client GETs?

One question: which way of delivering the history image is cheaper for a rollout that needs
every image. Three modes run on one real ALFWorld server (loopback, ``serve_in_thread``):

* ``none``: no history (the baseline step);
* ``inline``: the PNG rides base64-encoded in the step response;
* ``link``: the step response carries a URL; the client GETs ``/v1/sessions/{id}/history.png``.

Two workloads: one 30-step episode through ``EnvClient.step`` and a group of 8 stepped 30
times through ``EnvClient.batch_step`` (link mode then fetches 8 PNGs per step). Measured per
step: bytes received (a counting httpx transport), server render + PNG-encode time (from the
worker counters in ``/metrics``), wall time end to end through the real client, and CPU time
(the workers' from /proc, plus this process's: server event loop and client together), which
a loaded machine disturbs far less than wall time. The
actions are a fixed deterministic walk (moves, open, close, look), so every mode sees the same
histories.

    python bench/history_server.py            # 3 repeats per mode, interleaved
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result

from envhub.client import EnvClient
from envhub.envs.alfworld.data import embedded_data_dir
from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread

STEPS = 30
ENV_KWARGS = {"data_dir": str(embedded_data_dir().parent)}
MODES: dict[str, dict[str, Any] | None] = {
    "none": None,
    "inline": {"inline": True},
    "link": {"inline": False},
}


class CountingTransport(httpx.HTTPTransport):
    """Counts response body bytes (what the client receives)."""

    def __init__(self) -> None:
        super().__init__()
        self.received = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        response.read()
        self.received += len(response.content)
        return response


def pick(admissible: list[str], t: int) -> str:
    choices = sorted(a for a in admissible if a.startswith(("go to ", "open ", "close ", "examine ", "look")))
    return choices[(7 * t) % len(choices)]


def worker_seconds(base_url: str) -> float:
    text = httpx.get(f"{base_url}/metrics", timeout=30).text
    total = 0.0
    for name in ("envhub_history_render_seconds_sum", "envhub_history_png_encode_seconds_total"):
        match = re.search(rf"^{name}\{{[^}}]*\}} (\S+)$", text, re.MULTILINE)
        total += float(match.group(1)) if match else 0.0
    return total


def worker_cpu_s(base_url: str) -> float:
    """User + system CPU seconds of the server's worker processes (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for worker in httpx.get(f"{base_url}/v1/debug/workers", timeout=30).json()["workers"]:
        fields = Path(f"/proc/{worker['pid']}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def episode(base_url: str, history: dict[str, Any] | None, size: int, steps: int = STEPS) -> dict[str, float]:
    transport = CountingTransport()
    with EnvClient(base_url, transport=transport, timeout_s=300) as client:
        task = client.tasks(limit=1).task_ids[0]
        group = client.create_group(size, task_id=task, env_kwargs=ENV_KWARGS, history=history)
        sids = [m.session_id for m in group.sessions]
        admissible = group.sessions[0].info["admissible_actions"]
        fetch = history is not None and history.get("inline") is False
        server_before = worker_seconds(base_url)
        cpu_before = worker_cpu_s(base_url) + time.process_time()
        transport.received = 0
        started = time.perf_counter()
        for t in range(steps):
            action = pick(admissible, t)
            if size == 1:
                results = [client.step(sids[0], action)]
            else:
                reply = client.batch_step([(sid, action) for sid in sids])
                results = [slot.result for slot in reply.results if slot.result is not None]
            if fetch:
                for sid in sids:
                    client.fetch_history_png(sid)
            admissible = results[0].info["admissible_actions"]
        wall = time.perf_counter() - started
        received = transport.received
        cpu = worker_cpu_s(base_url) + time.process_time() - cpu_before
        server = worker_seconds(base_url) - server_before
        for sid in sids:
            client.delete_session(sid)
    return {
        "wall_ms_per_step": 1000 * wall / steps,
        "kib_per_step": received / 1024 / steps,
        "server_render_ms_per_step": 1000 * server / steps,
        "cpu_ms_per_step": 1000 * cpu / steps,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1 repetition of 5 steps, groups of 1 and 2"
    )
    args = parser.parse_args()
    steps, sizes = STEPS, (1, 8)
    if args.quick:
        args.repeats, steps, sizes = 1, 5, (1, 2)
    rows: list[dict[str, Any]] = []
    with serve_in_thread(ServerSettings(env_id="envhub/ALFWorld-v0", workers=2)) as server:
        for size in sizes:
            samples: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
            for _ in range(args.repeats):
                for mode, history in MODES.items():
                    samples[mode].append(episode(server.base_url, history, size, steps))
            for mode, runs in samples.items():
                row: dict[str, Any] = {
                    "workload": "single" if size == 1 else f"batch of {size}",
                    "mode": mode,
                }
                for key in runs[0]:
                    row[key] = round(statistics.median(r[key] for r in runs), 3)
                rows.append(row)
    print(
        f"{'workload':<11} {'mode':<7} {'wall ms/step':>13} {'KiB/step':>9} "
        f"{'worker render ms/step':>22} {'CPU ms/step':>12}"
    )
    for row in rows:
        print(
            f"{row['workload']:<11} {row['mode']:<7} {row['wall_ms_per_step']:>13.2f} "
            f"{row['kib_per_step']:>9.1f} {row['server_render_ms_per_step']:>22.2f} "
            f"{row['cpu_ms_per_step']:>12.2f}"
        )
    path = write_result("history_server", {"steps": steps, "repeats": args.repeats}, rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

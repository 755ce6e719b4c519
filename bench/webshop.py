"""WebShop: text-mode step latency, memory of 32 sessions sharing one shop, HTML-mode latency.

* text mode: the scripted shopper plays ``--episodes`` goals (search, open, options, buy);
  every ``env.step`` is timed, after one warm-up episode (which loads spaCy);
* memory: a fresh Python process imports envhub, loads the shop (catalogue, index, spaCy),
  opens 32 sessions and plays one purchase in each; its RSS is reported at each stage;
* HTML mode: the same shopper through selenium + headless Chromium for ``--html-episodes``
  goals (skipped when chromium/chromedriver are missing).

    python bench/webshop.py
    python bench/webshop.py --episodes 400 --html-episodes 10 --screenshot docs/webshop_item_page.png
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result

from envhub.core.env import AgentEnv
from envhub.envs.webshop.policy import ScriptedShopper


def _kind(action: str) -> str:
    if action.startswith("search["):
        return "search"
    return "buy" if action == "click[buy now]" else "click"


def play(env: AgentEnv, task_ids: list[str], on_item: Any = None) -> dict[str, list[float]]:
    """Play the scripted shopper on ``task_ids``; return step times (s) by action kind."""
    times: dict[str, list[float]] = {"search": [], "click": [], "buy": []}
    for task_id in task_ids:
        obs, info = env.reset(options={"task_id": task_id})
        policy = ScriptedShopper(0)
        policy.reset(obs, info)
        for _ in range(15):
            action = policy.act(obs, info)
            t0 = time.perf_counter()
            obs, _, terminated, _, info = env.step(action)
            times[_kind(action)].append(time.perf_counter() - t0)
            if on_item is not None and info.get("page") == "item":
                on_item(env)  # called on every item page, so the last shot shows the chosen options
            if terminated:
                break
    return times


def _stats(name: str, times: dict[str, list[float]]) -> dict[str, Any]:
    every = [t for ts in times.values() for t in ts]
    row: dict[str, Any] = {
        "mode": name,
        "steps": len(every),
        "p50_ms": 1000 * statistics.median(every),
        "p95_ms": 1000 * statistics.quantiles(every, n=20)[18],
    }
    for kind, ts in times.items():
        row[f"{kind}_p50_ms"] = 1000 * statistics.median(ts) if ts else None
    return row


def bench_text(episodes: int) -> dict[str, Any]:
    from envhub.envs.webshop.env import WebShopEnv

    env = WebShopEnv()
    play(env, ["0"])  # warm-up: loads the spaCy model and builds the index
    tasks = [str(i) for i in range(episodes)]
    row = _stats("text", play(env, tasks))
    env.close()
    return row


_MEMORY_CHILD = """
import json, os, psutil
from envhub.envs.webshop.env import WebShopEnv
from envhub.envs.webshop.policy import ScriptedShopper
rss = lambda: psutil.Process(os.getpid()).memory_info().rss / 2**20
out = {"after_import_mb": rss()}
from envhub.envs.webshop.data import load_shop_data
shop = load_shop_data()
shop.index; shop.tagger
out["after_shop_mb"] = rss()
envs = [WebShopEnv(shop=shop) for _ in range(32)]
won = 0
for i, env in enumerate(envs):
    obs, info = env.reset(options={"task_id": str(i)})
    policy = ScriptedShopper(0); policy.reset(obs, info)
    for _ in range(15):
        obs, r, done, _, info = env.step(policy.act(obs, info))
        if done:
            break
    won += bool(info["won"])
out["after_32_sessions_mb"] = rss()
out["won"] = won
print(json.dumps(out))
"""


def bench_memory() -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-c", _MEMORY_CHILD], capture_output=True, text=True, check=True)
    numbers = json.loads(result.stdout.strip().splitlines()[-1])
    numbers["per_session_mb"] = (numbers["after_32_sessions_mb"] - numbers["after_shop_mb"]) / 32
    return numbers


def bench_html(episodes: int, screenshot: Path | None) -> dict[str, Any] | None:
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        Console().print("[yellow]HTML mode skipped: chromium/chromedriver not on PATH[/]")
        return None
    from envhub.envs.webshop.html_env import WebShopHTMLEnv

    env = WebShopHTMLEnv()

    def shoot(e: Any) -> None:
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(e.screenshot_png())

    t0 = time.perf_counter()
    play(env, ["0"], on_item=shoot)  # warm-up: starts Chromium and the site, loads spaCy

    startup = time.perf_counter() - t0
    row = _stats("html", play(env, [str(i) for i in range(1, episodes + 1)]))
    row["first_episode_s"] = startup
    env.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=200, help="text-mode episodes")
    parser.add_argument("--html-episodes", type=int, default=8, help="HTML-mode episodes (0 to skip)")
    parser.add_argument("--screenshot", type=Path, default=None, help="save the first item page as PNG here")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 5 text episodes, no HTML mode (tests/test_bench.py)"
    )
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.html_episodes = 5, 0

    rows = [bench_text(args.episodes)]
    html = bench_html(args.html_episodes, args.screenshot) if args.html_episodes > 0 else None
    if html is not None:
        rows.append(html)
    memory = bench_memory()

    table = Table(title="WebShop step latency (scripted shopper)")
    for column in ("mode", "steps", "p50 ms", "p95 ms", "search p50", "click p50", "buy p50"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            row["mode"], str(row["steps"]), f"{row['p50_ms']:.2f}", f"{row['p95_ms']:.2f}",
            f"{row['search_p50_ms']:.2f}", f"{row['click_p50_ms']:.2f}", f"{row['buy_p50_ms']:.2f}",
        )  # fmt: skip
    console = Console()
    console.print(table)
    mem = Table(title="WebShop memory: one process, 32 sessions sharing one shop (RSS, MiB)")
    for column in ("after import", "after shop load", "after 32 sessions", "per session", "won"):
        mem.add_column(column, justify="right")
    mem.add_row(
        f"{memory['after_import_mb']:.0f}",
        f"{memory['after_shop_mb']:.0f}",
        f"{memory['after_32_sessions_mb']:.0f}",
        f"{memory['per_session_mb']:.2f}", f"{memory['won']}/32",
    )  # fmt: skip
    console.print(mem)
    path = write_result(
        "webshop",
        {
            "episodes": args.episodes,
            "html_episodes": args.html_episodes,
            "data": "embedded (60 products, 632 goals)",
        },
        [*rows, {"mode": "memory", **memory}],
    )
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""Recorded runs for the viewer tests: real rollouts written the way envhub-train writes a run.

A scripted policy plays real envs through the rollout engine (the trainer's own driver), and
the groups go to ``rollouts/iter_<k>.jsonl`` through the trainer's writer, next to a
``metrics.jsonl`` from the trainer's logger and the ``config.json`` a run keeps.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from envhub.core.records import Group

ENV = "envhub/TimeSeries-v0"
#: Random Sokoban moves often bump walls, so trajectories share histories: HGPO's deep levels fill.
SOKOBAN = "envhub/Sokoban-v0"


def play_groups(
    *,
    env_id: str = ENV,
    tasks: int = 3,
    group_size: int = 4,
    seed: int = 0,
    agentocr: bool = False,
    version: int = 0,
) -> list[Group]:
    """Real groups of ``env_id`` played by its random baseline policy (varied returns)."""
    import envhub
    from envhub.core.registry import load_entry_point
    from envhub.core.wire import ContextConfig, RolloutRequest
    from envhub.envs import resolve
    from envhub.policy.scripted import ScriptedBackend
    from envhub.rollout.engine import GroupTask, RolloutEngine
    from envhub.rollout.envpool import InProcessEnvPool
    from envhub.rollout.queue.memory import MemoryQueue

    spec = resolve(env_id)
    policy = load_entry_point(spec.baseline_policy)

    async def play() -> list[Group]:
        queue = MemoryQueue()
        envs = InProcessEnvPool(lambda **kw: envhub.make(env_id, **kw), env_id=env_id)
        backend = ScriptedBackend(make_policy=lambda i: policy(seed=seed + i), policy_version=version)
        engine = RolloutEngine(
            envs=envs,
            backend=backend,
            config=RolloutRequest(
                group_size=group_size,
                max_steps=6,
                context=ContextConfig(
                    agentocr=agentocr,
                    inline_images=agentocr,
                    render_preset="search" if agentocr else None,
                ),
                split="train",
                seed=seed,
            ),
            queue=queue,
        )
        ids = await envs.task_ids("train", tasks)
        await engine.run([GroupTask(i, t, seed + i) for i, t in enumerate(ids)])
        out = [d.group for d in await queue.get(tasks, timeout_s=1)]
        await envs.aclose()
        return sorted(out, key=lambda g: g.task_id)

    return asyncio.run(play())


def record_run(
    run_dir: Path,
    *,
    algo: str,
    env_id: str = ENV,
    iterations: int = 2,
    tasks: int = 3,
    advantage: dict[str, Any] | None = None,
    agentocr: bool = False,
) -> dict[int, list[Group]]:
    """A run folder with ``iterations`` iterations of recorded groups and their metrics."""
    from envhub.train.tracking import MetricsLogger, write_groups
    from envhub.train.trainer import rollout_metrics

    run_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "algo": algo,
        "env": env_id,
        "advantage": advantage or {},
        "model": {"path": "none"},
        "iterations": iterations,
    }
    (run_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    logger = MetricsLogger(run_dir, tensorboard=False)
    recorded = {}
    logger.log(0, {"val/success": 0.1, "val/reward": 0.2})
    for k in range(1, iterations + 1):
        groups = play_groups(env_id=env_id, tasks=tasks, seed=100 * k, agentocr=agentocr, version=k - 1)
        write_groups(run_dir, k, groups)
        metrics = rollout_metrics(groups)
        if k == iterations:
            metrics.update({"val/success": 0.5, "val/reward": 0.6})
        logger.log(k, metrics)
        recorded[k] = groups
    logger.close()
    return recorded


def record_eval(out: Path, *, tasks: int = 3, n: int = 4) -> list[Group]:
    """An ``envhub eval`` output folder in the format of docs/eval.md, from real rollouts."""
    groups = play_groups(tasks=tasks, group_size=n, seed=7)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "episodes.jsonl").open("w", encoding="utf-8") as f:
        for slot, g in enumerate(groups):
            for sample, t in enumerate(g.trajectories):
                row = {
                    "slot": slot,
                    "sample": sample,
                    "task_id": g.task_id,
                    "env_id": g.env_id,
                    "uid": g.uid,
                    "traj_id": t.traj_id,
                    "reward": t.episode_return,
                    "won": t.won,
                    "task_score": t.task_score,
                    "steps": t.length,
                    "prompt_tokens": None,
                    "response_tokens": None,
                    "invalid_actions": sum(not s.is_action_valid for s in t.steps),
                    "wall_s": 0.1,
                    "policy_version": g.policy_version,
                    "breakdown": {"anomaly_kind": "spike"},
                    "trajectory": t.model_dump(mode="json"),
                }
                f.write(json.dumps(row) + "\n")
        f.write('{"slot": 9, "sample": 0, "traj')  # a torn last line, as a killed run leaves
    won = [t.won for g in groups for t in g.trajectories]
    interval = {"value": sum(won) / len(won), "lo": 0.0, "hi": 1.0, "method": "wilson", "confidence": 0.95}
    report = {
        "schema": "envhub.eval/1",
        "env_id": ENV,
        "policy": "random",
        "config": {"env": ENV, "policy": "random", "n": n},
        "tasks": tasks,
        "n": n,
        "episodes": len(won),
        "success": interval,
        "mean_reward": {**interval, "method": "bootstrap_tasks"},
        "pass_at_k": {"1": interval, "4": {**interval, "value": 0.75}},
        "avg_at_k": {"1": interval},
        "pass_hat_k": {"1": interval},
        "breakdown": {"anomaly_kind": {"spike": {"tasks": tasks, "episodes": len(won), "success": interval}}},
    }
    (out / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return groups

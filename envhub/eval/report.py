"""From episodes to numbers: the report, its Markdown summary, its plots, and a comparison.

An episode row (one line of ``episodes.jsonl``, docs/eval.md) is built from a recorded
:class:`~envhub.core.records.Trajectory`; everything in the report is computed from those rows,
so any number can be traced to the episodes behind it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Trajectory
from envhub.core.registry import EnvSpec, load_entry_point
from envhub.eval.metrics import (
    Interval,
    avg_at_k,
    bootstrap_tasks,
    pass_at_k,
    pass_hat_k,
    summary_stats,
    wilson,
)

__all__ = [
    "SCHEMA",
    "BreakdownFn",
    "breakdown_of",
    "build_report",
    "compare_reports",
    "episode_row",
    "format_interval",
    "metrics_from_groups",
    "read_report",
    "report_mismatch",
    "write_markdown",
    "write_plots",
]

SCHEMA = "envhub.eval/1"

#: ``f(task_id, task_score) -> {dimension: label}``: an env's breakdown (``EnvSpec.breakdown``).
BreakdownFn = Callable[[str, float], Mapping[str, str]]


def breakdown_of(spec: EnvSpec | None) -> BreakdownFn | None:
    """The breakdown function an env declares (None when it declares none)."""
    path = getattr(spec, "breakdown", None) if spec is not None else None
    return load_entry_point(path) if path else None


def _tokens(traj: Trajectory, attr: str) -> int | None:
    total = 0
    for step in traj.steps:
        ids = getattr(step, attr)
        if ids is None:
            return None
        total += len(ids)
    return total if traj.steps else None


def episode_row(
    traj: Trajectory,
    *,
    slot: int,
    sample: int,
    wall_s: float,
    breakdown: BreakdownFn | None = None,
) -> dict[str, Any]:
    """One line of ``episodes.jsonl`` for a recorded trajectory."""
    versions = [s.policy_version for s in traj.steps if s.policy_version is not None]
    return {
        "slot": slot,
        "sample": sample,
        "task_id": traj.task_id,
        "env_id": traj.env_id,
        "uid": traj.uid,
        "traj_id": traj.traj_id,
        "reward": traj.episode_return,
        "won": bool(traj.won),
        "task_score": float(traj.task_score),
        "steps": len(traj.steps),
        "prompt_tokens": _tokens(traj, "prompt_token_ids"),
        "response_tokens": _tokens(traj, "response_token_ids"),
        "invalid_actions": sum(not s.is_action_valid for s in traj.steps),
        "wall_s": float(wall_s),
        "policy_version": versions[-1] if versions else None,
        "breakdown": dict(breakdown(traj.task_id, float(traj.task_score))) if breakdown else {},
        "trajectory": traj.model_dump(mode="json"),
    }


def _by_task(rows: Iterable[Mapping[str, Any]]) -> dict[Any, list[Mapping[str, Any]]]:
    tasks: dict[Any, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        tasks[(row["slot"], row["task_id"])].append(row)
    return dict(tasks)


def _k_metrics(tasks: Sequence[Sequence[Mapping[str, Any]]], ks: Sequence[int], seed: int) -> dict[str, Any]:
    wins = [[float(r["won"]) for r in t] for t in tasks]
    n_min = min((len(t) for t in wins), default=0)
    out: dict[str, dict[str, Interval]] = {"pass_at_k": {}, "avg_at_k": {}, "pass_hat_k": {}}
    for k in ks:
        if not 1 <= k <= n_min:
            continue
        for key, fn in (("pass_at_k", pass_at_k), ("avg_at_k", avg_at_k), ("pass_hat_k", pass_hat_k)):

            def stat(ts: Sequence[Sequence[float]], fn: Any = fn, k: int = k) -> float:
                return sum(fn(len(t), int(sum(t)), k) for t in ts) / len(ts)

            out[key][str(k)] = bootstrap_tasks(wins, stat, seed=seed)
    return out


def _mean_reward(tasks: Sequence[Sequence[Mapping[str, Any]]], seed: int) -> Interval:
    rewards = [[float(r["reward"]) for r in t] for t in tasks]

    def stat(ts: Sequence[Sequence[float]]) -> float:
        flat = [v for t in ts for v in t]
        return sum(flat) / len(flat)

    return bootstrap_tasks(rewards, stat, seed=seed)


def _cell(rows: Sequence[Mapping[str, Any]], ks: Sequence[int], seed: int) -> dict[str, Any]:
    tasks = list(_by_task(rows).values())
    return {
        "tasks": len(tasks),
        "episodes": len(rows),
        "success": wilson(sum(bool(r["won"]) for r in rows), len(rows)),
        "mean_reward": _mean_reward(tasks, seed),
        **_k_metrics(tasks, ks, seed),
    }


def build_report(
    rows: Sequence[Mapping[str, Any]],
    *,
    env_id: str,
    policy: str,
    config: Mapping[str, Any],
    ks: Sequence[int],
    seed: int = 0,
    plots: Sequence[str] = (),
) -> dict[str, Any]:
    """The report of docs/eval.md from the episode rows."""
    rows = sorted(rows, key=lambda r: (r["slot"], r["sample"]))
    tasks = _by_task(rows)
    cell = _cell(rows, ks, seed)
    dimensions: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for dim, label in (row.get("breakdown") or {}).items():
            dimensions[dim][str(label)].append(row)
    return {
        "schema": SCHEMA,
        "env_id": env_id,
        "policy": policy,
        "config": dict(config),
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tasks": len(tasks),
        "n": max((len(t) for t in tasks.values()), default=0),
        **{k: v for k, v in cell.items() if k != "tasks"},
        "per_episode": {
            key: summary_stats([r[key] for r in rows])
            for key in ("steps", "wall_s", "prompt_tokens", "response_tokens", "invalid_actions")
        },
        "breakdown": {
            dim: {label: _cell(cell_rows, ks, seed) for label, cell_rows in sorted(labels.items())}
            for dim, labels in sorted(dimensions.items())
        },
        "plots": list(plots),
    }


def metrics_from_groups(
    groups: Sequence[Group], *, spec: EnvSpec | None = None, ks: Sequence[int] = (1,), prefix: str = "val/"
) -> dict[str, float]:
    """Flat eval numbers of played groups (one group = one task's samples), for a run's metrics.

    The trainer's validation logs these: ``val/success``, ``val/success_lo``/``_hi``,
    ``val/mean_reward``, ``val/pass@k``, ``val/pass^k``, and ``val/success/<dim>/<label>``.
    """
    fn = breakdown_of(spec)
    rows = [
        episode_row(t, slot=slot, sample=i, wall_s=0.0, breakdown=fn)
        for slot, g in enumerate(groups)
        for i, t in enumerate(g.trajectories)
    ]
    if not rows:
        return {}
    report = build_report(rows, env_id=groups[0].env_id, policy="", config={}, ks=ks, seed=0)
    out = {
        f"{prefix}success": report["success"]["value"],
        f"{prefix}success_lo": report["success"]["lo"],
        f"{prefix}success_hi": report["success"]["hi"],
        f"{prefix}mean_reward": report["mean_reward"]["value"],
    }
    for k, interval in report["pass_at_k"].items():
        out[f"{prefix}pass@{k}"] = interval["value"]
    for k, interval in report["pass_hat_k"].items():
        out[f"{prefix}pass^{k}"] = interval["value"]
    for dim, labels in report["breakdown"].items():
        for label, cell in labels.items():
            out[f"{prefix}success/{dim}/{label}"] = cell["success"]["value"]
    return {k: float(v) for k, v in out.items() if v is not None}


def format_interval(interval: Mapping[str, Any] | None, pct: bool = True) -> str:
    if not interval or interval.get("value") is None:
        return "-"
    fmt = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.3f}")
    text = fmt(interval["value"])
    if interval.get("lo") is not None:
        text += f" [{fmt(interval['lo'])}, {fmt(interval['hi'])}]"
    return text


def write_markdown(report: Mapping[str, Any], path: Path) -> None:
    """``summary.md``: the headline numbers, pass@k, per-episode costs and the breakdowns."""
    lines = [
        f"# eval: {report['env_id']} with {report['policy']}",
        "",
        f"{report['tasks']} tasks x n={report['n']} = {report['episodes']} episodes "
        "(95% intervals: Wilson for success, bootstrap over tasks otherwise)",
        "",
        "| metric | value |",
        "|---|---|",
        f"| success | {format_interval(report['success'])} |",
        f"| mean reward | {format_interval(report['mean_reward'], pct=False)} |",
    ]
    for key, name in (("pass_at_k", "pass@{}"), ("avg_at_k", "avg@{}"), ("pass_hat_k", "pass^{}")):
        for k, interval in report[key].items():
            lines.append(f"| {name.format(k)} | {format_interval(interval)} |")
    lines += ["", "| per episode | mean | p50 | p90 | max |", "|---|---|---|---|---|"]
    for key, stats in report["per_episode"].items():
        if stats is None:
            lines.append(f"| {key} | - | - | - | - |")
        else:
            cells = " | ".join(f"{stats[q]:.2f}" for q in ("mean", "p50", "p90", "max"))
            lines.append(f"| {key} | {cells} |")
    for dim, labels in report["breakdown"].items():
        lines += ["", f"## by {dim}", "", f"| {dim} | tasks | episodes | success | mean reward |"]
        lines.append("|---|---|---|---|---|")
        for label, cell in labels.items():
            lines.append(
                f"| {label} | {cell['tasks']} | {cell['episodes']} | {format_interval(cell['success'])} | "
                f"{format_interval(cell['mean_reward'], pct=False)} |"
            )
    if report.get("plots"):
        lines += ["", *(f"![{Path(p).stem}]({p})" for p in report["plots"])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_plots(report: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], out: Path) -> list[str]:
    """PNG plots under ``out/plots``; returns their paths relative to ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    written: list[str] = []

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(plots / name, dpi=100)
        plt.close(fig)
        written.append(f"plots/{name}")

    for dim, labels in report["breakdown"].items():
        fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(labels)), 3.2))
        names = list(labels)
        values = [labels[n]["success"]["value"] or 0.0 for n in names]
        err = [
            [v - (labels[n]["success"]["lo"] or v) for n, v in zip(names, values, strict=True)],
            [(labels[n]["success"]["hi"] or v) - v for n, v in zip(names, values, strict=True)],
        ]
        ax.bar(range(len(names)), values, yerr=err, capsize=3, color="#4c72b0")
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
        ax.set_ylim(0, 1)
        ax.set_ylabel("success")
        ax.set_title(f"success by {dim}")
        save(fig, f"success_by_{dim}.png")
    if report["pass_at_k"]:
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        for key, label in (("pass_at_k", "pass@k"), ("pass_hat_k", "pass^k")):
            ks = sorted(report[key], key=int)
            ax.plot([int(k) for k in ks], [report[key][k]["value"] for k in ks], marker="o", label=label)
        ax.set_xlabel("k")
        ax.set_ylim(0, 1.02)
        ax.legend()
        ax.set_title("pass@k and pass^k")
        save(fig, "pass_at_k.png")
    for key, title in (("reward", "episode reward"), ("steps", "steps per episode")):
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        ax.hist([float(r[key]) for r in rows], bins=20, color="#55a868")
        ax.set_title(title)
        save(fig, f"{key}_hist.png")
    return written


def _headline(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    out: dict[str, Mapping[str, Any] | None] = {
        "success": report.get("success"),
        "mean_reward": report.get("mean_reward"),
    }
    for key, name in (("pass_at_k", "pass@{}"), ("pass_hat_k", "pass^{}")):
        for k, interval in (report.get(key) or {}).items():
            out[name.format(k)] = interval
    for dim, labels in (report.get("breakdown") or {}).items():
        for label, cell in labels.items():
            out[f"success[{dim}={label}]"] = cell.get("success")
    return out


def compare_reports(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """Rows ``(metric, A, B, B - A)`` over the metrics both reports have, A's order first."""
    ha, hb = _headline(a), _headline(b)
    rows = []
    for key in [*ha, *(k for k in hb if k not in ha)]:
        ia, ib = ha.get(key), hb.get(key)
        pct = key != "mean_reward"
        va = ia.get("value") if ia else None
        vb = ib.get("value") if ib else None
        if va is not None and vb is not None:
            diff = f"{100 * (vb - va):+.1f} pts" if pct else f"{vb - va:+.3f}"
        else:
            diff = "-"
        rows.append((key, format_interval(ia, pct), format_interval(ib, pct), diff))
    return rows


#: The keys every report has (docs/eval.md); a file without them is not an eval report.
_REPORT_KEYS = ("env_id", "policy", "config", "tasks", "n", "episodes", "success", "mean_reward")
#: The settings that decide which episodes a report is over (compared by ``envhub eval compare``).
_TASK_SETTINGS = ("split", "tasks", "limit", "seed", "n", "max_steps")


def read_report(path: str | Path) -> dict[str, Any]:
    """A ``report.json`` from its path or its folder.

    Raises:
        ConfigurationError: the file is missing, not JSON, or not an eval report.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "report.json"
    try:
        report = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigurationError(
            f"{p} is not a readable eval report ({type(exc).__name__}); give an eval folder or its "
            "report.json.",
            path=str(p),
        ) from None
    missing = [k for k in _REPORT_KEYS if k not in report] if isinstance(report, dict) else list(_REPORT_KEYS)
    if missing:
        raise ConfigurationError(
            f"{p} is not an eval report (it lacks {', '.join(missing)}); give an eval folder or its "
            "report.json.",
            path=str(p),
        )
    return report


def report_mismatch(a: Mapping[str, Any], b: Mapping[str, Any]) -> str | None:
    """Why two reports are not over the same episodes' tasks (None when they are)."""
    reasons = []
    if a["env_id"] != b["env_id"]:
        reasons.append(f"env {a['env_id']} vs {b['env_id']}")
    ca, cb = a.get("config") or {}, b.get("config") or {}
    reasons += [f"{k} {ca.get(k)!r} vs {cb.get(k)!r}" for k in _TASK_SETTINGS if ca.get(k) != cb.get(k)]
    return "; ".join(reasons) or None

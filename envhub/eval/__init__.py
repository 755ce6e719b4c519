"""Evaluation over the rollout driver: pass@k, avg@k, pass^k, per-family breakdowns, reports.

``evaluate(EvalConfig(env=..., policy=..., n=...), out)`` plays the tasks through the same
rollout engine and agent context as training and writes ``report.json``, ``summary.md``,
plots and ``episodes.jsonl`` (docs/eval.md). The trainer's validation logs
:func:`metrics_from_groups`.

The names are imported on first use, so ``envhub --help`` does not load the rollout engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envhub.eval.metrics import avg_at_k, bootstrap_tasks, pass_at_k, pass_hat_k, wilson
    from envhub.eval.report import build_report, compare_reports, metrics_from_groups, read_report
    from envhub.eval.run import EvalConfig, evaluate, evaluate_async, read_episodes

_WHERE = {
    "avg_at_k": "metrics",
    "bootstrap_tasks": "metrics",
    "pass_at_k": "metrics",
    "pass_hat_k": "metrics",
    "wilson": "metrics",
    "build_report": "report",
    "compare_reports": "report",
    "metrics_from_groups": "report",
    "read_report": "report",
    "EvalConfig": "run",
    "evaluate": "run",
    "evaluate_async": "run",
    "read_episodes": "run",
}

__all__ = [
    "EvalConfig",
    "avg_at_k",
    "bootstrap_tasks",
    "build_report",
    "compare_reports",
    "evaluate",
    "evaluate_async",
    "metrics_from_groups",
    "pass_at_k",
    "pass_hat_k",
    "read_episodes",
    "read_report",
    "wilson",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'envhub.eval' has no attribute {name!r}")
    return getattr(importlib.import_module(f"envhub.eval.{_WHERE[name]}"), name)

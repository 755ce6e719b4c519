"""Per-iteration metrics: a JSONL file (always), TensorBoard event files, Weights & Biases.

``metrics.jsonl`` in the run directory has one JSON object per iteration (``iteration`` plus
flat ``section/name`` keys), appended and flushed as each iteration ends, so a crashed run keeps
every finished iteration and ``envhub plot RUN_DIR`` can draw a running one. TensorBoard and
W&B get the same scalars; W&B only when asked for and installed (its absence is an error that
says how to install it, not a silent no-op).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from envhub.core.errors import DependencyMissingError

__all__ = ["MetricsLogger", "read_metrics"]


class MetricsLogger:
    """Writes each iteration's scalars to every configured sink.

    Args:
        run_dir: the run directory (``metrics.jsonl`` and ``tensorboard/`` go there).
        tensorboard: write TensorBoard event files.
        wandb: also log to Weights & Biases (project ``wandb_project``).
        config: the run's configuration, recorded by W&B.
    """

    def __init__(
        self,
        run_dir: str | Path,
        *,
        tensorboard: bool = True,
        wandb: bool = False,
        wandb_project: str = "envhub",
        config: dict[str, Any] | None = None,
    ) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / "metrics.jsonl"
        self._tb: Any = None
        self._wandb: Any = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as exc:
                raise DependencyMissingError("tensorboard", extra="train") from exc
            self._tb = SummaryWriter(log_dir=str(self.run_dir / "tensorboard"))
        if wandb:
            try:
                import wandb as wandb_module
            except ImportError as exc:
                raise DependencyMissingError("wandb", extra="wandb") from exc
            self._wandb = wandb_module.init(project=wandb_project, dir=str(self.run_dir), config=config or {})

    def log(self, iteration: int, metrics: dict[str, float]) -> None:
        """Record one iteration (non-finite values are written as null in the JSONL)."""
        clean = {k: (float(v) if math.isfinite(float(v)) else None) for k, v in metrics.items()}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"iteration": iteration, **clean}, sort_keys=True) + "\n")
        if self._tb is not None:
            for key, value in metrics.items():
                if math.isfinite(float(value)):
                    self._tb.add_scalar(key, float(value), iteration)
            self._tb.flush()
        if self._wandb is not None:
            self._wandb.log(metrics, step=iteration)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
        if self._wandb is not None:
            self._wandb.finish()


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of a run's ``metrics.jsonl`` (the last row per iteration, after a resume)."""
    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        return []
    rows: dict[int, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[int(row["iteration"])] = row
    return [rows[k] for k in sorted(rows)]

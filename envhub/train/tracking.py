"""Per-iteration metrics: a JSONL file (always), TensorBoard event files, Weights & Biases.

Each iteration's groups (the steps the update used, before advantages: ``envhub view``
recomputes those with :mod:`envhub.algos`) go to ``rollouts/iter_<k>.jsonl``, one ``Group``
per line, unless the recipe sets ``output.save_groups: false``.

``metrics.jsonl`` in the run directory has one JSON object per iteration (``iteration`` plus
flat ``section/name`` keys), appended and flushed as each iteration ends, so a crashed run keeps
every finished iteration and ``envhub plot RUN_DIR`` can draw a running one. TensorBoard and
W&B get the same scalars; W&B only when asked for and installed (its absence is an error that
says how to install it, not a silent no-op).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envhub.core.errors import ConfigurationError, DependencyMissingError
from envhub.core.records import Group

__all__ = ["MetricsLogger", "group_files", "read_groups", "read_metrics", "write_groups"]


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


def _groups_name(iteration: int, rank: int) -> str:
    return f"iter_{iteration:06d}.jsonl" if rank == 0 else f"iter_{iteration:06d}.r{rank}.jsonl"


def write_groups(run_dir: str | Path, iteration: int, groups: Sequence[Group], *, rank: int = 0) -> Path:
    """Write one iteration's groups to ``RUN_DIR/rollouts/iter_<k>.jsonl`` (replacing a partial one).

    Under torchrun each rank writes its own groups (``iter_<k>.r<rank>.jsonl`` for rank > 0).
    The file is written under a temporary name and renamed, so a reader never sees half of it.
    """
    folder = Path(run_dir) / "rollouts"
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / _groups_name(iteration, rank)
    tmp = folder / f".{final.name}.tmp"
    with tmp.open("w", encoding="utf-8") as f:
        for group in groups:
            f.write(group.model_dump_json() + "\n")
    tmp.replace(final)
    return final


def group_files(run_dir: str | Path) -> list[Path]:
    """A run's recorded group files, by iteration (then rank)."""
    folder = Path(run_dir) / "rollouts"
    if not folder.is_dir():
        return []

    def key(path: Path) -> tuple[int, int]:
        head, _, rank = path.name.removesuffix(".jsonl").partition(".r")
        return int(head.removeprefix("iter_")), int(rank or 0)

    found = [p for p in folder.glob("iter_*.jsonl") if p.name.removesuffix(".jsonl")[5:11].isdigit()]
    return sorted(found, key=key)


def read_groups(path: str | Path) -> list[Group]:
    """The groups of one recorded file.

    Raises:
        ConfigurationError: a line is not a Group record.
    """
    source = Path(path)
    out = []
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(Group.model_validate_json(line))
            except ValueError as exc:
                raise ConfigurationError(
                    f"{source}:{number} is not a Group record: {exc}", path=str(source)
                ) from exc
    return out

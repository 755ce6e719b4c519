"""The live training display: a rich progress bar with the latest numbers (plain lines off a TTY)."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from envhub.train.config import TrainConfig

__all__ = ["TrainProgress"]


def _summary(metrics: dict[str, float]) -> str:
    parts = []
    for key, label in (
        ("rollout/success", "success"),
        ("rollout/reward", "reward"),
        ("actor/kl", "kl"),
        ("actor/grad_norm", "|g|"),
        ("time/iteration_s", "s/it"),
    ):
        if key in metrics:
            parts.append(f"{label} {metrics[key]:.3f}")
    return "  ".join(parts)


class TrainProgress:
    """Context manager; pass :meth:`update` as the trainer's ``on_iteration``."""

    def __init__(self, config: TrainConfig, *, console: Console | None = None, live: bool = True) -> None:
        self.console = console or Console()
        self.total = config.iterations
        self.live = live
        self._progress: Progress | None = None
        self._task: Any = None

    def __enter__(self) -> TrainProgress:
        if self.live:
            self._progress = Progress(
                TextColumn("[bold]training"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[summary]}"),
                console=self.console,
            )
            self._progress.start()
            self._task = self._progress.add_task("train", total=self.total, summary="")
        return self

    def update(self, result: Any) -> None:
        summary = _summary(result.metrics)
        if self._progress is not None:
            self._progress.update(self._task, completed=result.iteration, summary=summary)
        else:
            self.console.print(f"iteration {result.iteration}/{self.total}  {summary}")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

"""Finished groups to and from files: a JSONL writer the engine publishes to, and exporters.

* :class:`JsonlGroupWriter` — a write-only :class:`~envhub.rollout.queue.base.GroupQueue`: one
  ``Group`` JSON per line (``envhub rollout --out groups.jsonl``).
* :func:`read_jsonl` — the groups of such a file.
* :func:`write_jsonl` / :func:`write_parquet` — export groups; parquet has one row per step
  (verl-agent's step rows) with the group and trajectory columns repeated, which is what
  ``envhub.algos`` and a trainer read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from envhub.core.errors import ConfigurationError, DependencyMissingError
from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery

__all__ = ["JsonlGroupWriter", "read_jsonl", "step_rows", "write_jsonl", "write_parquet"]


class JsonlGroupWriter:
    """Publish groups by appending them to a JSONL file (flushed after each group)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO | None = self.path.open("a", encoding="utf-8")
        self.count = 0

    async def put(self, group: Group) -> None:
        if self._file is None:
            raise ConfigurationError(f"The writer of {self.path} is closed.")
        self._file.write(group.model_dump_json() + "\n")
        self._file.flush()
        self.count += 1

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Delivery]:
        raise ConfigurationError("A JSONL group writer is write-only; read the file with read_jsonl().")

    async def ack(self, deliveries: Sequence[Delivery]) -> None:
        return None

    async def aclose(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_jsonl(path: str | Path) -> Iterator[Group]:
    """The groups of a JSONL file, in order.

    Raises:
        ConfigurationError: the file is missing or a line is not a Group.
    """
    source = Path(path)
    if not source.is_file():
        raise ConfigurationError(
            f"No groups file at {source}; write one with `envhub rollout --out {source}`."
        )
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield Group.model_validate_json(line)
            except ValueError as exc:
                raise ConfigurationError(f"{source}:{number} is not a Group record: {exc}") from exc


def write_jsonl(groups: Iterable[Group], path: str | Path) -> int:
    """Write groups as JSONL; returns how many."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as out:
        for group in groups:
            out.write(group.model_dump_json() + "\n")
            count += 1
    return count


def step_rows(groups: Iterable[Group]) -> list[dict[str, Any]]:
    """One flat row per step: group, trajectory and step fields (nested values as JSON text)."""
    rows: list[dict[str, Any]] = []
    for group in groups:
        for traj in group.trajectories:
            for step in traj.steps:
                row = step.model_dump(exclude={"history_image"})
                row["prompt_messages"] = json.dumps(row["prompt_messages"], ensure_ascii=False)
                row["info"] = json.dumps(row["info"], ensure_ascii=False)
                row["timings"] = json.dumps(row["timings"])
                row.update(
                    env_id=group.env_id,
                    task_id=group.task_id,
                    job_id=group.job_id,
                    attempt=group.attempt,
                    episode_return=traj.episode_return,
                    won=traj.won,
                    length=traj.length,
                )
                rows.append(row)
    return rows


def write_parquet(groups: Iterable[Group], path: str | Path) -> int:
    """Write the groups' step rows as parquet; returns the number of rows.

    Raises:
        DependencyMissingError: pyarrow is not installed.
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise DependencyMissingError("pyarrow", extra="search") from exc
    rows = step_rows(groups)
    pq.write_table(pa.Table.from_pylist(rows), str(path))
    return len(rows)

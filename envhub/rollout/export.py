"""Finished groups to and from files: a JSONL writer the engine publishes to, and exporters.

* :class:`JsonlGroupWriter` — a write-only :class:`~envhub.rollout.queue.base.GroupQueue`: one
  ``Group`` JSON per line (``envhub rollout --out groups.jsonl``).
* :func:`read_jsonl` — the groups of such a file.
* :func:`write_jsonl` / :func:`write_parquet` — export groups; parquet has one row per step
  (verl-agent's step rows) with the group and trajectory columns repeated, which is what
  ``envhub.algos`` and a trainer read. Both write to a temporary file, fsync it and rename it
  into place: the file is complete on disk when they return.
* :func:`export_stream` — the groups of a Redis stream to a file (``envhub rollouts export
  --redis-url``): by default read with ``XRANGE`` and no consumer group (consumes nothing);
  with ``consume`` through its own consumer group, acking only after the file is on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from envhub.core.errors import ConfigurationError, DependencyMissingError
from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery

__all__ = [
    "JsonlGroupWriter",
    "export_stream",
    "read_jsonl",
    "step_rows",
    "write_jsonl",
    "write_parquet",
]


class JsonlGroupWriter:
    """A :class:`~envhub.rollout.queue.base.GroupWriter` appending groups to a JSONL file (flushed each).

    Write-only: it is a sink, not a queue (read the file with :func:`read_jsonl`).
    """

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


@contextlib.contextmanager
def _durable(path: str | Path) -> Iterator[Path]:
    """A temporary path next to ``path``; on success it is fsynced and renamed to ``path``."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
        with contextlib.suppress(OSError):  # the rename itself, on filesystems that allow it
            directory = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
    finally:
        tmp.unlink(missing_ok=True)


def write_jsonl(groups: Iterable[Group], path: str | Path) -> int:
    """Write groups as JSONL (complete and fsynced on disk when it returns); returns how many."""
    count = 0
    with _durable(path) as tmp, tmp.open("w", encoding="utf-8") as out:
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
    with _durable(path) as tmp:
        pq.write_table(pa.Table.from_pylist(rows), str(tmp))
    return len(rows)


async def export_stream(
    url: str,
    stream: str,
    write: Callable[[list[Group], Path], int],
    output: Path,
    *,
    consume: bool = False,
    group: str = "envhub-export",
    envs: Collection[str] | None = None,
    runs: Collection[str] | None = None,
) -> int:
    """Write the groups of a Redis stream to ``output`` with ``write``; returns what it returned.

    Without ``consume`` the stream is read with ``XRANGE`` (no consumer group): nothing is taken
    from anyone, and the export holds nothing back from retention. With ``consume`` the groups
    are read through consumer group ``group`` (its own, so the trainers' group keeps every
    entry; a trainer run's group, ``trainers`` or ``trainers:<run>``, is refused) and acked
    only once ``write`` returned, i.e. once the file is on disk; a failed write acks nothing
    (the next ``--consume`` export gets the same groups again).
    """
    from envhub.rollout.queue.redis import RedisQueue, mask_url, read_stream

    if consume and (group == "trainers" or group.startswith("trainers:")):
        # run_group()'s names: acking a trainer run's entries here would take them from it.
        raise ConfigurationError(
            f"--group {group!r} is a trainer run's consumer group; consuming through it takes its "
            "groups from that trainer. Give the export its own --group (default envhub-export).",
            group=group,
        )
    # It holds everything until the file is written: no bound on unacked deliveries.
    queue = RedisQueue(
        url, stream=stream, group=group, consumer="export", envs=envs, runs=runs, max_unacked=2**62
    )
    try:
        async with queue.redis_errors(f"looking up stream {stream} (EXISTS)"):
            exists = await queue.client.exists(stream)
        if not exists:  # a mistyped --stream: say so, write nothing, create nothing
            raise ConfigurationError(
                f"There is no stream {stream!r} at {mask_url(url)}; check --stream (the rollout service "
                "publishes to ENVHUB_STREAM, default envhub:groups).",
                stream=stream,
            )
        if not consume:
            async with queue.redis_errors(f"reading stream {stream} (XRANGE)"):
                groups = [g async for g in read_stream(queue.client, stream, envs=envs, runs=runs)]
            return write(groups, output)
        deliveries: list[Delivery] = []
        while batch := await queue.get(256, timeout_s=1.0):
            deliveries.extend(batch)
        written = write([d.group for d in deliveries], output)
        await queue.ack(deliveries)
        return written
    finally:
        await queue.aclose()  # after a failed write this hands the unacked groups back to the group

"""What the viewer reads: a training run folder or a Redis stream of finished groups.

Both are read-only. A run is ``RUN_DIR`` as ``envhub-train`` writes it: ``config.json`` (the
recipe, whose ``algo``, ``env`` and ``advantage`` give the credit settings),
``metrics.jsonl`` and ``rollouts/iter_<k>.jsonl`` (each iteration's groups). A stream is read
with ``XRANGE`` only: no consumer group, no ``XREADGROUP``, no ack, so the viewer never
changes what a trainer has pending or not yet received.

A *batch* is the unit the source stores groups in: one iteration's file of a run, one entry
of a stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from envhub.algos import AdvantageConfig, default_config
from envhub.core.errors import ConfigurationError, EnvhubError, UnknownEnvError
from envhub.core.records import Group
from envhub.train.tracking import group_files, read_groups, read_metrics

__all__ = ["Batch", "RecordNotFoundError", "RunSource", "Source", "StreamSource", "open_source"]


class RecordNotFoundError(EnvhubError):
    """A batch, group, trajectory or step the page asks for is not in the source (404 NOT_FOUND)."""

    code = "NOT_FOUND"
    status_code = 404


@dataclass(frozen=True)
class Batch:
    """Where groups are stored: a key for URLs and a label for people."""

    key: str
    label: str


class Source(Protocol):
    """What every page reads."""

    title: str
    kind: str  # "run" | "stream"

    def metrics(self) -> list[dict[str, Any]]: ...
    def batches(self) -> list[Batch]: ...
    def groups(self, batch: str) -> list[Group]: ...
    def credit_settings(self, group: Group) -> tuple[str, AdvantageConfig]: ...
    def tokenizer_path(self) -> str | None: ...


def _settings(algo: str, env_id: str, overrides: dict[str, Any]) -> AdvantageConfig:
    from envhub.envs import resolve

    try:
        spec = resolve(env_id)
    except UnknownEnvError:
        return default_config(algo, None, **overrides)  # an env not installed here: plain defaults
    return default_config(algo, spec, **overrides)


@dataclass
class RunSource:
    """A training run folder (``envhub-train``'s ``output.run_dir``)."""

    path: Path
    kind: str = "run"
    _cache: dict[Path, tuple[tuple[int, int], list[Group]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if not self.path.is_dir():
            raise ConfigurationError(
                f"{self.path} is not a directory; give a run folder (envhub-train's output.run_dir) "
                "or a redis:// URL.",
                path=str(self.path),
            )
        if not (self.path / "metrics.jsonl").is_file() and not group_files(self.path):
            raise ConfigurationError(
                f"{self.path} holds neither metrics.jsonl nor rollouts/iter_<k>.jsonl; is it a run "
                "folder written by envhub-train?",
                path=str(self.path),
            )
        config_path = self.path / "config.json"
        self.config: dict[str, Any] = (
            json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
        )
        self.title = f"run {self.path.name}"

    def metrics(self) -> list[dict[str, Any]]:
        return read_metrics(self.path)

    def batches(self) -> list[Batch]:
        out = []
        for path in group_files(self.path):
            key = path.name.removesuffix(".jsonl")
            head, _, rank = key.partition(".r")
            label = f"iteration {int(head[5:])}" + (f" (rank {rank})" if rank else "")
            out.append(Batch(key, label))
        return out

    def groups(self, batch: str) -> list[Group]:
        path = self.path / "rollouts" / f"{batch}.jsonl"
        if batch not in {b.key for b in self.batches()}:
            raise RecordNotFoundError(
                f"Run {self.path.name} has no batch {batch!r}; the overview lists them."
            )
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is None or cached[0] != stamp:
            cached = (stamp, read_groups(path))
            self._cache[path] = cached
        return cached[1]

    def credit_settings(self, group: Group) -> tuple[str, AdvantageConfig]:
        algo = str(self.config.get("algo", "gigpo"))
        env = str(self.config.get("env", group.env_id))
        return algo, _settings(algo, env, dict(self.config.get("advantage") or {}))

    def tokenizer_path(self) -> str | None:
        model = self.config.get("model") or {}
        path = model.get("path") if isinstance(model, dict) else None
        return str(path) if path and Path(path).is_dir() else None


@dataclass
class StreamSource:
    """A Redis stream of finished groups, read with XRANGE (never consumed).

    Args:
        url: the Redis URL.
        stream: the stream key (``envhub:groups`` by default, the rollout service's).
        algo: the estimator whose credit to show.
        advantage: estimator settings over the env's reference defaults.
        limit: entries read from the start of the stream.
    """

    url: str
    stream: str = "envhub:groups"
    algo: str = "gigpo"
    advantage: dict[str, Any] = field(default_factory=dict)
    limit: int = 200
    kind: str = "stream"

    def __post_init__(self) -> None:
        import redis

        from envhub.rollout.queue.redis import mask_url

        self.title = f"stream {self.stream} at {mask_url(self.url)}"
        self._client = redis.Redis.from_url(self.url, decode_responses=False, socket_connect_timeout=5)
        default_config(self.algo, None, **self.advantage)  # a bad algo or setting fails at startup
        self._range("-", "+", 1)  # so does an unreachable Redis

    def _range(self, start: str, end: str, count: int) -> list[tuple[bytes, dict[bytes, bytes]]]:
        from redis.exceptions import RedisError

        from envhub.core.errors import QueueError
        from envhub.rollout.queue.redis import mask_url

        try:
            entries: Any = self._client.xrange(self.stream, min=start, max=end, count=count)
            return list(entries)
        except RedisError as exc:
            raise QueueError(f"Cannot read stream {self.stream} at {mask_url(self.url)}: {exc}") from exc

    def metrics(self) -> list[dict[str, Any]]:
        return []

    def batches(self) -> list[Batch]:
        return [
            Batch(entry.decode(), f"entry {entry.decode()}") for entry, _ in self._range("-", "+", self.limit)
        ]

    def groups(self, batch: str) -> list[Group]:
        from envhub.rollout.queue.codec import decode_group

        if not batch or any(c not in "0123456789-" for c in batch):
            raise RecordNotFoundError(f"{batch!r} is not a stream entry id (like 1700000000000-0).")
        entries = self._range(batch, batch, 1)
        if not entries:
            raise RecordNotFoundError(
                f"Stream {self.stream} has no entry {batch} (a trainer acked and deleted it, "
                "or it never was)."
            )
        payload = entries[0][1].get(b"v")
        return [decode_group(payload)] if payload is not None else []

    def credit_settings(self, group: Group) -> tuple[str, AdvantageConfig]:
        return self.algo, _settings(self.algo, group.env_id, self.advantage)

    def tokenizer_path(self) -> str | None:
        return None

    def close(self) -> None:
        self._client.close()


def open_source(
    path: str, *, stream: str = "envhub:groups", algo: str = "gigpo", limit: int = 200
) -> RunSource | StreamSource:
    """The source ``path`` names: a ``redis://`` URL, else a run folder.

    Raises:
        ConfigurationError: the path is neither.
    """
    if path.startswith(("redis://", "rediss://", "unix://")):
        return StreamSource(path, stream=stream, algo=algo, limit=limit)
    return RunSource(Path(path))

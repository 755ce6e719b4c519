"""What the viewer reads: a training run folder, an eval report or a Redis stream of groups.

All are read-only. A run is ``RUN_DIR`` as ``envhub-train`` writes it: ``config.json`` (the
recipe, whose ``algo``, ``env`` and ``advantage`` give the credit settings),
``metrics.jsonl`` and ``rollouts/iter_<k>.jsonl`` (each iteration's groups). A stream is read
with ``XRANGE`` only: no consumer group, no ``XREADGROUP``, no ack, so the viewer never
changes what a trainer has pending or not yet received.

An eval report is ``envhub eval``'s output folder (``docs/eval.md``): ``report.json`` (the
headline numbers, shown as a summary) and ``episodes.jsonl`` (one episode per line, its
``trajectory`` whole; the episodes of one task share a uid and form its group).

A *batch* is the unit the source stores groups in: one iteration's file of a run, one entry
of a stream, the episodes of an eval.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from envhub.algos import AdvantageConfig, default_config
from envhub.core.errors import ConfigurationError, DependencyMissingError, EnvhubError, UnknownEnvError
from envhub.core.records import Group
from envhub.train.tracking import group_files, read_groups, read_metrics

__all__ = ["Batch", "EvalSource", "RecordNotFoundError", "RunSource", "Source", "StreamSource", "open_source"]


#: Iteration files kept parsed (least recently used dropped first).
_CACHED_FILES = 16


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
    def summary(self) -> list[tuple[str, str]]: ...
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

    def summary(self) -> list[tuple[str, str]]:
        return [(k, str(self.config[k])) for k in ("env", "algo", "iterations") if k in self.config]

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
        cached = self._cache.pop(path, None)
        if cached is None or cached[0] != stamp:
            cached = (stamp, read_groups(path))
        self._cache[path] = cached  # most recently used last
        while len(self._cache) > _CACHED_FILES:
            self._cache.pop(next(iter(self._cache)))
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
        try:
            import redis
        except ImportError as exc:
            raise DependencyMissingError("redis", extra="redis") from exc

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

    def summary(self) -> list[tuple[str, str]]:
        return [
            ("stream", self.stream),
            ("read", f"XRANGE, first {self.limit} entries"),
            ("credit", self.algo),
        ]

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


def _interval(value: Any) -> str:
    if not isinstance(value, dict) or value.get("value") is None:
        return "-"
    text = f"{float(value['value']):.3f}"
    if value.get("lo") is not None and value.get("hi") is not None:
        text += f" [{float(value['lo']):.3f}, {float(value['hi']):.3f}]"
    return text


@dataclass
class EvalSource:
    """An ``envhub eval`` output folder (or its ``report.json``), as ``docs/eval.md`` describes it.

    Args:
        path: the folder (or the report file in it).
        algo: the estimator whose credit the groups show (an eval trains nothing: this is the
            credit the trainer would give these episodes).
    """

    path: Path
    algo: str = "gigpo"
    kind: str = "eval"
    _groups: list[Group] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        path = Path(self.path)
        self.path = path.parent if path.name == "report.json" else path
        report = self.path / "report.json"
        if not report.is_file() and not (self.path / "episodes.jsonl").is_file():
            raise ConfigurationError(f"{self.path} holds no report.json or episodes.jsonl of envhub eval.")
        self.report: dict[str, Any] = (
            json.loads(report.read_text(encoding="utf-8")) if report.is_file() else {}
        )
        self.title = f"eval {self.path.name}"
        default_config(self.algo, None)

    def metrics(self) -> list[dict[str, Any]]:
        return []

    def summary(self) -> list[tuple[str, str]]:
        r = self.report
        rows: list[tuple[str, str]] = [
            (k, str(r[k])) for k in ("env_id", "policy", "tasks", "n", "episodes") if k in r
        ]
        rows += [(k, _interval(r.get(k))) for k in ("success", "mean_reward") if k in r]
        for name in ("pass_at_k", "avg_at_k", "pass_hat_k"):
            for k, value in sorted((r.get(name) or {}).items(), key=lambda kv: int(kv[0])):
                rows.append((f"{name.replace('_at_', '@').replace('_hat_', '^')} {k}", _interval(value)))
        for dimension, cells in (r.get("breakdown") or {}).items():
            for label, cell in sorted(cells.items()):
                rows.append((f"{dimension} = {label}", f"success {_interval(cell.get('success'))}"))
        return rows

    def batches(self) -> list[Batch]:
        return [Batch("episodes", "episodes")]

    def groups(self, batch: str) -> list[Group]:
        if batch != "episodes":
            raise RecordNotFoundError(f"An eval report has one batch, 'episodes', not {batch!r}.")
        if self._groups is None:
            self._groups = self._read()
        return self._groups

    def _read(self) -> list[Group]:
        from envhub.core.records import Trajectory

        path = self.path / "episodes.jsonl"
        if not path.is_file():
            return []
        by_uid: dict[str, list[tuple[int, Trajectory, Any]]] = {}
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                traj = Trajectory.model_validate(row["trajectory"])
            except (ValueError, KeyError) as exc:
                if number == len(lines):  # a torn last line: a run killed mid-write (eval drops it too)
                    break
                raise ConfigurationError(f"{path}:{number} is not an eval episode: {exc}") from exc
            by_uid.setdefault(traj.uid, []).append(
                (int(row.get("sample", 0)), traj, row.get("policy_version"))
            )
        out = []
        for uid, members in by_uid.items():
            members.sort(key=lambda m: m[0])
            first = members[0][1]
            out.append(
                Group(
                    uid=uid,
                    env_id=first.env_id,
                    task_id=first.task_id,
                    trajectories=[m[1] for m in members],
                    policy_version=members[0][2],
                )
            )
        return out

    def credit_settings(self, group: Group) -> tuple[str, AdvantageConfig]:
        return self.algo, _settings(self.algo, group.env_id, {})

    def tokenizer_path(self) -> str | None:
        config = self.report.get("config") or {}
        policy = str(config.get("policy") or "")
        # The tokenizer given, or the model directory of an in-process transformers policy.
        tokenizer = config.get("tokenizer") or (
            policy.removeprefix("transformers:") if policy.startswith("transformers:") else None
        )
        return str(tokenizer) if tokenizer and Path(tokenizer).is_dir() else None


def open_source(
    path: str, *, stream: str = "envhub:groups", algo: str = "gigpo", limit: int = 200
) -> RunSource | StreamSource | EvalSource:
    """The source ``path`` names: a ``redis://`` URL, an eval report, else a run folder.

    Raises:
        ConfigurationError: the path is none of them.
    """
    if path.startswith(("redis://", "rediss://", "unix://")):
        return StreamSource(path, stream=stream, algo=algo, limit=limit)
    where = Path(path)
    if (
        where.name == "report.json"
        or (where / "report.json").is_file()
        or (where / "episodes.jsonl").is_file()
    ):
        return EvalSource(where, algo=algo)
    return RunSource(where)

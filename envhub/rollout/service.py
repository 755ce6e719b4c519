"""``envhub serve-rollouts``: the rollout service (FastAPI).

=============================  ==========================================================
``POST /v1/rollouts``          submit a :class:`~envhub.core.wire.RolloutRequest`; 201 with the job id
``GET /v1/rollouts``           every job's progress
``GET /v1/rollouts/{job}``     one job's progress (groups done/failed/retried, steps, rates)
``DELETE /v1/rollouts/{job}``  cancel it (published groups stay published)
``GET /metrics``               Prometheus: groups, steps, tokens, latencies, drops, splits, queue lag
``GET /health``                liveness
=============================  ==========================================================

Finished groups go to the queue: Redis Streams when ``REDIS_URL`` (or ``ENVHUB_REDIS_URL``) is
set, else the in-process queue. With a journal (Redis), every finished step is recorded and,
on startup, unfinished jobs resume: in-flight episodes continue on their env sessions when
those still stand where the journal says, and re-run whole otherwise. Errors are
``{code, message, detail}`` like the env server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import logging
import re
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Annotated, Any, Protocol
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

import envhub
from envhub.core.errors import EnvhubError, JobNotFoundError, QueueError, UnauthorizedError
from envhub.core.records import Group
from envhub.core.wire import (
    RolloutJobCreated,
    RolloutJobList,
    RolloutJobProgress,
    RolloutJobStatus,
    RolloutRequest,
)
from envhub.rollout.driver import play
from envhub.rollout.engine import JobAborted, JournalLike, RolloutEngine, RolloutReport
from envhub.rollout.failures import classify
from envhub.rollout.jobs import (
    InvalidJobError,
    NotRegisteredError,
    UrlNotAllowedError,
    build_backend,
    check_envs,
    check_job,
    check_policy,
    persisted_spec,
    restored_request,
)
from envhub.rollout.journal import ResumePoint
from envhub.rollout.metrics import RolloutMetrics
from envhub.rollout.queue.base import GroupQueue
from envhub.rollout.queue.settings import QueueSettings, run_group
from envhub.server.app import BodyLimit
from envhub.server.errors import install_error_handler

__all__ = [
    "BUILTIN_SCRIPTED",
    "FINISHED",
    "Job",
    "JobCreated",
    "JobList",
    "JobManager",
    "JobNotRetryableError",
    "JobProgress",
    "JobStatus",
    "Leases",
    "LocalLeases",
    "ManagerDep",
    "RedisLeases",
    "Registry",
    "RetryingJournal",
    "RolloutServiceSettings",
    "ServiceCounters",
    "ServiceJournal",
    "ShuttingDownError",
    "UrlAllowList",
    "cancel",
    "create_app",
    "health",
    "list_jobs",
    "metrics",
    "ops",
    "progress",
    "ready",
    "require_token",
    "retry",
    "router",
    "serve",
    "submit",
]

_log = logging.getLogger("envhub.rollout")


class RolloutServiceSettings(BaseSettings):
    """How ``envhub serve-rollouts`` runs; every field is also ``ENVHUB_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix="ENVHUB_", extra="ignore", populate_by_name=True)

    host: str = Field(default="127.0.0.1", description="Interface to bind.")
    port: int = Field(default=8100, ge=0, le=65535, description="TCP port.")
    redis_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("redis_url", "ENVHUB_REDIS_URL", "REDIS_URL"),
        description="Redis for the queue and the journal (REDIS_URL); unset: in-process queue, no journal.",
    )
    stream: str = Field(default="envhub:groups", description="Redis stream (key prefix) of finished groups.")
    max_jobs: int = Field(default=16, ge=1, description="Jobs running at once.")
    max_body_bytes: int = Field(
        default=8 << 20, ge=1024, description="Largest request body accepted (413 PAYLOAD_TOO_LARGE)."
    )
    token: SecretStr | None = Field(
        default=None, description="Bearer token required on every route but /health (ENVHUB_TOKEN)."
    )
    instance_id: str | None = Field(
        default=None,
        description="This instance's name on job leases; default host:port, so a restarted instance "
        "takes its own jobs back at once.",
    )
    lease_ttl_s: float = Field(
        default=15.0, gt=0, description="A job's lease lapses this long after its owner stops renewing it."
    )
    shutdown_grace_s: float = Field(
        default=5.0, ge=0, description="On SIGTERM: how long running jobs may finish before they pause."
    )
    redis_retry_s: float = Field(
        default=60.0, ge=0, description="How long Redis errors while publishing are retried (with backoff)."
    )
    retention_s: float = Field(
        default=7 * 86400.0, gt=0, description="Finished jobs and their journal keys are pruned after this."
    )
    scripted_policies: dict[str, str] = Field(
        default_factory=dict,
        description="Scripted policies requests may name, as {name: 'module:callable'} (plus the "
        "'envhub.scripted_policies' entry points and envhub's own env heuristics).",
    )
    projections: dict[str, str] = Field(
        default_factory=dict,
        description="Extra projection rules requests may name, as {name: 'module:function'} (plus "
        "envhub.agent.PROJECTIONS and the 'envhub.projections' entry points).",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts (or host:port) env and policy URLs may name; '*' allows any. Loopback and the "
        "hosts of env_urls are always allowed.",
    )
    env_urls: list[str] = Field(
        default_factory=list,
        description="The env replicas this service was started for (/health checks them).",
    )


class ServiceJournal(JournalLike, Protocol):
    """The journal calls the service makes beyond the engine's (see the queue package)."""

    async def save_job(self, job_id: str, spec: dict[str, Any]) -> None: ...

    async def jobs(self) -> list[tuple[str, dict[str, Any]]]: ...

    async def job_statuses(self) -> list[tuple[str, str, dict[str, Any]]]: ...

    async def delete_job(self, job_id: str) -> None: ...

    async def finish_job(self, job_id: str, status: str) -> None: ...

    async def done_slots(self, job_id: str) -> set[int]: ...

    async def open_groups(self, job_id: str) -> list[ResumePoint]: ...


#: envhub's own scripted policies, always registered (they import nothing a request names).
BUILTIN_SCRIPTED: dict[str, str] = {
    "timeseries-heuristic": "envhub.envs.timeseries.policy:HeuristicPolicy",
    "timeseries-random": "envhub.envs.timeseries.policy:RandomToolPolicy",
    "sokoban-solver": "envhub.envs.sokoban.policy:SolverPolicy",
    "alfworld-walkthrough": "envhub.envs.alfworld.policy:WalkthroughPolicy",
    "search-scripted": "envhub.envs.search.policy:ScriptedSearchPolicy",
    "search-first-title": "envhub.envs.search.policy:FirstTitlePolicy",
    "search-team": "envhub.envs.search.policy:team_member",
    "search-team-verifier": "envhub.envs.search.policy:team_verifier",
    "search-team-searcher": "envhub.envs.search.policy:team_searcher",
    "search-team-answerer": "envhub.envs.search.policy:team_answerer",
    "math-solver": "envhub.envs.math.policy:TemplateSolverPolicy",
    "math-team": "envhub.envs.math.policy:team_member",
    "math-team-solver": "envhub.envs.math.policy:team_solver",
    "math-team-verifier": "envhub.envs.math.policy:team_verifier",
    "tau-gold": "envhub.envs.tau.policy:GoldPolicy",
    "webshop-scripted": "envhub.envs.webshop.policy:ScriptedShopper",
}


def _entry_points(group: str) -> dict[str, str]:
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=group)}


class Registry:
    """What requests may name: scripted policies and projections, by name (never an import path).

    Args:
        scripted: ``{name: 'module:callable'}`` from settings (entry points and built-ins join).
        projections: ``{name: 'module:function'}`` from settings (entry points and
            ``envhub.agent.PROJECTIONS`` join).
    """

    def __init__(self, scripted: dict[str, str], projections: dict[str, str]) -> None:
        self.scripted = {**BUILTIN_SCRIPTED, **_entry_points("envhub.scripted_policies"), **scripted}
        self.projections = {**_entry_points("envhub.projections"), **projections}

    def scripted_path(self, spec: str) -> str:
        """``scripted:<name>`` (or the exact registered path) as the import path to load.

        Raises:
            NotRegisteredError: neither a registered name nor a registered path.
        """
        name = spec.removeprefix("scripted:")
        if name in self.scripted:
            return f"scripted:{self.scripted[name]}"
        if name in self.scripted.values():
            return spec
        raise NotRegisteredError(
            f"Scripted policy {spec!r} is not registered on this service; name one of "
            f"{sorted(self.scripted)} as 'scripted:<name>', or register it (ENVHUB_SCRIPTED_POLICIES or "
            "an 'envhub.scripted_policies' entry point). Import paths are never loaded from a request.",
            kind="scripted_policy",
            name=name,
            registered=sorted(self.scripted),
        )

    def env_name(self, name: str | None, *, field: str) -> None:
        """Refuse an env name that is an import path (``module:Class``), before anything imports it.

        ``context.family`` and ``context.render_preset`` take an env name, and
        :func:`envhub.envs.resolve` also imports ``module:Class`` entry points; a request may
        name only catalogue entries (ids, short ids, family names), which never hold a colon.

        Raises:
            NotRegisteredError: ``name`` holds a colon.
        """
        if name is None or ":" not in name:
            return
        raise NotRegisteredError(
            f"{field}={name!r} is an import path; a request may name only an env of the catalogue "
            "(an id such as 'envhub/ALFWorld-v0', 'ALFWorld-v0' or a family such as 'alfworld'). "
            "Import paths are never loaded from a request.",
            kind=field,
            name=name,
        )

    def projection(self, rule: str) -> str:
        """A projection rule the request names, as the rule the engine runs.

        Raises:
            NotRegisteredError: not a built-in rule, a registered name or a registered path.
        """
        from envhub.agent import PROJECTIONS

        if rule in PROJECTIONS or rule in self.projections.values():
            return rule
        if rule in self.projections:
            return self.projections[rule]
        raise NotRegisteredError(
            f"Projection {rule!r} is not registered on this service; use one of "
            f"{sorted([*PROJECTIONS, *self.projections])}, or register it (ENVHUB_PROJECTIONS or an "
            "'envhub.projections' entry point). Import paths are never loaded from a request.",
            kind="projection",
            name=rule,
        )


def _loopback(host: str) -> bool:
    import ipaddress

    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class UrlAllowList:
    """The hosts env and policy URLs may name: loopback, the service's own replicas, and settings.

    Args:
        allowed: ``host`` or ``host:port`` entries; ``*`` allows every host.
        env_urls: the replicas the service was started for (their hosts are allowed).
    """

    def __init__(self, allowed: list[str], env_urls: list[str]) -> None:
        self.any = "*" in allowed
        self.entries = {a.lower() for a in allowed} | {_host_port(u)[0] for u in env_urls}
        self.entries |= {"{}:{}".format(*_host_port(u)) for u in env_urls}

    def check(self, url: str, *, what: str) -> None:
        """Raises :class:`UrlNotAllowedError` unless ``url``'s host is allowed."""
        host, port = _host_port(url)
        if self.any or _loopback(host) or host in self.entries or f"{host}:{port}" in self.entries:
            return
        raise UrlNotAllowedError(
            f"The {what} URL {url!r} names host {host!r}, which this service may not reach; its allow-list "
            "is loopback, the replicas it was started with and ENVHUB_ALLOWED_HOSTS (add the host there).",
            url=url,
            host=host,
        )


def _host_port(url: str) -> tuple[str, int]:
    parsed = urlsplit(url)
    host = (parsed.hostname or "").lower()
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError:
        port = 0
    return host, port


_URL_USERINFO = re.compile(r"(\w+://)[^\s/@'\"]+@")
_MASKED = r"\1***@"


def _unloadable(exc: Exception) -> str:
    """Why a journaled request does not load, without the values it holds (a URL's key, say)."""
    if isinstance(exc, ValidationError):
        # A message may quote a value: any URL's user and key are masked in it.
        return "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {_URL_USERINFO.sub(_MASKED, e['msg'])}"
            for e in exc.errors(include_input=False)
        )
    return type(exc).__name__


class ShuttingDownError(EnvhubError):
    """The service got SIGTERM and takes no new work (its jobs resume on the next start)."""

    code = "SHUTTING_DOWN"
    status_code = 503


class JobNotRetryableError(EnvhubError):
    """``POST /v1/rollouts/{job}/retry`` on a job that did not fail."""

    code = "JOB_NOT_RETRYABLE"
    status_code = 409


JobCreated = RolloutJobCreated
JobProgress = RolloutJobProgress
JobList = RolloutJobList
JobStatus = RolloutJobStatus
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})


@dataclass
class Job:
    """One job in this process."""

    job_id: str
    request: RolloutRequest
    status: str = "starting"
    env_id: str | None = None
    engine: RolloutEngine | None = None
    task: asyncio.Task[None] | None = None
    error: dict[str, Any] | None = None
    created: float = field(default_factory=time.time)
    finished_at: float | None = None
    #: why the task is being cancelled: "cancel" (DELETE) or "pause" (shutdown, lost lease)
    stopping: str | None = None
    published_before: int = 0

    def progress(self) -> JobProgress:
        report = self.engine.report if self.engine is not None else RolloutReport(started_at=self.created)
        elapsed = max(report.elapsed_s, 1e-9)
        return JobProgress(
            job_id=self.job_id,
            status=self.status,  # type: ignore[arg-type]
            env_id=self.env_id,
            total=report.total,
            published=max(report.published, self.published_before),
            dropped=report.dropped,
            retried=report.retried,
            steps=report.steps,
            tokens=report.tokens,
            steps_redone=report.steps_redone,
            steps_resumed=report.steps_resumed,
            elapsed_s=report.elapsed_s,
            groups_per_s=report.published / elapsed,
            steps_per_s=report.steps / elapsed,
            tokens_per_s=report.tokens / elapsed,
            drops_by_cause=dict(report.drops_by_cause),
            retries_by_cause=dict(report.retries_by_cause),
            error=self.error,
        )


class Leases(Protocol):
    """Who steps a job: one instance at a time (see :class:`RedisLeases`)."""

    async def acquire(self, job_id: str) -> bool: ...

    async def renew(self, job_id: str) -> bool: ...

    async def release(self, job_id: str) -> None: ...


class LocalLeases:
    """Leases of a service without Redis: one instance, so every lease is its own."""

    async def acquire(self, job_id: str) -> bool:
        return True

    async def renew(self, job_id: str) -> bool:
        return True

    async def release(self, job_id: str) -> None:
        return None


_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
)
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class RedisLeases:
    """A job's lease: the key ``<prefix>:<job>`` holding the owner's id, with a TTL the owner renews.

    Two service instances on one Redis never step the same job: a job runs only where its lease
    was acquired (SET NX), and an instance that finds its lease gone pauses the job.
    """

    def __init__(self, client: Any, *, prefix: str, owner: str, ttl_s: float) -> None:
        self.client, self.prefix, self.owner = client, prefix, owner
        self.ttl_ms = max(int(ttl_s * 1000), 1)

    async def acquire(self, job_id: str) -> bool:
        key = f"{self.prefix}:{job_id}"
        if await self.client.set(key, self.owner, nx=True, px=self.ttl_ms):
            return True
        return await self.renew(job_id)  # ours already (a restart of this instance)

    async def renew(self, job_id: str) -> bool:
        return bool(await self.client.eval(_RENEW, 1, f"{self.prefix}:{job_id}", self.owner, self.ttl_ms))

    async def release(self, job_id: str) -> None:
        await self.client.eval(_RELEASE, 1, f"{self.prefix}:{job_id}", self.owner)


class RetryingJournal:
    """The service's journal with Redis errors retried (exponential backoff) for ``budget_s``.

    Every wrapped call is safe to repeat: a commit re-checks the slot's done mark under WATCH, so
    a commit whose reply was lost is not published twice.
    """

    def __init__(self, inner: ServiceJournal, *, budget_s: float, on_retry: Callable[[], None]) -> None:
        self.inner, self.budget_s, self._on_retry = inner, budget_s, on_retry

    async def _call(self, fn: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> Any:
        deadline, delay = time.monotonic() + self.budget_s, 0.1
        while True:
            try:
                return await fn(*args, **kwargs)
            except QueueError as exc:
                if time.monotonic() + delay > deadline:
                    raise
                self._on_retry()
                _log.warning("Redis failed (%s); retrying in %.1f s", exc.detail.get("reason", exc), delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    async def save_job(self, job_id: str, spec: dict[str, Any]) -> None:
        await self._call(self.inner.save_job, job_id, spec)

    async def jobs(self) -> list[tuple[str, dict[str, Any]]]:
        return await self._call(self.inner.jobs)  # type: ignore[no-any-return]

    async def job_statuses(self) -> list[tuple[str, str, dict[str, Any]]]:
        return await self._call(self.inner.job_statuses)  # type: ignore[no-any-return]

    async def delete_job(self, job_id: str) -> None:
        await self._call(self.inner.delete_job, job_id)

    async def finish_job(self, job_id: str, status: str) -> None:
        await self._call(self.inner.finish_job, job_id, status)

    async def done_slots(self, job_id: str) -> set[int]:
        return await self._call(self.inner.done_slots, job_id)  # type: ignore[no-any-return]

    async def open_groups(self, job_id: str) -> list[ResumePoint]:
        return await self._call(self.inner.open_groups, job_id)  # type: ignore[no-any-return]

    async def begin_group(
        self, job_id: str, slot: int, attempt: int, *, replica: int, members: list[dict[str, Any]]
    ) -> None:
        await self._call(self.inner.begin_group, job_id, slot, attempt, replica=replica, members=members)

    async def record_step(
        self, job_id: str, slot: int, attempt: int, member: int, entry: dict[str, Any]
    ) -> None:
        await self._call(self.inner.record_step, job_id, slot, attempt, member, entry)

    async def commit_group(self, job_id: str, slot: int, group: Group) -> None:
        await self._call(self.inner.commit_group, job_id, slot, group)

    async def abandon_group(self, job_id: str, slot: int, attempt: int) -> None:
        await self._call(self.inner.abandon_group, job_id, slot, attempt)


@dataclass
class ServiceCounters:
    """Service-level counters shown in ``/metrics`` next to the engine's."""

    redis_retries: int = 0
    jobs_resumed: int = 0
    jobs_pruned: int = 0
    leases_lost: int = 0


class JobManager:
    """The jobs of one service process.

    Args:
        queue: where finished groups go.
        journal: the step journal (None: nothing survives a restart).
        metrics: the service's metrics.
        max_jobs: jobs running at once.
        leases: who may step a job (:class:`LocalLeases` without Redis).
        lease_ttl_s: lease lifetime; it is renewed every third of it.
        retention_s: finished jobs (and their journal keys) are pruned after this.
        registry: the scripted policies and projections requests may name.
        allow: the hosts env and policy URLs may name.
        channels: ``channels(stream, run) -> (queue, journal)``: where a job naming its stream
            and run publishes (a queue writing ``run`` on its entries, counting back-pressure
            on the run's consumer group, and a journal committing to it). None: every job
            uses ``queue`` and ``journal``.
        reserved_prefixes: key prefixes a job's ``stream`` may not start with (the journal's,
            the leases').
    """

    def __init__(
        self,
        *,
        queue: GroupQueue,
        journal: ServiceJournal | None,
        metrics: RolloutMetrics,
        max_jobs: int,
        leases: Leases | None = None,
        lease_ttl_s: float = 15.0,
        retention_s: float = 7 * 86400.0,
        registry: Registry | None = None,
        allow: UrlAllowList | None = None,
        channels: Callable[[str | None, str], tuple[GroupQueue, ServiceJournal | None]] | None = None,
        reserved_prefixes: Sequence[str] = (),
    ) -> None:
        self.queue = queue
        self.journal = journal
        self.channels = channels
        self.reserved_prefixes = tuple(reserved_prefixes)
        self._channels: dict[tuple[str | None, str], tuple[GroupQueue, ServiceJournal | None]] = {}
        self.metrics = metrics
        self.jobs: dict[str, Job] = {}
        self._unreadable: set[str] = set()  # journaled jobs whose request this version cannot load
        self.leases: Leases = leases or LocalLeases()
        self.lease_ttl_s = lease_ttl_s
        self.retention_s = retention_s
        self.registry = registry or Registry({}, {})
        self.allow = allow or UrlAllowList(["*"], [])
        self.counters = ServiceCounters()
        self.accepting = True
        self._slots = asyncio.Semaphore(max_jobs)
        self._background: list[asyncio.Task[None]] = []

    def channel(self, request: RolloutRequest) -> tuple[GroupQueue, ServiceJournal | None]:
        """The queue and journal of ``request``'s stream and run (the service's own by default)."""
        if self.channels is None or (request.stream is None and not request.run):
            return self.queue, self.journal
        key = (request.stream, request.run)
        if key not in self._channels:
            self._channels[key] = self.channels(request.stream, request.run)
        return self._channels[key]

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise JobNotFoundError(job_id)
        return job

    def admit(self, request: RolloutRequest) -> RolloutRequest:
        """The request with registered names resolved, or a 422 when it names what is not allowed.

        Raises:
            NotRegisteredError: a scripted policy or projection that is not registered.
            UrlNotAllowedError: an env or policy URL off the allow-list.
            InvalidJobError: no policy, no tasks or no env servers (VALIDATION_ERROR).
        """
        check_job(request, remote=True)
        for url in request.env_urls:
            self.allow.check(url, what="env")
        if request.stream is not None and _a_queue_key(request.stream):
            raise InvalidJobError(
                f"stream {request.stream!r} is a key the queue keeps beside another stream (its dead "
                "letters, a consumer group's de-duplication set or a group's lease); name another "
                "stream, e.g. envhub:groups:<run>.",
                stream=request.stream,
            )
        if request.stream is not None and request.stream.startswith(self.reserved_prefixes):
            raise InvalidJobError(
                f"stream {request.stream!r} is under a key prefix the service keeps for itself "
                f"({', '.join(self.reserved_prefixes)}); name another stream, e.g. envhub:groups:<run>.",
                stream=request.stream,
            )
        update: dict[str, Any] = {}
        if isinstance(request.policy, str):
            update["policy"] = self.registry.scripted_path(request.policy)
        elif request.policy is not None:
            self.allow.check(request.policy.base_url, what="policy")
        if request.agents is not None:
            roles: dict[str, Any] = {}
            for role, policy in request.agents.policies.items():
                if isinstance(policy, str):
                    roles[role] = self.registry.scripted_path(policy)
                else:
                    self.allow.check(policy.base_url, what="policy")
                    roles[role] = policy
            update["agents"] = request.agents.model_copy(update={"policies": roles})
        for name in ("family", "render_preset"):
            self.registry.env_name(getattr(request.context, name), field=f"context.{name}")
        if request.context.projection is not None:
            rule = self.registry.projection(request.context.projection)
            update["context"] = request.context.model_copy(update={"projection": rule})
        return request.model_copy(update=update)

    def _stored(self, request: RolloutRequest) -> RolloutRequest:
        """A journaled request (trusted: written by a service) with registered names resolved."""

        def resolved(policy: Any) -> Any:
            if isinstance(policy, str) and policy.removeprefix("scripted:") in self.registry.scripted:
                return self.registry.scripted_path(policy)
            return policy

        update: dict[str, Any] = {"policy": resolved(request.policy)}
        if request.agents is not None:
            roles = {role: resolved(p) for role, p in request.agents.policies.items()}
            update["agents"] = request.agents.model_copy(update={"policies": roles})
        return request.model_copy(update=update)

    async def submit(self, request: RolloutRequest) -> Job:
        """Check the request against the registry, the env servers and the policy, then start it.

        Raises:
            ShuttingDownError: the service is stopping (503).
            JobRejectedError: a request the service will not run (422, see its code).
            PolicyUnavailableError: the policy endpoint does not answer (no job is created).
            ServerUnreachableError: the first env server does not answer.
            ConfigurationError: the scripted policy does not load.
        """
        if not self.accepting:
            raise ShuttingDownError(
                "The rollout service is shutting down and takes no new jobs; retry against the restarted "
                "service (its running jobs resume there)."
            )
        request = self.admit(request)
        policies = [request.policy, *(request.agents.policies.values() if request.agents else ())]
        for policy in policies:
            await check_policy(policy)
            if isinstance(policy, str):
                # A scripted spec that does not load is the operator's mistake: say so now, as a 400.
                await build_backend(policy, request.policy_version).aclose()
        env_id = await check_envs(request)
        request = request.model_copy(update={"env_id": env_id})  # a resumed job needs no lookup
        job = Job(job_id=uuid.uuid4().hex[:12], request=request, env_id=env_id)
        if self.journal is not None:
            await self.journal.save_job(job.job_id, persisted_spec(request))  # no secrets
        await self.leases.acquire(job.job_id)
        self._start(job)
        return job

    def _start(
        self, job: Job, *, done_slots: set[int] | None = None, resume: list[ResumePoint] | None = None
    ) -> None:
        self.jobs[job.job_id] = job
        job.status, job.error, job.finished_at, job.stopping = "starting", None, None, None
        job.published_before = len(done_slots or ())
        job.task = asyncio.create_task(self._run(job, done_slots or set(), resume or []))

    async def _run(self, job: Job, done_slots: set[int], resume: list[ResumePoint]) -> None:
        async with self._slots:
            job.status = "running"
            renewer = asyncio.create_task(self._renew(job))

            def keep(engine: RolloutEngine) -> None:
                job.engine = engine

            queue, journal = self.channel(job.request)
            try:
                await play(
                    job.request,
                    queue,
                    job_id=job.job_id,
                    journal=journal,
                    metrics=self.metrics,
                    on_engine=keep,
                    done_slots=sorted(done_slots),
                    resume=resume,
                )
            except asyncio.CancelledError:
                # Only DELETE cancels; a shutdown or a lost lease pauses (the journal keeps it running).
                job.status = "cancelled" if job.stopping == "cancel" else "interrupted"
                await self._finish(job)
                raise
            except JobAborted as exc:
                job.status, job.error = "failed", {"code": exc.failure.code, "message": exc.failure.message}
            except Exception as exc:  # a setup failure (env servers down, bad task ids): say what
                failure = classify(exc)
                job.status, job.error = "failed", {"code": failure.code, "message": failure.message}
                if not isinstance(exc, EnvhubError):
                    _log.exception("rollout job %s failed", job.job_id, exc_info=exc)
            else:
                job.status, job.error = "done", None
                report = job.engine.report if job.engine is not None else None
                if report is not None and report.dropped and report.published == 0:
                    job.status = "failed"
                    job.error = {
                        "code": "ALL_GROUPS_DROPPED",
                        "message": f"Every group of the job was dropped (causes: {report.drops_by_cause}); "
                        "fix the cause and POST /v1/rollouts/{job}/retry.",
                        "drops_by_cause": dict(report.drops_by_cause),
                    }
            finally:
                renewer.cancel()
            await self._finish(job)

    async def _renew(self, job: Job) -> None:
        """Renew the job's lease every third of its TTL; pause the job if another instance has it."""
        while True:
            await asyncio.sleep(self.lease_ttl_s / 3)
            try:
                # A lease that lapsed while Redis was away is taken back if nobody else took it.
                held = await self.leases.renew(job.job_id) or await self.leases.acquire(job.job_id)
            except Exception:  # Redis down: nobody else can take the lease either; try again
                continue
            if not held and job.task is not None:
                _log.warning("job %s: lease lost to another instance; pausing it here", job.job_id)
                self.counters.leases_lost += 1
                job.stopping = "pause"
                job.task.cancel()
                return

    async def _finish(self, job: Job) -> None:
        if job.status in FINISHED:
            job.finished_at = time.time()
        if self.journal is not None and job.status in FINISHED:
            with contextlib.suppress(Exception):
                await self.journal.finish_job(job.job_id, job.status)
        if job.status in FINISHED or job.status == "interrupted":
            with contextlib.suppress(Exception):
                await self.leases.release(job.job_id)

    async def cancel(self, job_id: str) -> Job:
        """``DELETE``: the only way a job becomes ``cancelled``."""
        job = self.get(job_id)
        if job.task is not None and not job.task.done():
            job.stopping = "cancel"
            job.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await job.task
        elif job.status not in FINISHED:
            job.status = "cancelled"
            await self._finish(job)
        return job

    async def retry(self, job_id: str) -> Job:
        """Run a failed job again: published slots are kept, the rest play anew.

        Raises:
            JobNotRetryableError: the job did not fail.
        """
        job = self.get(job_id)
        if job.status != "failed":
            raise JobNotRetryableError(
                f"Job {job_id!r} is {job.status}; only a failed job can be retried (POST /v1/rollouts for "
                "a new one).",
                job_id=job_id,
                status=job.status,
            )
        if self.journal is None:
            raise JobNotRetryableError(
                f"Job {job_id!r} cannot be retried: this service has no journal, so it cannot tell which "
                "groups were published. Run it with a journal (REDIS_URL), or submit a new job.",
                job_id=job_id,
            )
        # Claim the retry before the first await: a concurrent retry (or the pruner) now sees a
        # job that is no longer failed, so only one task ever runs the job.
        job.status, job.finished_at = "starting", None
        try:
            if not await self.leases.acquire(job_id):
                raise JobNotRetryableError(
                    f"Job {job_id!r} is held by another service instance.", job_id=job_id
                )
            await self.journal.finish_job(job_id, "running")
            journal = self.channel(job.request)[1] or self.journal
            done = await journal.done_slots(job_id)  # parked groups go to the job's own stream
            points = await journal.open_groups(job_id)
        except BaseException:
            job.status, job.finished_at = "failed", time.time()
            raise
        job.engine = None
        self._start(job, done_slots=done, resume=points)
        return job

    async def resume_all(self) -> None:
        """Load the journal's jobs; resume the unfinished ones whose lease this instance gets."""
        if self.journal is None:
            return
        for job_id, status, spec in await self.journal.job_statuses():
            known = self.jobs.get(job_id)
            if known is not None:
                if known.task is not None and not known.task.done():
                    continue  # running here
                if status in FINISHED:
                    if known.status == "interrupted":  # another instance finished it meanwhile
                        known.status, known.finished_at = status, time.time()
                    continue
                if known.status in ("done", "cancelled"):
                    # Our final status never reached the journal (Redis was away): write it again,
                    # so a cancelled job is never resumed anywhere.
                    await self.journal.finish_job(job_id, known.status)
                    continue
                if known.status not in ("interrupted", "failed"):
                    continue
                # Paused here after a lost lease, or a failed copy that another instance has
                # retried since: the journal says it runs. Adopt it once its lease is free; while
                # another instance holds it, forget a stale failed copy (the pruner must never
                # delete the journal keys of a job running elsewhere).
                if not await self.leases.acquire(job_id):
                    if known.status == "failed":
                        del self.jobs[job_id]
                    continue
            try:
                restored = restored_request(spec)
                request = self._stored(restored)
            except (ValueError, TypeError, EnvhubError) as exc:  # pure code: never a Redis error
                # One record this version cannot read must not keep the others from resuming;
                # it stays in the journal for an operator (said once per process).
                if job_id not in self._unreadable:
                    self._unreadable.add(job_id)
                    _log.error(
                        "job %s (%s): its journaled request does not load, left in the journal: %s",
                        job_id,
                        status,
                        _unloadable(exc),
                    )
                continue
            if persisted_spec(restored) != spec:
                # Restored from an earlier version's record (credentials taken out of a policy
                # URL, say): the journal keeps the record as this version would write it.
                await self.journal.save_job(job_id, persisted_spec(request))
            if status in FINISHED:
                job = Job(job_id=job_id, request=request, env_id=request.env_id, status=status)
                job.finished_at = time.time()
                job.published_before = len(await self.journal.done_slots(job_id))
                self.jobs[job_id] = job
                continue
            if not await self.leases.acquire(job_id):
                continue  # another instance steps it; adopt it if its lease lapses
            journal = self.channel(request)[1] or self.journal
            done = await journal.done_slots(job_id)  # parked groups go to the job's own stream
            points = await journal.open_groups(job_id)
            job = Job(job_id=job_id, request=request, env_id=request.env_id)
            _log.info("resuming job %s: %d groups done, %d in flight", job_id, len(done), len(points))
            self.counters.jobs_resumed += 1
            self._start(job, done_slots=done, resume=points)

    async def _housekeeping(self) -> None:
        """Adopt jobs whose lease lapsed (their instance died) and prune finished jobs."""
        while True:
            await asyncio.sleep(min(self.lease_ttl_s, max(self.retention_s / 4, 0.2), 60.0))
            if not self.accepting:
                return
            with contextlib.suppress(Exception):
                await self.resume_all()
            with contextlib.suppress(Exception):
                await self.prune()

    async def prune(self) -> list[str]:
        """Forget finished jobs older than the retention period, and delete their journal keys."""
        now, pruned = time.time(), []
        for job in list(self.jobs.values()):
            if job.finished_at is not None and now - job.finished_at >= self.retention_s:
                if self.journal is not None:
                    await self.journal.delete_job(job.job_id)
                del self.jobs[job.job_id]
                pruned.append(job.job_id)
        self.counters.jobs_pruned += len(pruned)
        return pruned

    def start_background(self) -> None:
        self._background.append(asyncio.create_task(self._housekeeping()))

    def running(self) -> list[Job]:
        return [j for j in self.jobs.values() if j.task is not None and not j.task.done()]

    async def drain(self, grace_s: float) -> None:
        """SIGTERM: take no new jobs, let running ones finish for ``grace_s``, then pause the rest.

        A paused job stays ``running`` in the journal and its lease is released, so the next start
        (or another instance) resumes it; nothing is marked cancelled.
        """
        self.accepting = False
        for task in self._background:
            task.cancel()
        tasks = [j.task for j in self.running() if j.task is not None]
        if tasks and grace_s > 0:
            await asyncio.wait(tasks, timeout=grace_s)
        await self.stop()

    async def stop(self) -> None:
        self.accepting = False
        for task in self._background:
            task.cancel()
        paused = self.running()
        for job in paused:
            job.stopping = job.stopping or "pause"
            assert job.task is not None
            job.task.cancel()
        await asyncio.gather(*(j.task for j in paused if j.task is not None), return_exceptions=True)


def _manager(request: Request) -> JobManager:
    return request.app.state.jobs  # type: ignore[no-any-return]


async def require_token(request: Request) -> None:
    """Every route but ``/health``: 401 ``UNAUTHORIZED`` without the service's bearer token.

    The check is the env server's (constant-time compare of ``Authorization: Bearer``).
    """
    settings: RolloutServiceSettings = request.app.state.settings
    if settings.token is None:
        return
    expected = settings.token.get_secret_value().encode()
    header = request.headers.get("authorization") or ""
    given = header[7:].strip() if header[:7].lower() == "bearer " else ""
    if not hmac.compare_digest(given.encode(), expected):
        raise UnauthorizedError()


ManagerDep = Annotated[JobManager, Depends(_manager)]
router = APIRouter(prefix="/v1/rollouts", tags=["rollouts"], dependencies=[Depends(require_token)])
ops = APIRouter(tags=["operations"])


@router.post("", status_code=201, response_model=JobCreated)
async def submit(body: RolloutRequest, jobs: ManagerDep) -> JobCreated:
    """Start a rollout job."""
    job = await jobs.submit(body)
    return JobCreated(job_id=job.job_id)


@router.get("", response_model=JobList)
async def list_jobs(jobs: ManagerDep) -> JobList:
    """Every job this process knows (its own and the journal's, until pruned)."""
    data = [j.progress() for j in jobs.jobs.values()]
    return JobList(data=data, count=len(data))


@router.get("/{job_id}", response_model=JobProgress)
async def progress(job_id: str, jobs: ManagerDep) -> JobProgress:
    """Where a job stands."""
    return jobs.get(job_id).progress()


@router.delete("/{job_id}", response_model=JobProgress)
async def cancel(job_id: str, jobs: ManagerDep) -> JobProgress:
    """Cancel a job: in-flight groups stop unpublished; published groups stay."""
    return (await jobs.cancel(job_id)).progress()


@router.post("/{job_id}/retry", response_model=JobProgress)
async def retry(job_id: str, jobs: ManagerDep) -> JobProgress:
    """Run a failed job again (its published groups are kept)."""
    return (await jobs.retry(job_id)).progress()


async def _redis_state(queue: GroupQueue) -> str:
    client = getattr(queue, "client", None)
    if client is None:
        return "none"
    try:
        await asyncio.wait_for(client.ping(), timeout=2.0)
    except Exception:
        return "down"
    return "up"


async def _replica_states(urls: list[str]) -> dict[str, str]:
    import httpx

    async def one(client: httpx.AsyncClient, url: str) -> str:
        try:
            reply = await client.get(url.rstrip("/") + "/health")
        except httpx.HTTPError:
            return "down"
        return "up" if reply.status_code == 200 else f"http_{reply.status_code}"

    if not urls:
        return {}
    async with httpx.AsyncClient(timeout=2.0) as client:
        states = await asyncio.gather(*(one(client, u) for u in urls))
    return dict(zip(urls, states, strict=True))


def _known_replicas(app: FastAPI) -> list[str]:
    urls = list(app.state.settings.env_urls)
    for job in app.state.jobs.running():
        urls += [u for u in job.request.env_urls if u not in urls]
    return urls


@ops.get("/health")
async def health(request: Request) -> dict[str, Any]:
    """Liveness (always 200 while the process answers), with Redis's and the env replicas' state."""
    redis_state = await _redis_state(request.app.state.queue)
    replicas = await _replica_states(_known_replicas(request.app))
    ok = redis_state != "down" and all(v == "up" for v in replicas.values())
    return {"status": "healthy" if ok else "degraded", "redis": redis_state, "env_replicas": replicas}


@ops.get("/ready")
async def ready(request: Request) -> Response:
    """Readiness: 503 while Redis is unreachable or the service is shutting down.

    Open like ``/health`` (as on the env server): a Kubernetes readiness probe sends no token.
    It says only whether the service takes work, nothing about jobs.
    """
    jobs: JobManager = request.app.state.jobs
    redis_state = await _redis_state(request.app.state.queue)
    body = {
        "ready": jobs.accepting and redis_state != "down",
        "accepting": jobs.accepting,
        "redis": redis_state,
    }
    return JSONResponse(body, status_code=200 if body["ready"] else 503)


def _queue_metrics(app: FastAPI) -> str:
    lines: list[str] = []

    def gauge(name: str, value: float, help_: str, kind: str = "gauge") -> None:
        lines.extend([f"# HELP {name} {help_}", f"# TYPE {name} {kind}", f"{name} {float(value)}"])

    stats = getattr(app.state.queue, "stats", None)
    if stats is not None and dataclasses.is_dataclass(stats):
        for f in dataclasses.fields(stats):
            value = getattr(stats, f.name)
            if isinstance(value, int | float):
                gauge(f"envhub_rollout_queue_{f.name}", value, f"Queue counter {f.name} (QueueStats).")
    jobs: JobManager = app.state.jobs
    counters = jobs.counters
    gauge("envhub_rollout_redis_retries", counters.redis_retries, "Redis errors retried while publishing.")
    gauge("envhub_rollout_jobs_resumed", counters.jobs_resumed, "Jobs resumed from the journal.")
    gauge("envhub_rollout_jobs_pruned", counters.jobs_pruned, "Finished jobs pruned after retention.")
    gauge("envhub_rollout_leases_lost", counters.leases_lost, "Jobs paused: another instance took them.")
    for status in ("starting", "running", "interrupted", "done", "failed", "cancelled"):
        n = sum(1 for j in jobs.jobs.values() if j.status == status)
        lines.append(f'envhub_rollout_jobs{{status="{status}"}} {float(n)}')
    return "\n".join(lines) + "\n"


async def _queue_depth(queue: GroupQueue) -> str:
    client = getattr(queue, "client", None)
    stream = getattr(queue, "stream", None)
    if client is None or stream is None:
        return ""
    try:
        groups = await asyncio.wait_for(client.xinfo_groups(stream), timeout=2.0)
        length = await asyncio.wait_for(client.xlen(stream), timeout=2.0)
    except Exception:
        return ""
    lines = [f"envhub_rollout_queue_length {float(length)}"]
    for info in groups:
        name = info["name"].decode() if isinstance(info["name"], bytes) else str(info["name"])
        lines.append(f'envhub_rollout_queue_pending{{group="{name}"}} {float(info.get("pending") or 0)}')
        lines.append(f'envhub_rollout_queue_lag{{group="{name}"}} {float(info.get("lag") or 0)}')
    return "\n".join(lines) + "\n"


@ops.get("/metrics", response_class=Response, dependencies=[Depends(require_token)])
async def metrics(request: Request) -> Response:
    """Prometheus text exposition: the engine's metrics, the queue's counters, jobs by status."""
    body = request.app.state.metrics.render().decode()
    body += _queue_metrics(request.app) + await _queue_depth(request.app.state.queue)
    return Response(body, media_type="text/plain; version=0.0.4")


def _default_queue(settings: RolloutServiceSettings) -> tuple[GroupQueue, ServiceJournal]:
    """Redis queue + journal when a Redis URL is set, else the in-process queue and journal."""
    from envhub.rollout.journal import EngineJournal, MemoryJournal, RedisJournal
    from envhub.rollout.queue.memory import MemoryQueue

    if settings.redis_url:
        from envhub.rollout.queue.redis import RedisQueue

        bounds = QueueSettings()  # ENVHUB_QUEUE_MAX_LAG etc.: the service is the producer they bound
        queue = RedisQueue(
            settings.redis_url,
            stream=settings.stream,
            consumer="rollout-service",
            max_lag=bounds.max_lag,
            max_unacked=bounds.max_unacked,
            claim_idle_ms=bounds.lease_ms,
        )
        return queue, EngineJournal(RedisJournal(queue, prefix=f"{settings.stream}:journal"), queue)
    # In-process, the journal only guards against publishing a slot twice (it dies with us).
    memory = MemoryQueue()
    return memory, EngineJournal(MemoryJournal(), memory)


def _a_queue_key(stream: str) -> bool:
    """Whether ``stream`` names a key RedisQueue keeps beside a stream S: ``S:dead`` (dead letters),
    ``S:<group>:consumed`` (a consumer group's de-duplication set), ``S:<group>:lease:<uid>``."""
    return stream.endswith((":dead", ":consumed")) or ":lease:" in stream


def _job_channels(
    settings: RolloutServiceSettings, queue: GroupQueue
) -> Callable[[str | None, str], tuple[GroupQueue, ServiceJournal]] | None:
    """Per (stream, run): a RedisQueue on the service's connection and a journal committing to it.

    The journal keys stay under the service's ``<ENVHUB_STREAM>:journal`` (one journal per service,
    whatever stream a job publishes to), so a restart finds every job.
    """
    from envhub.rollout.journal import EngineJournal, RedisJournal
    from envhub.rollout.queue.redis import RedisQueue

    if not settings.redis_url or not isinstance(queue, RedisQueue):
        return None
    base = queue

    def make(stream: str | None, run: str) -> tuple[GroupQueue, ServiceJournal]:
        q = QueueSettings()
        job_queue = RedisQueue(
            base.url,
            stream=stream or settings.stream,
            group=run_group(run),
            consumer="rollout-service",
            run=run,
            max_lag=q.max_lag,
            max_unacked=q.max_unacked,
            claim_idle_ms=q.lease_ms,
            client=base.client,
        )
        journal = RedisJournal(job_queue, prefix=f"{settings.stream}:journal")
        return job_queue, EngineJournal(journal, job_queue)

    return make


def _build_manager(
    app: FastAPI, settings: RolloutServiceSettings, queue: GroupQueue, journal: ServiceJournal | None
) -> JobManager:
    client = getattr(queue, "client", None)
    leases: Leases = LocalLeases()
    if settings.redis_url and client is not None:
        owner = settings.instance_id or f"{socket.gethostname()}:{settings.port}"
        leases = RedisLeases(
            client, prefix=f"{settings.stream}:lease", owner=owner, ttl_s=settings.lease_ttl_s
        )
    manager = JobManager(
        queue=queue,
        journal=None,
        metrics=app.state.metrics,
        max_jobs=settings.max_jobs,
        leases=leases,
        lease_ttl_s=settings.lease_ttl_s,
        retention_s=settings.retention_s,
        registry=Registry(settings.scripted_policies, settings.projections),
        allow=UrlAllowList(settings.allowed_hosts, settings.env_urls),
        reserved_prefixes=(f"{settings.stream}:journal", f"{settings.stream}:lease"),
    )

    def count() -> None:
        manager.counters.redis_retries += 1

    if journal is not None:
        manager.journal = RetryingJournal(journal, budget_s=settings.redis_retry_s, on_retry=count)
    channels = _job_channels(settings, queue)
    if channels is not None and journal is not None:

        def retrying(stream: str | None, run: str) -> tuple[GroupQueue, ServiceJournal | None]:
            job_queue, job_journal = channels(stream, run)
            return job_queue, RetryingJournal(job_journal, budget_s=settings.redis_retry_s, on_retry=count)

        manager.channels = retrying
    return manager


def create_app(
    settings: RolloutServiceSettings | None = None,
    *,
    queue: GroupQueue | None = None,
    journal: ServiceJournal | None = None,
) -> FastAPI:
    """Build the rollout service.

    Args:
        settings: how to serve (default: ``RolloutServiceSettings()`` from ``ENVHUB_*``).
        queue: the group queue (default: from ``settings``: Redis or in-process).
        journal: the step journal (default: Redis's when ``settings.redis_url``, else none).
    """
    settings = settings or RolloutServiceSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        q, j = (queue, journal) if queue is not None else _default_queue(settings)
        manager = _build_manager(app, settings, q, j)
        app.state.jobs, app.state.queue = manager, q
        await manager.resume_all()
        manager.start_background()
        try:
            yield
        finally:
            await manager.stop()
            if queue is None:
                await q.aclose()

    app = FastAPI(
        title="envhub rollout service",
        version=envhub.__version__,
        description="Rollout jobs: GRPO groups played by a policy on env servers, published to a queue.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.metrics = RolloutMetrics()
    install_error_handler(app)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.include_router(router)
    app.include_router(ops)
    return app


def serve(settings: RolloutServiceSettings) -> None:
    """Run the service under uvicorn; SIGTERM drains (see :meth:`JobManager.drain`), then exits.

    The first SIGTERM (or SIGINT) stops new jobs at once (503 ``SHUTTING_DOWN``), gives running
    jobs ``shutdown_grace_s`` to finish and pauses the rest, resumable; then uvicorn shuts down.
    A second signal exits at once (jobs are then as after a SIGKILL: resumable from the journal).
    """
    import uvicorn

    app = create_app(settings)

    class _DrainingServer(uvicorn.Server):
        draining = False

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            manager: JobManager | None = getattr(app.state, "jobs", None)
            if self.draining or manager is None:
                super().handle_exit(sig, frame)
                return
            self.draining = True
            manager.accepting = False
            loop = asyncio.get_event_loop()

            async def drain_then_exit() -> None:
                try:
                    await manager.drain(settings.shutdown_grace_s)
                finally:
                    super(_DrainingServer, self).handle_exit(sig, frame)

            loop.call_soon_threadsafe(lambda: loop.create_task(drain_then_exit()))

    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info", access_log=False)
    _DrainingServer(config).run()

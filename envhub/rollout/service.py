"""``envhub serve-rollouts``: the rollout service (FastAPI).

=============================  ==========================================================
``POST /v1/rollouts``          submit a :class:`~envhub.rollout.jobs.RolloutRequest`; 201 with the job id
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
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import Response
from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

import envhub
from envhub.core.errors import EnvhubError, JobNotFoundError
from envhub.rollout.engine import JobAborted, JournalLike, ResumePoint, RolloutEngine, RolloutReport
from envhub.rollout.failures import classify
from envhub.rollout.jobs import (
    RolloutRequest,
    build_backend,
    check_policy,
    persisted_spec,
    resolve_env_id,
    run_job,
)
from envhub.rollout.metrics import RolloutMetrics
from envhub.rollout.queue.base import GroupQueue
from envhub.server.errors import install_error_handler

__all__ = [
    "Job",
    "JobCreated",
    "JobList",
    "JobManager",
    "JobProgress",
    "ManagerDep",
    "RolloutServiceSettings",
    "ServiceJournal",
    "cancel",
    "create_app",
    "health",
    "list_jobs",
    "metrics",
    "ops",
    "progress",
    "router",
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


class ServiceJournal(JournalLike, Protocol):
    """The journal calls the service makes beyond the engine's (see the queue package)."""

    async def save_job(self, job_id: str, spec: dict[str, Any]) -> None: ...

    async def jobs(self) -> list[tuple[str, dict[str, Any]]]: ...

    async def finish_job(self, job_id: str, status: str) -> None: ...

    async def done_slots(self, job_id: str) -> set[int]: ...

    async def open_groups(self, job_id: str) -> list[ResumePoint]: ...


class JobCreated(BaseModel):
    """``POST /v1/rollouts``: the new job."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(description="Use it in GET/DELETE /v1/rollouts/{job_id}; groups carry it as job_id.")
    status: Literal["running"] = "running"


class JobProgress(BaseModel):
    """Where a job stands."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    status: Literal["starting", "running", "done", "failed", "cancelled"]
    env_id: str | None = None
    total: int = Field(default=0, description="Groups in the job.")
    published: int = Field(default=0, description="Groups published whole.")
    dropped: int = Field(default=0, description="Groups dropped whole.")
    retried: int = Field(default=0, description="Group re-runs.")
    steps: int = 0
    tokens: int = 0
    steps_redone: int = Field(default=0, description="Steps played again after a crash.")
    steps_resumed: int = Field(default=0, description="Journaled steps kept on resume.")
    elapsed_s: float = 0.0
    groups_per_s: float = 0.0
    steps_per_s: float = 0.0
    tokens_per_s: float = 0.0
    drops_by_cause: dict[str, int] = Field(default_factory=dict)
    retries_by_cause: dict[str, int] = Field(default_factory=dict)
    error: dict[str, Any] | None = Field(default=None, description="{code, message} when the job failed.")


class JobList(BaseModel):
    """``GET /v1/rollouts``."""

    model_config = ConfigDict(extra="forbid")

    data: list[JobProgress]
    count: int


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

    def progress(self) -> JobProgress:
        report = self.engine.report if self.engine is not None else RolloutReport(started_at=self.created)
        elapsed = max(report.elapsed_s, 1e-9)
        return JobProgress(
            job_id=self.job_id,
            status=self.status,  # type: ignore[arg-type]
            env_id=self.env_id,
            total=report.total,
            published=report.published,
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


class JobManager:
    """The jobs of one service process."""

    def __init__(
        self,
        *,
        queue: GroupQueue,
        journal: ServiceJournal | None,
        metrics: RolloutMetrics,
        max_jobs: int,
    ) -> None:
        self.queue = queue
        self.journal = journal
        self.metrics = metrics
        self.jobs: dict[str, Job] = {}
        self._slots = asyncio.Semaphore(max_jobs)

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise JobNotFoundError(job_id)
        return job

    async def submit(self, request: RolloutRequest) -> Job:
        """Check the policy and the env servers, then start the job.

        Raises:
            PolicyUnavailableError: the policy endpoint does not answer (no job is created).
            ServerUnreachableError: the first env server does not answer.
            ConfigurationError: the scripted policy does not load.
        """
        await check_policy(request.policy)
        if isinstance(request.policy, str):
            # A scripted spec that does not load is the caller's mistake: say so now, as a 400.
            await build_backend(request.policy, request.policy_version).aclose()
        env_id = await resolve_env_id(request)
        request = request.model_copy(update={"env_id": env_id})  # a resumed job needs no lookup
        job = Job(job_id=uuid.uuid4().hex[:12], request=request, env_id=env_id)
        if self.journal is not None:
            await self.journal.save_job(job.job_id, persisted_spec(request))  # no secrets
        self._start(job)
        return job

    def _start(
        self, job: Job, *, done_slots: set[int] | None = None, resume: list[ResumePoint] | None = None
    ) -> None:
        self.jobs[job.job_id] = job
        job.task = asyncio.create_task(self._run(job, done_slots or set(), resume or []))

    async def _run(self, job: Job, done_slots: set[int], resume: list[ResumePoint]) -> None:
        async with self._slots:
            job.status = "running"

            def keep(engine: RolloutEngine) -> None:
                job.engine = engine

            try:
                await run_job(
                    job.request,
                    job_id=job.job_id,
                    queue=self.queue,
                    journal=self.journal,
                    metrics=self.metrics,
                    on_engine=keep,
                    done_slots=sorted(done_slots),
                    resume=resume,
                )
            except asyncio.CancelledError:
                job.status = "cancelled"
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
                job.status = "done"
            await self._finish(job)

    async def _finish(self, job: Job) -> None:
        if self.journal is not None and job.status in ("done", "cancelled"):
            # A failed job stays open in the journal: a restart (or a fixed policy) resumes it.
            with contextlib.suppress(Exception):
                await self.journal.finish_job(job.job_id, job.status)

    async def cancel(self, job_id: str) -> Job:
        job = self.get(job_id)
        if job.task is not None and not job.task.done():
            job.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await job.task
            job.status = "cancelled"
        return job

    async def resume_all(self) -> None:
        """Restart the journal's unfinished jobs (at startup)."""
        if self.journal is None:
            return
        for job_id, spec in await self.journal.jobs():
            request = RolloutRequest.model_validate(spec)
            done = await self.journal.done_slots(job_id)
            points = await self.journal.open_groups(job_id)
            job = Job(job_id=job_id, request=request, env_id=request.env_id)
            _log.info("resuming job %s: %d groups done, %d in flight", job_id, len(done), len(points))
            self._start(job, done_slots=done, resume=points)

    async def stop(self) -> None:
        tasks = [j.task for j in self.jobs.values() if j.task is not None and not j.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _manager(request: Request) -> JobManager:
    return request.app.state.jobs  # type: ignore[no-any-return]


ManagerDep = Annotated[JobManager, Depends(_manager)]
router = APIRouter(prefix="/v1/rollouts", tags=["rollouts"])
ops = APIRouter(tags=["operations"])


@router.post("", status_code=201, response_model=JobCreated)
async def submit(body: RolloutRequest, jobs: ManagerDep) -> JobCreated:
    """Start a rollout job."""
    job = await jobs.submit(body)
    return JobCreated(job_id=job.job_id)


@router.get("", response_model=JobList)
async def list_jobs(jobs: ManagerDep) -> JobList:
    """Every job of this process."""
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


@ops.get("/health")
async def health() -> dict[str, str]:
    """Liveness."""
    return {"status": "healthy"}


@ops.get("/metrics", response_class=Response)
async def metrics(request: Request) -> Response:
    """Prometheus text exposition."""
    return Response(request.app.state.metrics.render(), media_type="text/plain; version=0.0.4")


def _default_queue(settings: RolloutServiceSettings) -> tuple[GroupQueue, ServiceJournal]:
    """Redis queue + journal when a Redis URL is set, else the in-process queue and journal."""
    from envhub.rollout.journaling import EngineJournal
    from envhub.rollout.queue.journal import MemoryJournal, RedisJournal
    from envhub.rollout.queue.memory import MemoryQueue

    if settings.redis_url:
        from envhub.rollout.queue.redis import RedisQueue

        queue = RedisQueue(settings.redis_url, stream=settings.stream, consumer="rollout-service")
        return queue, EngineJournal(RedisJournal(queue, prefix=f"{settings.stream}:journal"), queue)
    # In-process, the journal only guards against publishing a slot twice (it dies with us).
    memory = MemoryQueue()
    return memory, EngineJournal(MemoryJournal(), memory)


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
        manager = JobManager(queue=q, journal=j, metrics=app.state.metrics, max_jobs=settings.max_jobs)
        app.state.jobs, app.state.queue = manager, q
        await manager.resume_all()
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
    app.include_router(router)
    app.include_router(ops)
    return app

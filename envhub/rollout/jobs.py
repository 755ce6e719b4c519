"""Rollout jobs: the request that describes one, and what runs it.

A :class:`RolloutRequest` names the env servers, the tasks, the group size, the sampling, the
policy (an OpenAI-compatible endpoint, or ``scripted:<module>:<callable>`` for tests) and the
agent context. :func:`run_job` turns it into an :class:`~envhub.rollout.engine.RolloutEngine`
over a :class:`~envhub.rollout.envpool.RemoteEnvPool` and plays it; the rollout service and
``envhub rollout`` both call it.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from envhub.core.errors import EnvhubError, PolicyUnavailableError
from envhub.policy.base import PolicyBackend, SamplingParams
from envhub.rollout.context import ContextConfig
from envhub.rollout.engine import (
    EngineConfig,
    EngineEvent,
    JournalLike,
    ResumePoint,
    RolloutEngine,
    SequenceBuilderLike,
)
from envhub.rollout.envpool import RemoteEnvPool
from envhub.rollout.metrics import RolloutMetrics
from envhub.rollout.queue.base import GroupQueue
from envhub.rollout.replicas import expand_replicas

__all__ = [
    "POLICY_API_KEY_ENV",
    "STREAM_PATTERN",
    "CountBeyondSplitError",
    "EnvNotServedError",
    "InvalidJobError",
    "JobRejectedError",
    "ModelNotServedError",
    "NotRegisteredError",
    "PolicyEndpoint",
    "RolloutRequest",
    "SamplingRequest",
    "UrlNotAllowedError",
    "api_key",
    "build_backend",
    "check_envs",
    "check_policy",
    "persisted_spec",
    "resolve_env_id",
    "run_job",
    "sequence_builders",
]


class JobRejectedError(EnvhubError):
    """A rollout request the service will not run (HTTP 422); each subclass has its own code.

    The tree::

        JobRejectedError
        ├── InvalidJobError       a field out of range                       (VALIDATION_ERROR)
        ├── EnvNotServedError     env_id is not what the env servers serve   (ENV_NOT_SERVED)
        ├── CountBeyondSplitError count is more than the split holds        (COUNT_BEYOND_SPLIT)
        ├── ModelNotServedError   the policy server does not list the model  (MODEL_NOT_SERVED)
        ├── NotRegisteredError    a policy/projection name not registered    (NOT_REGISTERED)
        └── UrlNotAllowedError    an env/policy URL off the allow-list       (URL_NOT_ALLOWED)
    """

    code: ClassVar[str] = "JOB_REJECTED"
    status_code: ClassVar[int] = 422


class InvalidJobError(JobRejectedError):
    """A field of the job is out of range (the CLI's form of a 422 ``VALIDATION_ERROR``)."""

    code = "VALIDATION_ERROR"

    @classmethod
    def from_validation(cls, exc: ValidationError, *, flags: bool = False) -> InvalidJobError:
        """One line from pydantic's errors: the first field (as a ``--flag`` when ``flags``) and why."""
        errors = exc.errors()
        loc, msg, given = (
            (errors[0]["loc"], errors[0]["msg"], errors[0].get("input")) if errors else ((), "", None)
        )
        where = ".".join(str(p) for p in loc) or "request"
        if flags:
            where = "--" + where.split(".")[-1].replace("_", "-")
        return cls(
            f"{where}: {msg or 'invalid value'} (got {given!r}).",
            errors=[{"loc": list(e.get("loc", ())), "msg": e.get("msg")} for e in exc.errors()],
        )


class EnvNotServedError(JobRejectedError):
    """The request's ``env_id`` is not the env its servers serve."""

    code = "ENV_NOT_SERVED"


class CountBeyondSplitError(JobRejectedError):
    """``count`` asks for more tasks than the split has."""

    code = "COUNT_BEYOND_SPLIT"


class ModelNotServedError(JobRejectedError):
    """The policy server does not list the request's model at ``/v1/models``."""

    code = "MODEL_NOT_SERVED"


class NotRegisteredError(JobRejectedError):
    """A scripted policy or projection the server has not registered (import paths are refused)."""

    code = "NOT_REGISTERED"


class UrlNotAllowedError(JobRejectedError):
    """An env or policy URL whose host is not on the service's allow-list."""

    code = "URL_NOT_ALLOWED"


#: What a job's ``stream`` may be: a plain Redis key.
STREAM_PATTERN = r"^[A-Za-z0-9_.:-]{1,200}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: Where a resumed job's policy key comes from (keys are never written to the journal).
POLICY_API_KEY_ENV = "ENVHUB_POLICY_API_KEY"


def api_key(policy: PolicyEndpoint) -> str | None:
    """The policy's bearer key: the request's, else ``$ENVHUB_POLICY_API_KEY`` (None if neither)."""
    if policy.api_key is not None:
        return policy.api_key.get_secret_value()
    return os.environ.get(POLICY_API_KEY_ENV) or None


def persisted_spec(request: RolloutRequest) -> dict[str, Any]:
    """``request`` as the journal may keep it: JSON, without secrets (the policy key is dropped)."""
    spec = request.model_dump(mode="json")
    if isinstance(spec.get("policy"), dict):
        spec["policy"].pop("api_key", None)
    return spec


class PolicyEndpoint(_Strict):
    """An OpenAI-compatible server (vLLM, SGLang, ...) and how to talk to it."""

    base_url: str = Field(description="Server root or .../v1, e.g. http://127.0.0.1:8001/v1.")
    model: str = Field(description="The served model name.")
    tokenizer: str | None = Field(
        default=None, description="Local tokenizer directory: render prompts locally, send token ids."
    )
    api_key: SecretStr | None = Field(
        default=None,
        description=(
            "Bearer key, if the server wants one. Never saved: a job resumed after a restart takes "
            f"it from ${POLICY_API_KEY_ENV}."
        ),
    )
    max_concurrency: int = Field(default=64, ge=1, description="Requests in flight at most.")
    timeout_s: float = Field(default=300.0, gt=0, description="Time allowed for one request.")


class SamplingRequest(_Strict):
    """Sampling parameters (verl-agent's training defaults: T=1, top-p 1)."""

    temperature: float = Field(default=1.0, ge=0, le=100)
    top_p: float = Field(default=1.0, gt=0, le=1)
    top_k: int = Field(default=-1, ge=-1, description="-1: off; else the k most likely tokens.")
    max_tokens: int = Field(default=256, ge=1)
    stop: list[str] = Field(default_factory=list)
    seed: int | None = None

    def params(self) -> SamplingParams:
        return SamplingParams(
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            max_tokens=self.max_tokens,
            stop=tuple(self.stop),
            seed=self.seed,
        )


class RolloutRequest(_Strict):
    """``POST /v1/rollouts``: one rollout job."""

    env_urls: list[str] = Field(min_length=1, description="Env server replicas (all serving the same env).")
    env_id: str | None = Field(
        default=None, description="The env's id; default: what the first server serves."
    )
    env_token: str | None = Field(default=None, description="Bearer token of the env servers.")
    resolve_replicas: bool = Field(
        default=False,
        description="Treat every address an env URL's host name resolves to as a replica (a compose "
        "service with replicas, a Kubernetes headless Service); each group stays on one.",
    )
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="Env constructor keyword arguments.")
    split: str | None = Field(default=None, description="Split of the tasks (the env's default if null).")
    task_ids: list[str] | None = Field(
        default=None, min_length=1, description="Explicit tasks, one group each (at least one)."
    )
    count: int | None = Field(default=None, ge=1, description="Else: the first count tasks of the split.")
    group_size: int = Field(default=8, ge=1, le=1024, description="Members per group (GRPO's n).")
    max_steps: int = Field(default=50, ge=1, le=10_000, description="Steps before an episode is truncated.")
    sampling: SamplingRequest = Field(default_factory=SamplingRequest)
    policy: PolicyEndpoint | str = Field(
        description=(
            "An OpenAI-compatible endpoint, or 'scripted:<name>': a scripted policy registered on the "
            "server (tests, benchmarks)."
        )
    )
    policy_version: int = Field(default=0, ge=0, description="Stamped on every step.")
    context: ContextConfig = Field(
        default_factory=ContextConfig, description="Prompt building (max_steps aside)."
    )
    max_concurrent_groups: int = Field(default=8, ge=1, le=4096)
    step_timeout_s: float | None = Field(default=300.0, gt=0)
    episode_timeout_s: float | None = Field(default=None, gt=0)
    on_failure: Literal["retry", "drop"] = "retry"
    max_attempts: int = Field(default=2, ge=1, le=10)
    seed: int = Field(default=0, ge=0)
    trajectory_mode: bool = Field(
        default=False, description="Also build one token sequence per episode (needs policy.tokenizer)."
    )
    stream: str | None = Field(
        default=None,
        pattern=STREAM_PATTERN,
        description="The Redis stream the job publishes to (letters, digits and ._:-); default: the "
        "service's ENVHUB_STREAM. A trainer sends its own (rollout.queue_stream).",
    )
    run: str = Field(
        default="",
        pattern=r"^[A-Za-z0-9_.:-]{0,128}$",
        description="A label written on every stream entry's `run` field (a trainer run). Back-pressure "
        "counts the run's consumer group, trainers:<run> (trainers when empty), which is the group "
        "the trainer of that run reads with, taking only its run's entries.",
    )

    @model_validator(mode="after")
    def _tasks_given(self) -> RolloutRequest:
        if (self.task_ids is None) == (self.count is None):
            raise ValueError(
                "give exactly one of task_ids (explicit tasks) or count (the first count of the split)"
            )
        if isinstance(self.policy, str) and not self.policy.startswith("scripted:"):
            raise ValueError("policy must be an endpoint object or 'scripted:<name>'")
        if self.trajectory_mode and (isinstance(self.policy, str) or self.policy.tokenizer is None):
            raise ValueError(
                "trajectory_mode needs a policy endpoint with a local tokenizer (policy.tokenizer)"
            )
        for url in self.env_urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"env url {url!r} must start with http:// or https://")
        return self

    def engine_config(self) -> EngineConfig:
        """The engine's configuration for this job."""
        return EngineConfig(
            group_size=self.group_size,
            max_concurrent_groups=self.max_concurrent_groups,
            sampling=self.sampling.params(),
            context=self.context.model_copy(update={"max_steps": self.max_steps}),
            split=self.split,
            env_kwargs=self.env_kwargs,
            seed=self.seed,
            step_timeout_s=self.step_timeout_s,
            episode_timeout_s=self.episode_timeout_s,
            on_failure=self.on_failure,
            max_attempts=self.max_attempts,
            trajectory_mode=self.trajectory_mode,
        )


def build_backend(policy: PolicyEndpoint | str, policy_version: int) -> PolicyBackend:
    """The backend a request names.

    Raises:
        ConfigurationError: a scripted spec that does not load.
    """
    if isinstance(policy, str):
        from envhub.policy.scripted import load_scripted

        return load_scripted(policy, policy_version=policy_version)
    # Imported here: scripted jobs never load the HTTP backend (it needs only core dependencies).
    openai_http = importlib.import_module("envhub.policy.openai_http")
    return openai_http.OpenAIBackend(  # type: ignore[no-any-return]
        base_url=policy.base_url,
        model=policy.model,
        tokenizer_path=policy.tokenizer,
        api_key=api_key(policy),
        max_concurrency=policy.max_concurrency,
        timeout_s=policy.timeout_s,
        policy_version=policy_version,
    )


def sequence_builders(policy: PolicyEndpoint | str) -> Callable[[str, str], SequenceBuilderLike]:
    """A factory of trajectory-mode builders over the policy's tokenizer (loaded once)."""
    from envhub.policy.tokenizer import ChatTokenizer
    from envhub.rollout.sequences import SequenceBuilder

    assert isinstance(policy, PolicyEndpoint) and policy.tokenizer is not None  # checked by the request
    tokenizer = ChatTokenizer(policy.tokenizer)
    return lambda uid, traj_id: SequenceBuilder(tokenizer, uid=uid, traj_id=traj_id)


async def check_policy(policy: PolicyEndpoint | str, *, timeout_s: float = 5.0) -> None:
    """Fail fast when an endpoint does not answer ``GET <base_url>/models``.

    Raises:
        PolicyUnavailableError: no answer, or not an OpenAI-compatible one.
    """
    if isinstance(policy, str):
        return
    # OpenAIBackend accepts the server root or .../v1; the models list is always at /v1/models.
    url = policy.base_url.rstrip("/").removesuffix("/v1") + "/v1/models"
    key = api_key(policy)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            reply = await client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        raise PolicyUnavailableError(
            f"The policy endpoint {policy.base_url} does not answer ({type(exc).__name__}: {exc}). "
            "Start the OpenAI-compatible server (e.g. `python -m vllm.entrypoints.openai.api_server "
            "--model ...`) or fix policy.base_url; no job was created.",
            endpoint=policy.base_url,
        ) from exc
    if reply.status_code != 200:
        raise PolicyUnavailableError(
            f"The policy endpoint {policy.base_url} answered GET /models with HTTP {reply.status_code}; "
            "is it an OpenAI-compatible server? No job was created.",
            endpoint=policy.base_url,
            status=reply.status_code,
        )
    try:
        served = [str(m.get("id")) for m in reply.json().get("data", [])]
    except (ValueError, AttributeError) as exc:
        raise PolicyUnavailableError(
            f"The policy endpoint {policy.base_url} answered GET /models with something that is not an "
            "OpenAI model list; is it an OpenAI-compatible server? No job was created.",
            endpoint=policy.base_url,
        ) from exc
    if policy.model not in served:
        raise ModelNotServedError(
            f"The policy server {policy.base_url} does not serve model {policy.model!r} (it lists "
            f"{served[:10]}); set policy.model to one of them. No job was created.",
            model=policy.model,
            served=served[:50],
        )


async def check_envs(request: RolloutRequest) -> str:
    """Check the request against what its first env server serves; returns the env id.

    Raises:
        EnvNotServedError: ``env_id`` is not what the server serves.
        CountBeyondSplitError: ``count`` is more than the split's tasks.
        ServerUnreachableError: the server does not answer.
        ConfigurationError: the server refuses the split.
    """
    from envhub.client import AsyncEnvClient

    async with AsyncEnvClient(request.env_urls[0], token=request.env_token) as client:
        served = (await client.ready()).env_id
        if request.env_id is not None and request.env_id != served:
            raise EnvNotServedError(
                f"The env servers at {request.env_urls[0]} serve {served!r}, not {request.env_id!r}; set "
                f"env_id to {served!r} (or leave it out) or point env_urls at servers of {request.env_id!r}.",
                env_id=request.env_id,
                served=served,
            )
        if request.count is not None:
            page = await client.tasks(request.split, limit=1)
            if request.count > page.total:
                raise CountBeyondSplitError(
                    f"count={request.count} but split {page.split!r} of {served} has {page.total} tasks; "
                    f"ask for at most {page.total}.",
                    count=request.count,
                    split=page.split,
                    total=page.total,
                )
    return served


async def resolve_env_id(request: RolloutRequest) -> str:
    """The env id of the job: the request's, else what the first server reports on ``/ready``."""
    if request.env_id is not None:
        return request.env_id
    from envhub.client import AsyncEnvClient

    async with AsyncEnvClient(request.env_urls[0], token=request.env_token) as client:
        return (await client.ready()).env_id


async def run_job(
    request: RolloutRequest,
    *,
    job_id: str,
    queue: GroupQueue | None,
    journal: JournalLike | None = None,
    metrics: RolloutMetrics | None = None,
    on_event: Callable[[EngineEvent], None] | None = None,
    on_engine: Callable[[RolloutEngine], None] | None = None,
    done_slots: Sequence[int] = (),
    resume: Sequence[ResumePoint] = (),
    backend: PolicyBackend | None = None,
) -> RolloutEngine:
    """Play the job and return its engine (whose ``report`` says what happened).

    Args:
        request: the job.
        job_id: the job's id (prefix of its group ids).
        queue: where finished groups go (unless a journal publishes them).
        journal: records steps and commits groups (resume after a crash).
        metrics: the service's metrics.
        on_event: engine events (progress).
        on_engine: called with the engine before it starts (the service keeps it for progress).
        done_slots: slots already published by an earlier run of this job (skipped).
        resume: in-flight groups read back from the journal.
        backend: the policy backend (default: built from ``request.policy``).

    Raises:
        JobAborted: a failure no re-run can fix (see :class:`~envhub.rollout.engine.RolloutEngine`).
        EnvhubError: the env servers or the policy could not be set up.
    """
    env_id = await resolve_env_id(request)
    env_urls = request.env_urls
    if request.resolve_replicas:
        env_urls = await asyncio.to_thread(expand_replicas, env_urls)
    envs = RemoteEnvPool(env_urls, env_id=env_id, token=request.env_token)
    owned = backend is None
    backend = backend or build_backend(request.policy, request.policy_version)
    try:
        engine = RolloutEngine(
            envs=envs,
            backend=backend,
            config=request.engine_config(),
            queue=queue,
            journal=journal,
            metrics=metrics,
            job_id=job_id,
            on_event=on_event,
            sequence_builder=sequence_builders(request.policy) if request.trajectory_mode else None,
        )
        tasks = await engine.resolve_tasks(task_ids=request.task_ids, count=request.count)
        if on_engine is not None:
            on_engine(engine)
        skip = set(done_slots)
        engine.report.total = len(skip)
        engine.report.published = len(skip)
        await engine.run([t for t in tasks if t.slot not in skip], resume=resume)
        return engine
    finally:
        await envs.aclose()
        if owned:
            await asyncio.shield(backend.aclose())

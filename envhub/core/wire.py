"""The env server's wire models: one pydantic model per role (request, response, error).

These are the contract between :mod:`envhub.server` and :mod:`envhub.client`; field names
and meanings are stable. Requests and responses both forbid unknown fields, so a typo in a
client is a 422 with the field named instead of a silently ignored option.

Endpoints (all JSON; every error answers :class:`ErrorBody`):

=======================================  ==========================  =========================
Endpoint                                 Request                     Response
=======================================  ==========================  =========================
``POST /v1/sessions``                    :class:`SessionCreate`      :class:`SessionCreated`
``POST /v1/sessions/{id}/reset``         :class:`ResetRequest`       :class:`ResetResponse`
``POST /v1/sessions/{id}/step``          :class:`StepRequest`        :class:`StepResponse`
``GET /v1/sessions/{id}``                                            :class:`SessionState`
``DELETE /v1/sessions/{id}``                                         :class:`SessionClosed`
``GET /v1/tasks?split=&offset=&limit=``                              :class:`TaskList`
``POST /v1/groups``                      :class:`GroupCreate`        :class:`GroupCreated`
``POST /v1/batch/step``                  ``list[BatchStepItem]``     :class:`BatchStepResponse`
``POST /v1/batch/reset``                 ``list[BatchResetItem]``    :class:`BatchResetResponse`
``GET /v1/debug/workers``                                            :class:`WorkerList`
``GET /health``                                                      :class:`Health`
``GET /ready``                                                       :class:`Readiness`
``GET /metrics``                                                     Prometheus text
=======================================  ==========================  =========================

The rollout service (``envhub serve-rollouts``) takes a :class:`RolloutRequest` at
``POST /v1/rollouts`` and answers :class:`RolloutJobCreated`, :class:`RolloutJobProgress` and
:class:`RolloutJobList`; the rollout client, ``envhub rollout`` and the trainer send the same
model.

The OpenEnv-compatible surface (``/reset``, ``/step``, ``/state``, ``/schema``,
``/metadata``, ``WS /ws``) uses the ``OpenEnv*`` models at the end of this module, whose
shapes match ``openenv-core`` 0.3.0.
"""

from __future__ import annotations

import base64
import types
from typing import Any, Literal, Union, get_args, get_origin
from urllib.parse import urlsplit

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from envhub.core.errors import ErrorCode

__all__ = [
    "HISTORY_PRESETS",
    "MATH_MAX_ROUNDS",
    "MAX_BATCH_ITEMS",
    "MAX_CONCURRENT_GROUPS",
    "MAX_GROUP_SIZE",
    "ORCHESTRAS",
    "POLICY_API_KEY_ENV",
    "SECRET_FIELDS",
    "STREAM_PATTERN",
    "BatchResetItem",
    "BatchResetResponse",
    "BatchResetSlot",
    "BatchStepItem",
    "BatchStepResponse",
    "BatchStepSlot",
    "ContextConfig",
    "ErrorBody",
    "GroupCreate",
    "GroupCreated",
    "GroupMember",
    "Health",
    "HistoryFrame",
    "HistoryOptions",
    "HistoryStyle",
    "NoBooleanNumbers",
    "OpenEnvAction",
    "OpenEnvMetadata",
    "OpenEnvObservation",
    "OpenEnvResetRequest",
    "OpenEnvSchema",
    "OpenEnvState",
    "OpenEnvStepRequest",
    "OpenEnvStepResponse",
    "OrchestraSpec",
    "PolicyEndpoint",
    "Readiness",
    "ResetRequest",
    "ResetResponse",
    "RolloutJobCreated",
    "RolloutJobList",
    "RolloutJobProgress",
    "RolloutJobStatus",
    "RolloutRequest",
    "SamplingRequest",
    "SessionClosed",
    "SessionCreate",
    "SessionCreated",
    "SessionState",
    "StepRequest",
    "StepResponse",
    "TaskList",
    "WorkerInfo",
    "WorkerList",
    "json_default",
    "redact",
    "url_without_credentials",
]

#: Most items one batch request may carry (bigger batches: split them).
MAX_BATCH_ITEMS = 4096
#: Largest group one ``POST /v1/groups`` creates (and one rollout job plays).
MAX_GROUP_SIZE = 1024
#: Most groups one rollout job plays at once.
MAX_CONCURRENT_GROUPS = 4096

_ID = Field(min_length=1, max_length=255)


#: Memory line styles of :data:`envhub.agent.memory.MEMORY_STYLES` (a test keeps the two equal;
#: the wire sits below ``agent`` and cannot import it).
HistoryStyle = Literal["step", "search", "ocr", "ocr-search"]


def json_default(value: Any) -> Any:
    """``json.dumps`` fallback for what envs put in ``info`` (numpy values, PNG bytes, sets).

    The env server and the in-process env pool both encode ``info`` with it, so a trajectory
    recorded through a server and one recorded in process are identical.
    """
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, bytes | bytearray):
        # Images travel as base64 text; JSON has no bytes type.
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return repr(value)


def _number_only(annotation: Any) -> bool:
    """Whether a field of this type takes numbers (int or float) but not booleans."""
    union = get_origin(annotation) in (Union, types.UnionType)
    members = get_args(annotation) if union else (annotation,)
    return bool not in members and any(m in (int, float) for m in members)


def _numbers_only(annotation: Any) -> bool:
    """Whether a field of this type is a list or tuple of numbers (``ks: list[int]``,
    ``betas: tuple[float, float]``), booleans not among them."""
    items = [a for a in get_args(annotation) if a is not Ellipsis]
    return get_origin(annotation) in (list, tuple) and bool(items) and all(map(_number_only, items))


_SEQUENCES = (list, tuple)


class NoBooleanNumbers(BaseModel):
    """A model whose number fields refuse a boolean (pydantic's lax mode reads ``true`` as 1).

    The request models (:class:`_Request`) and the configs that carry them (``EvalConfig``,
    the trainer's sections) share it, so ``--set count=true``, ``{"group_size": true}``,
    ``envhub eval --set n=true`` and ``envhub-train --set iterations=true`` are all refused.
    """

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        # isinstance first: a string (the hot path's fields) passes at the cost of two checks.
        if isinstance(value, bool):
            if info.field_name is not None and _number_only(cls.model_fields[info.field_name].annotation):
                raise PydanticCustomError("number_not_boolean", "Input should be a number, not a boolean")
        elif (
            isinstance(value, _SEQUENCES)
            and info.field_name is not None
            and any(isinstance(v, bool) for v in value)
            and _numbers_only(cls.model_fields[info.field_name].annotation)
        ):
            raise PydanticCustomError("number_not_boolean", "Input should be numbers, not booleans")
        return value


class _Request(NoBooleanNumbers):
    """Base of request bodies: unknown fields are a 422, not silently dropped.

    A boolean where a number is asked is refused too (:class:`NoBooleanNumbers`): pydantic's lax
    mode reads ``true`` as 1, so ``--set count=true`` or ``{"group_size": true}`` would otherwise
    run a job nobody meant.
    """

    model_config = ConfigDict(extra="forbid")


class _Response(BaseModel):
    """Base of response bodies: strict, so server and client cannot drift apart."""

    model_config = ConfigDict(extra="forbid")


# -- errors -----------------------------------------------------------------------------------


class ErrorBody(_Response):
    """Every error response, HTTP or batch slot: ``{code, message, detail}``."""

    code: ErrorCode = Field(description="Stable machine-readable error code (see envhub.core.errors).")
    message: str = Field(description="What went wrong and how to fix it.")
    detail: dict[str, Any] = Field(default_factory=dict, description="Structured fields of the error.")

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "code": "SESSION_NOT_FOUND",
                    "message": "No session 's-1' on this server. Create one with POST /v1/sessions ...",
                    "detail": {"session_id": "s-1"},
                }
            ]
        },
    )


# -- sessions ---------------------------------------------------------------------------------


class SessionCreate(_Request):
    """``POST /v1/sessions``: create one session (an env instance pinned to one worker)."""

    env_kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="Keyword arguments for the env constructor (as in envhub.make(env_id, **env_kwargs)).",
    )
    history: HistoryOptions | None = Field(
        default=None,
        description="Keep the agent's history in its worker and render it (AgentOCR) after each step.",
    )


class SessionCreated(_Response):
    """A new session; reset it before stepping."""

    session_id: str = Field(description="Opaque id; pass it in the path of later requests.")
    env_id: str = Field(description="The env this server serves.")
    expires_at: float = Field(
        description="Unix time (s) after which an idle session is reaped; use refreshes it."
    )


class ResetRequest(_Request):
    """``POST /v1/sessions/{id}/reset``: start an episode."""

    seed: int | None = Field(
        default=None, ge=0, description="Seeds the env; without task_id it also picks the task."
    )
    task_id: str | None = Field(
        default=None, max_length=1024, description="The task to play (see GET /v1/tasks)."
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="Further reset options passed to env.reset (e.g. split)."
    )
    request_id: str | None = Field(
        default=None,
        max_length=255,
        description="Idempotency key: a retry with the same id returns the first result.",
    )


class ResetResponse(_Response):
    """The first observation of an episode."""

    session_id: str = Field(description="The session that was reset.")
    observation: str = Field(description="The first text observation.")
    info: dict[str, Any] = Field(
        description="The env's info dict (anchor, admissible_actions, won, task_id, ...)."
    )
    expires_at: float = Field(description="Unix time (s) the session now expires if left idle.")


class StepRequest(_Request):
    """``POST /v1/sessions/{id}/step``: apply one text action."""

    action: str = Field(max_length=1 << 20, description="The text action; envs never reject any string.")
    request_id: str | None = Field(
        default=None,
        max_length=255,
        description="Idempotency key: a retry with the same id returns the stored result, not a new step.",
    )


class StepResponse(_Response):
    """One transition, gymnasium-complete plus OpenEnv's ``done``."""

    session_id: str = Field(description="The session that stepped.")
    observation: str = Field(description="The next text observation.")
    reward: float = Field(description="Reward of this step.")
    terminated: bool = Field(description="The episode reached a terminal state.")
    truncated: bool = Field(description="The episode hit its step limit.")
    done: bool = Field(description="terminated or truncated.")
    info: dict[str, Any] = Field(description="The env's info dict (anchor, admissible_actions, won, ...).")
    step_count: int = Field(description="Actions taken in this episode, this one included.")
    expires_at: float = Field(description="Unix time (s) the session now expires if left idle.")
    history: HistoryFrame | None = Field(
        default=None,
        description="The rendered history for the next prompt; absent for sessions created without history.",
    )


class SessionState(_Response):
    """``GET /v1/sessions/{id}``: where a session stands."""

    session_id: str = Field(description="The session.")
    env_id: str = Field(description="The env it runs.")
    task_id: str | None = Field(description="The task of the current episode (null before the first reset).")
    step_count: int = Field(description="Actions taken in the current episode.")
    done: bool = Field(description="Whether the current episode has ended.")
    last_observation: str | None = Field(description="The latest observation (null before the first reset).")
    created_at: float = Field(description="Unix time (s) the session was created.")
    expires_at: float = Field(description="Unix time (s) the session expires if left idle.")


class SessionClosed(_Response):
    """``DELETE /v1/sessions/{id}``: the session is gone and its slot is free."""

    session_id: str = Field(description="The session that was closed.")
    closed: bool = Field(default=True, description="Always true.")


class TaskList(_Response):
    """``GET /v1/tasks``: one page of a split's task ids, in the env's stable order."""

    split: str = Field(description="The split listed.")
    offset: int = Field(description="Index of the first id returned.")
    limit: int = Field(description="Most ids asked for.")
    total: int = Field(description="Ids in the whole split.")
    task_ids: list[str] = Field(description="The page of task ids.")


# -- groups -----------------------------------------------------------------------------------


class GroupCreate(_Request):
    """``POST /v1/groups``: ``group_size`` sessions reset to the identical initial state."""

    group_size: int = Field(ge=1, le=MAX_GROUP_SIZE, description="How many sessions (a GRPO group's n).")
    task_id: str | None = Field(
        default=None, max_length=1024, description="The task; else the seed picks one."
    )
    seed: int | None = Field(
        default=None, ge=0, description="Seed for every member; drawn by the server if absent."
    )
    split: str | None = Field(
        default=None, max_length=64, description="Split to draw the task from (no task_id)."
    )
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="Env constructor keyword arguments.")
    history: HistoryOptions | None = Field(
        default=None, description="Server-side AgentOCR history for every member (see SessionCreate)."
    )


class GroupMember(_Response):
    """One member session of a group with its first observation."""

    session_id: str = Field(description="The member's session id.")
    observation: str = Field(description="Its first observation (identical across the group).")
    info: dict[str, Any] = Field(description="Its first info dict.")


class GroupCreated(_Response):
    """A new group: every member was reset with the same task and seed."""

    group_id: str = Field(description="Id shared by the members (use it as the GRPO uid).")
    task_id: str | None = Field(description="The task all members play.")
    seed: int = Field(description="The seed every member was reset with.")
    expires_at: float = Field(description="Unix time (s) the members expire if left idle.")
    sessions: list[GroupMember] = Field(description="The members, in order.")


# -- batch ------------------------------------------------------------------------------------


class BatchStepItem(_Request):
    """One item of ``POST /v1/batch/step``."""

    session_id: str = Field(max_length=255, description="The session to step.")
    action: str = Field(max_length=1 << 20, description="Its text action.")
    request_id: str | None = Field(default=None, max_length=255, description="Idempotency key for this item.")


class BatchStepSlot(_Response):
    """The answer for one batch item: a result or an error, never both."""

    ok: bool = Field(description="True when result is set.")
    result: StepResponse | None = Field(default=None, description="The transition, when ok.")
    error: ErrorBody | None = Field(default=None, description="Why this item failed, when not ok.")


class BatchStepResponse(_Response):
    """``POST /v1/batch/step``: one slot per item, in request order."""

    results: list[BatchStepSlot] = Field(description="Slots in the order of the request's items.")


class BatchResetItem(_Request):
    """One item of ``POST /v1/batch/reset``."""

    session_id: str = Field(max_length=255, description="The session to reset.")
    seed: int | None = Field(default=None, ge=0, description="Seed (see ResetRequest).")
    task_id: str | None = Field(default=None, max_length=1024, description="Task id (see ResetRequest).")
    options: dict[str, Any] = Field(default_factory=dict, description="Further reset options.")
    request_id: str | None = Field(default=None, max_length=255, description="Idempotency key for this item.")


class BatchResetSlot(_Response):
    """The answer for one batch reset item: a result or an error, never both."""

    ok: bool = Field(description="True when result is set.")
    result: ResetResponse | None = Field(default=None, description="The first observation, when ok.")
    error: ErrorBody | None = Field(default=None, description="Why this item failed, when not ok.")


class BatchResetResponse(_Response):
    """``POST /v1/batch/reset``: one slot per item, in request order."""

    results: list[BatchResetSlot] = Field(description="Slots in the order of the request's items.")


# -- operations -------------------------------------------------------------------------------


class Health(_Response):
    """``GET /health``: liveness (the process and its event loop answer). OpenEnv's shape."""

    status: Literal["healthy", "unhealthy", "degraded"] = Field(
        description="healthy: all workers alive; degraded: some being replaced (the server still answers)."
    )


class Readiness(_Response):
    """``GET /ready``: whether the server can take new sessions (HTTP 503 when not)."""

    ready: bool = Field(description="Workers alive and a free session slot.")
    env_id: str = Field(description="The env this server serves.")
    active_sessions: int = Field(description="Sessions held now.")
    max_sessions: int = Field(description="Session capacity (--max-sessions).")
    workers_alive: int = Field(description="Worker processes alive now.")
    workers_total: int = Field(description="Worker processes configured (--workers).")


class WorkerInfo(_Response):
    """One worker process."""

    index: int = Field(description="Worker slot, 0-based; a replacement keeps the slot.")
    pid: int | None = Field(description="OS process id (null while being replaced).")
    alive: bool = Field(description="Whether the process is running.")
    sessions: int = Field(description="Sessions pinned to this worker.")
    restarts: int = Field(description="Times this slot's process was replaced.")


class WorkerList(_Response):
    """``GET /v1/debug/workers``: the worker pool (token-protected like /v1)."""

    workers: list[WorkerInfo] = Field(description="One entry per worker slot.")


# -- OpenEnv-compatible surface -----------------------------------------------------------------


class OpenEnvAction(BaseModel):
    """The action schema envhub publishes at ``GET /schema``: one text action.

    OpenEnv actions are objects; envhub's is ``{"action": "<text>"}`` (``message`` is accepted as
    an alias, as OpenEnv's echo env names it).
    """

    model_config = ConfigDict(extra="forbid")

    action: str = Field(description="The text action.")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Ignored; kept for OpenEnv's Action shape."
    )


class OpenEnvObservation(BaseModel):
    """The observation object inside OpenEnv responses (OpenEnv drops ``metadata``; envhub keeps ``info``)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The text observation.")
    terminated: bool = Field(default=False, description="The episode reached a terminal state.")
    truncated: bool = Field(default=False, description="The episode hit its step limit.")
    info: dict[str, Any] = Field(default_factory=dict, description="The env's info dict.")
    session_id: str | None = Field(default=None, description="The envhub session (stateful mode only).")


class OpenEnvResetRequest(BaseModel):
    """``POST /reset`` as OpenEnv sends it (extra fields allowed, as in OpenEnv)."""

    model_config = ConfigDict(extra="allow")

    seed: int | None = Field(default=None, ge=0, description="Random seed for reproducible episodes.")
    episode_id: str | None = Field(default=None, max_length=255, description="Custom episode identifier.")
    session_id: str | None = Field(
        default=None,
        max_length=255,
        description="envhub extension: reset this session instead of a fresh env.",
    )
    task_id: str | None = Field(
        default=None, max_length=1024, description="envhub extension: the task to play."
    )


class OpenEnvStepRequest(BaseModel):
    """``POST /step`` as OpenEnv sends it (extra fields allowed, as in OpenEnv)."""

    model_config = ConfigDict(extra="allow")

    action: dict[str, Any] = Field(description="The action object: {'action': '<text>'}.")
    timeout_s: float | None = Field(default=None, gt=0, description="Accepted for compatibility.")
    request_id: str | None = Field(
        default=None, max_length=255, description="Idempotency key (stateful mode)."
    )
    session_id: str | None = Field(
        default=None,
        max_length=255,
        description="envhub extension: step this session instead of a fresh env.",
    )


class OpenEnvStepResponse(BaseModel):
    """``POST /reset`` and ``POST /step`` answer, byte-compatible with OpenEnv's."""

    model_config = ConfigDict(extra="forbid")

    observation: dict[str, Any] = Field(description="The observation object (see OpenEnvObservation).")
    reward: float | None = Field(default=None, description="Reward (null at reset).")
    done: bool = Field(default=False, description="terminated or truncated.")


class OpenEnvState(BaseModel):
    """``GET /state``: OpenEnv's State (extra fields allowed)."""

    model_config = ConfigDict(extra="allow")

    episode_id: str | None = Field(default=None, description="The episode id given at reset.")
    step_count: int = Field(default=0, ge=0, description="Steps taken in the current episode.")


class OpenEnvSchema(BaseModel):
    """``GET /schema``: JSON schemas of action, observation and state."""

    model_config = ConfigDict(extra="forbid")

    action: dict[str, Any] = Field(description="JSON schema of the action object.")
    observation: dict[str, Any] = Field(description="JSON schema of the observation object.")
    state: dict[str, Any] = Field(description="JSON schema of the state object.")


class OpenEnvMetadata(BaseModel):
    """``GET /metadata``: OpenEnv's EnvironmentMetadata."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Name of the environment.")
    description: str = Field(description="What the environment does.")
    readme_content: str | None = Field(default=None, description="README text, if any.")
    version: str | None = Field(default=None, description="Version of the environment.")
    author: str | None = Field(default=None, description="Author of the environment.")
    documentation_url: str | None = Field(default=None, description="Documentation URL.")


# -- AgentOCR history (server-side rendering) ---------------------------------------------------

#: Render presets a session's history may use (``envhub.render.RenderConfig.<preset>()``).
HISTORY_PRESETS = ("alfworld", "search")


class HistoryOptions(_Request):
    """``history`` on ``POST /v1/sessions`` / ``POST /v1/groups``: keep and render the agent's history.

    After every step the session's worker records (the observation the action was taken in,
    the action) into an :class:`envhub.render.OpticalHistory` and renders the image for the next
    prompt with the worker's segment cache, exactly as a client calling ``record`` then
    ``render`` would.
    """

    style: HistoryStyle = Field(
        default="ocr", description="Memory line style: ocr (ALFWorld), ocr-search (search), step or search."
    )
    window: int = Field(
        default=50, ge=0, le=100_000, description="Steps shown (AgentOCR: 50 ALFWorld, 4 search)."
    )
    preset: str = Field(
        default="alfworld", description="Render preset: alfworld (font 10, 392 px) or search."
    )
    compression: bool = Field(
        default=False,
        description=(
            "Self-compression: read <compression>c</compression> from each action (the tag is removed "
            "before the env sees the action), shrink the next image by c, and return the "
            "compression-aware rewards when the episode ends."
        ),
    )
    compression_lam: float = Field(
        default=0.01, ge=0.0, description="Bonus weight for won episodes (lambda)."
    )
    compression_mu: float = Field(default=0.0, ge=0.0, description="Penalty weight for lost episodes (mu).")
    inline: bool | None = Field(
        default=None,
        description=(
            "true: the PNG rides in the step response (base64); false: a link to "
            "GET /v1/sessions/{id}/history.png; null: the server default (inline, measured cheaper)."
        ),
    )

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, preset: str) -> str:
        if preset not in HISTORY_PRESETS:
            raise ValueError(f"unknown history preset {preset!r}; use one of {list(HISTORY_PRESETS)}")
        return preset


class HistoryFrame(_Response):
    """The history image rendered after a step, for the next prompt, and what it costs."""

    step: int = Field(description="Steps recorded in this episode (the image shows the last `window`).")
    segments: int = Field(description="History lines (steps) drawn.")
    width: int = Field(description="Image width in pixels.")
    height: int = Field(description="Image height in pixels.")
    vision_tokens: int = Field(description="Visual tokens a Qwen2.5-VL-style model spends on the image.")
    text_tokens: int = Field(description="Estimated tokens of the same history as text (a lower bound).")
    compression: float = Field(description="Compression factor applied to this image (1 = none).")
    cache_hits: int = Field(description="Segments taken from the worker's segment cache in this render.")
    cache_misses: int = Field(description="Segments drawn in this render.")
    truncated: bool = Field(description="Lines past the preset's max height were cut off.")
    png_base64: str | None = Field(default=None, description="The PNG, base64, when sent inline.")
    url: str | None = Field(default=None, description="Where to GET the PNG, when not inline.")
    compression_valid: bool | None = Field(
        default=None, description="Self-compression on: whether this action's tag use was valid."
    )
    compression_rewards: list[float] | None = Field(
        default=None,
        description=(
            "Self-compression on, on the step that ends the episode: per step row, the episode "
            "reward + the compression term (lam ln c_t if won, else -mu ln c_t). The env reward is untouched."
        ),
    )


SessionCreate.model_rebuild()
GroupCreate.model_rebuild()
StepResponse.model_rebuild()
BatchStepSlot.model_rebuild()
BatchStepResponse.model_rebuild()


# -- the rollout service (envhub serve-rollouts) ---------------------------------------------------
#
# One rollout job is declared once, here: the service takes it as its POST body, the client sends
# it, ``envhub rollout --config job.yaml`` loads it, the trainer's ``rollout:`` section is it (plus
# the trainer's own keys), and the rollout driver (:func:`envhub.rollout.driver.play`) plays it.

#: What a job's ``stream`` may be: a plain Redis key.
STREAM_PATTERN = r"^[A-Za-z0-9_.:-]{1,200}$"

#: Where a resumed job's policy key comes from (keys are never written to the journal).
POLICY_API_KEY_ENV = "ENVHUB_POLICY_API_KEY"

#: Fields of a rollout request that hold credentials (never echoed in an error or a log).
SECRET_FIELDS = frozenset({"api_key", "env_token"})


def redact(value: Any) -> Any:
    """``value`` with every :data:`SECRET_FIELDS` entry of its mappings (at any depth) masked, and
    the user and key of any URL in it."""
    if isinstance(value, dict):
        return {k: "***" if k in SECRET_FIELDS and v is not None else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str) and "://" in value and "@" in value:
        parts = urlsplit(value)
        if "@" in parts.netloc:  # a URL's user and key: the host only
            return parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()
    return value


class ContextConfig(_Request):
    """How prompts are built and model text becomes actions.

    Everything about the env comes from its catalogue entry (``envhub.envs.resolve``): the prompt
    module, the projection rule and the AgentOCR render preset. The ``None`` fields here are
    optional overrides of those; :func:`envhub.rollout.context.resolve_context` applies them.
    """

    family: str | None = Field(
        default=None,
        description="Use the prompt module of this env (a name envhub.envs.resolve takes); default: its own.",
    )
    history_length: int | None = Field(
        default=None, ge=0, description="Steps of history shown in text prompts (template default if null)."
    )
    memory_style: HistoryStyle | None = Field(
        default=None, description="Format of history lines (template default if null)."
    )
    projection: str | None = Field(
        default=None,
        description="Projection rule (envhub.agent.PROJECTIONS or 'module:function'); default: the env's.",
    )
    compression: bool = Field(default=False, description="Parse AgentOCR <compression> tags.")
    agentocr: bool = Field(default=False, description="Show the history as an image (AgentOCR).")
    render_at: Literal["client", "server"] = Field(
        default="client",
        description=(
            "Where AgentOCR images are rendered: in the engine, or in the env server (the session's "
            "history option; pixel-identical)."
        ),
    )
    render_preset: str | None = Field(
        default=None,
        description="Use the AgentOCR look of this env (a name envhub.envs.resolve takes); default: its own.",
    )
    ocr_window: int = Field(default=50, ge=1, description="Steps shown in the AgentOCR image.")
    inline_images: bool = Field(
        default=False, description="Keep the PNG in each Step (else only its hash and token counts)."
    )


class PolicyEndpoint(_Request):
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

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, base_url: str) -> str:
        return url_without_credentials(base_url, "base_url")


def url_without_credentials(url: str, key: str) -> str:
    """``url`` unchanged, or ValueError when it carries a user or key (``http://user:key@host``):
    a policy URL is saved with the job or run that names it, a key never is."""
    if "@" in urlsplit(url).netloc:
        raise ValueError(
            f"{key}: credentials in the URL would be saved with the job; give the server's key as "
            f"api_key (never saved) or in ${POLICY_API_KEY_ENV}, and the URL without them"
        )
    return url


class SamplingRequest(_Request):
    """Sampling parameters (verl-agent's training defaults: T=1, top-p 1)."""

    temperature: float = Field(default=1.0, ge=0, le=100)
    top_p: float = Field(default=1.0, gt=0, le=1)
    top_k: int = Field(default=-1, ge=-1, description="-1: off; else the k most likely tokens.")
    max_tokens: int = Field(default=256, ge=1)
    stop: list[str] = Field(default_factory=list)
    seed: int | None = None


#: The orchestras the rollout driver plays (:mod:`envhub.rollout.orchestra`) and their roles,
#: in the order they act within an env step.
ORCHESTRAS: dict[str, tuple[str, ...]] = {
    "search": ("verifier", "search", "answer"),
    "math": ("solver", "verifier"),
}

#: The math orchestra's solver rounds at most when ``agents.max_rounds`` is unset (the authors'
#: ``max_loop_num`` default in their orchestra; their math run script sets 2).
MATH_MAX_ROUNDS = 3


class OrchestraSpec(_Request):
    """``RolloutRequest.agents``: several role agents play each episode (Dr. MAS, arXiv 2602.08847).

    At every env step the orchestra calls its roles in turn; each call is one
    :class:`~envhub.core.records.Step` row with ``agent_id`` = the role and ``env_step`` = the env
    step, and the team's action goes to the env. The ``search`` orchestra (the paper's, on
    Search-QA): a ``verifier`` routes each step to the ``search`` agent (a query) or the ``answer``
    agent (the final answer). The ``math`` orchestra (the paper's, on Math): a ``solver`` proposes
    a solution and a ``verifier`` approves it or sends it back with its critique, for up to
    ``max_rounds`` solver rounds; the env gets the solver's last answer. Which model plays a role:
    ``policies[role]`` (one endpoint or scripted policy per agent), else the request's ``policy``
    (one shared model, or the caller's backend).
    """

    orchestra: Literal["search", "math"] = Field(
        default="search",
        description="Which orchestra: search (verifier -> search | answer) or math (solver <-> verifier).",
    )
    max_rounds: int | None = Field(
        default=None,
        ge=1,
        le=16,
        description=f"math: the solver's rounds at most (the authors' max_loop_num); null: "
        f"{MATH_MAX_ROUNDS}. The search orchestra has no rounds and refuses it.",
    )
    policies: dict[str, PolicyEndpoint | str] = Field(
        default_factory=dict,
        description="Role -> its own policy (an endpoint or 'scripted:<name>'); a role left out plays "
        "the request's policy.",
    )

    @model_validator(mode="after")
    def _known_roles(self) -> OrchestraSpec:
        roles = ORCHESTRAS[self.orchestra]
        unknown = sorted(set(self.policies) - set(roles))
        if unknown:
            raise ValueError(
                f"agents.policies names {unknown}, not roles of the {self.orchestra} orchestra "
                f"({', '.join(roles)})"
            )
        for role, policy in self.policies.items():
            if isinstance(policy, str) and not policy.startswith("scripted:"):
                raise ValueError(f"agents.policies.{role} must be an endpoint object or 'scripted:<name>'")
        if self.max_rounds is not None and self.orchestra != "math":
            raise ValueError(
                f"agents.max_rounds: the {self.orchestra} orchestra has no rounds (only math's solver "
                "and verifier loop); leave it out"
            )
        return self

    @property
    def roles(self) -> tuple[str, ...]:
        """The orchestra's roles, in the order they act."""
        return ORCHESTRAS[self.orchestra]


class RolloutRequest(_Request):
    """One rollout job: ``POST /v1/rollouts``, ``envhub rollout --config``, the trainer's ``rollout:``.

    The envs (``env_urls`` replicas, or in-process envs of ``env_id`` when there are none), the
    tasks, the group size, the policy, the sampling, the context, the engine's limits
    (``max_concurrent_groups``, the timeouts, the failure rule) and the stream. ``policy`` and
    the tasks may be left out where the caller supplies them (the trainer plays its own model on
    the tasks of each iteration); the service and ``envhub rollout`` need both
    (:func:`envhub.rollout.jobs.check_job`).
    """

    env_urls: list[str] = Field(
        default_factory=list,
        description="Env server replicas (all serving the same env); empty: in-process envs of env_id "
        "(not on the rollout service, which plays on env servers only).",
    )
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
    group_size: int = Field(default=8, ge=1, le=MAX_GROUP_SIZE, description="Members per group (GRPO's n).")
    max_steps: int = Field(default=50, ge=1, le=10_000, description="Steps before an episode is truncated.")
    sampling: SamplingRequest = Field(default_factory=SamplingRequest)
    seed_each_step: bool = Field(
        default=False,
        description="Needs sampling.seed: each group's step s is sampled with a seed drawn from "
        "(sampling.seed, the group's reset seed, s), so a job (and a resumed one) draws the same "
        "episodes again without every step repeating one seed's draws. Off: every generate call "
        "takes sampling.seed as it is.",
    )
    policy: PolicyEndpoint | str | None = Field(
        default=None,
        description=(
            "An OpenAI-compatible endpoint, or 'scripted:<name>': a scripted policy registered on the "
            "server (tests, benchmarks). Null only where the caller plays its own backend."
        ),
    )
    policy_version: int = Field(default=0, ge=0, description="Stamped on every step.")
    context: ContextConfig = Field(default_factory=ContextConfig, description="Prompt building.")
    max_concurrent_groups: int = Field(
        default=8, ge=1, le=MAX_CONCURRENT_GROUPS, description="Groups played at once."
    )
    step_timeout_s: float | None = Field(
        default=300.0, gt=0, description="Deadline of one step (prompt, generate, batch step) of a group."
    )
    episode_timeout_s: float | None = Field(
        default=None, gt=0, description="Deadline of a whole group attempt."
    )
    on_failure: Literal["retry", "drop"] = Field(
        default="retry", description="A group with a failed member: re-run whole (retry) or drop whole."
    )
    max_attempts: int = Field(default=2, ge=1, le=10, description="Attempts per group, the first included.")
    seed: int = Field(default=0, ge=0, description="Group g is reset with seed + g (members share it).")
    trajectory_mode: bool = Field(
        default=False, description="Also build one token sequence per episode (needs policy.tokenizer)."
    )
    agents: OrchestraSpec | None = Field(
        default=None,
        description="Multi-agent episodes (Dr. MAS): the orchestra and which policy plays each role; "
        "null: one agent.",
    )
    stream: str | None = Field(
        default=None,
        pattern=STREAM_PATTERN,
        description="The Redis stream the job publishes to (letters, digits and ._:-); default: the "
        "service's ENVHUB_STREAM. A trainer sends its own.",
    )
    run: str = Field(
        default="",
        pattern=r"^[A-Za-z0-9_.:-]{0,128}$",
        description="A label written on every stream entry's `run` field (a trainer run). Back-pressure "
        "counts the run's consumer group, trainers:<run> (trainers when empty), which is the group "
        "the trainer of that run reads with, taking only its run's entries.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> RolloutRequest:
        if self.task_ids is not None and self.count is not None:
            raise ValueError(
                "give exactly one of task_ids (explicit tasks) or count (the first count of the split)"
            )
        if self.seed_each_step and self.sampling.seed is None:
            raise ValueError("seed_each_step draws each step's seed from sampling.seed: set sampling.seed")
        if isinstance(self.policy, str) and not self.policy.startswith("scripted:"):
            raise ValueError("policy must be an endpoint object or 'scripted:<name>'")
        if self.trajectory_mode and (
            isinstance(self.policy, str) or (self.policy is not None and self.policy.tokenizer is None)
        ):
            raise ValueError(
                "trajectory_mode needs a policy endpoint with a local tokenizer (policy.tokenizer)"
            )
        for url in self.env_urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"env url {url!r} must start with http:// or https://")
        if self.agents is not None:
            if self.trajectory_mode:
                raise ValueError(
                    "agents: each role call is a row of its own; trajectory_mode (one sequence per "
                    "episode) does not apply"
                )
            if self.context.agentocr:
                raise ValueError("agents: the role prompts are text; context.agentocr does not apply")
        return self


RolloutJobStatus = Literal["starting", "running", "interrupted", "done", "failed", "cancelled"]


class RolloutJobCreated(_Response):
    """``POST /v1/rollouts``: the new job."""

    job_id: str = Field(description="Use it in GET/DELETE /v1/rollouts/{job_id}; groups carry it as job_id.")
    status: Literal["running"] = "running"


class RolloutJobProgress(_Response):
    """``GET /v1/rollouts/{job_id}``: where a rollout job stands."""

    job_id: str
    status: RolloutJobStatus = Field(
        description="interrupted: paused by a shutdown or a lost lease; the next start resumes it."
    )
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


class RolloutJobList(_Response):
    """``GET /v1/rollouts``."""

    data: list[RolloutJobProgress]
    count: int

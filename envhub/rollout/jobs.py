"""Rollout jobs: checking a :class:`~envhub.core.wire.RolloutRequest` and what it names.

The request itself is a wire model (:mod:`envhub.core.wire`): the service, the client, the CLI
and the trainer share it. Here: the typed refusals (:class:`JobRejectedError` and its tree),
:func:`check_job` (what a standalone job needs), :func:`load_request` (a job YAML plus dotted
``--set`` overrides), the policy backend a request names, and the checks the service runs
against the env servers and the policy before it accepts a job. :func:`envhub.rollout.driver.play`
plays one.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import ValidationError

from envhub.core.errors import ConfigurationError, EnvhubError, PolicyUnavailableError
from envhub.core.wire import POLICY_API_KEY_ENV, PolicyEndpoint, RolloutRequest, redact
from envhub.policy.base import PolicyBackend
from envhub.rollout.engine import SequenceBuilderLike

__all__ = [
    "CountBeyondSplitError",
    "EnvNotServedError",
    "InvalidJobError",
    "JobRejectedError",
    "ModelNotServedError",
    "NotRegisteredError",
    "UrlNotAllowedError",
    "api_key",
    "build_backend",
    "catalogue_ids",
    "check_envs",
    "check_job",
    "check_policy",
    "load_request",
    "parse_override",
    "persisted_spec",
    "resolve_env_id",
    "restored_request",
    "sequence_builders",
    "set_path",
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
        given = redact(given)  # a refused policy section still holds its key
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


def api_key(policy: PolicyEndpoint) -> str | None:
    """The policy's bearer key: the request's, else ``$ENVHUB_POLICY_API_KEY`` (None if neither)."""
    if policy.api_key is not None:
        return policy.api_key.get_secret_value()
    return os.environ.get(POLICY_API_KEY_ENV) or None


def persisted_spec(request: RolloutRequest) -> dict[str, Any]:
    """``request`` as the journal may keep it: JSON, without secrets (the policies' keys are dropped)."""
    spec = request.model_dump(mode="json")
    endpoints = [spec.get("policy"), *((spec.get("agents") or {}).get("policies") or {}).values()]
    for endpoint in endpoints:
        if isinstance(endpoint, dict):
            endpoint.pop("api_key", None)
    return spec


def restored_request(spec: Mapping[str, Any]) -> RolloutRequest:
    """The request a journal kept (:func:`persisted_spec`), from any earlier version of the service.

    Specs journaled before the context lost its ``max_steps`` carry ``context.max_steps``; the
    engine never read it there (the request's own ``max_steps`` applied), so it is dropped.
    Specs journaled before policy URLs were refused with credentials in them
    (``http://user:key@host``) lose the credentials: the job resumes with the key of
    ``$ENVHUB_POLICY_API_KEY``, as every resumed job does (a key is never journaled).
    """
    data = dict(spec)
    if isinstance(data.get("context"), Mapping):
        data["context"] = {k: v for k, v in data["context"].items() if k != "max_steps"}
    if isinstance(data.get("policy"), Mapping):
        data["policy"] = _without_credentials(data["policy"])
    agents = data.get("agents")
    if isinstance(agents, Mapping) and isinstance(agents.get("policies"), Mapping):
        policies = {
            k: _without_credentials(v) if isinstance(v, Mapping) else v for k, v in agents["policies"].items()
        }
        data["agents"] = {**agents, "policies": policies}
    return RolloutRequest.model_validate(data)


def _without_credentials(endpoint: Mapping[str, Any]) -> dict[str, Any]:
    """A journaled endpoint with the user and key taken out of its ``base_url``."""
    out = dict(endpoint)
    url = out.get("base_url")
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
    except ValueError:  # not a URL at all: validation says so
        parts = None
    if parts is not None and "@" in parts.netloc:
        out["base_url"] = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return out


def check_job(request: RolloutRequest, *, remote: bool = False, flags: bool = False) -> RolloutRequest:
    """``request`` if it can run on its own (the service, ``envhub rollout``), else a refusal.

    A standalone job names its policy (or, with ``agents``, one for every role), its tasks
    (``task_ids`` or ``count``) and its envs: env servers (``env_urls``; the only kind the
    service, ``remote``, plays on), or an in-process ``env_id``. ``flags``: name the CLI flag
    rather than the field.

    Raises:
        InvalidJobError: one of those is missing.
    """
    missing = None
    every_role_has_its_own = request.agents is not None and set(request.agents.policies) == set(
        request.agents.roles
    )
    if request.policy is None and not every_role_has_its_own:
        missing = ("policy", "--policy (or --policy-url and --model)")
    elif request.task_ids is None and request.count is None:
        missing = ("task_ids or count", "--task or --count")
    elif remote and not request.env_urls:
        missing = ("env_urls", "--env-url")
    elif not request.env_urls and request.env_id is None:
        missing = ("env_id or env_urls", "--env or --env-url")
    if missing is not None:
        what = missing[1] if flags else missing[0]
        raise InvalidJobError(f"{what}: required for a rollout job (give it).", field=missing[0])
    return request


def parse_override(text: str) -> tuple[str, Any]:
    """``"loss.kl_coef=0"`` -> ``("loss.kl_coef", 0)``; the value is read as YAML.

    Raises:
        ConfigurationError: ``text`` is not ``KEY=VALUE``.
    """
    import yaml

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigurationError(
            f"Override {text!r} is not KEY=VALUE; write e.g. --set sampling.temperature=0.4.", override=text
        )
    try:
        return key.strip(), yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigurationError(
            f"Override {text!r}: the value is not YAML ({str(exc).splitlines()[0]}).", override=text
        ) from None


def set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``data[a][b][c] = value`` for ``dotted`` ``"a.b.c"`` (sections created as needed).

    Raises:
        ConfigurationError: a part of the path holds a value, not a section.
    """
    node = data
    parts = dotted.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigurationError(f"Cannot set {dotted!r}: {part!r} is not a section.", key=dotted)
        node = child
    node[parts[-1]] = value


def load_request(
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    *,
    fields: Mapping[str, Any] | None = None,
) -> RolloutRequest:
    """A :class:`RolloutRequest` from a job YAML, then ``fields`` (dotted keys), then ``overrides``.

    Args:
        path: a YAML mapping of the request's fields (the body ``POST /v1/rollouts`` takes).
        overrides: ``KEY=VALUE`` strings (``--set``): a dotted key, a YAML value.
        fields: dotted keys set before the overrides (the CLI's shorthand flags).

    Raises:
        ConfigurationError: the file is missing or not a mapping, or an override is malformed.
        InvalidJobError: the result is not a valid request (one line: the first bad field).
    """
    import yaml

    data: dict[str, Any] = {}
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise ConfigurationError(f"Job file {str(file)!r} does not exist.", path=str(file))
        try:
            loaded = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigurationError(
                f"Job file {str(file)!r} is not YAML ({str(exc).splitlines()[0]}).", path=str(file)
            ) from None
        if not isinstance(loaded, dict):
            raise ConfigurationError(f"Job file {str(file)!r} must be a YAML mapping.", path=str(file))
        data = loaded
    for key, value in (fields or {}).items():
        set_path(data, key, value)
    for text in overrides:
        set_path(data, *parse_override(text))
    try:
        return RolloutRequest.model_validate(data)
    except ValidationError as exc:
        raise InvalidJobError.from_validation(exc) from None


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


def sequence_builders(policy: PolicyEndpoint | str | None) -> Callable[[str, str], SequenceBuilderLike]:
    """A factory of trajectory-mode builders over the policy's tokenizer (loaded once)."""
    from envhub.policy.tokenizer import ChatTokenizer
    from envhub.rollout.sequences import SequenceBuilder

    if not isinstance(policy, PolicyEndpoint) or policy.tokenizer is None:
        raise ConfigurationError("trajectory_mode needs a policy endpoint with a local tokenizer.")
    tokenizer = ChatTokenizer(policy.tokenizer)
    return lambda uid, traj_id: SequenceBuilder(tokenizer, uid=uid, traj_id=traj_id)


async def check_policy(policy: PolicyEndpoint | str | None, *, timeout_s: float = 5.0) -> None:
    """Fail fast when an endpoint does not answer ``GET <base_url>/models``.

    Raises:
        PolicyUnavailableError: no answer, or not an OpenAI-compatible one.
    """
    if not isinstance(policy, PolicyEndpoint):
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


def catalogue_ids(name: str) -> set[str]:
    """``name`` and the ids of every catalogue env it designates (an id, a short id, a family).

    A name holding ``:`` (an import path) is never resolved: it stands for itself only.
    """
    if ":" in name:
        return {name}
    from envhub.core.errors import UnknownEnvError
    from envhub.envs.registry import resolve_all

    try:
        return {name, *(spec.id for spec in resolve_all(name))}
    except UnknownEnvError:
        return {name}


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
        if request.env_id is not None and served not in catalogue_ids(request.env_id):
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

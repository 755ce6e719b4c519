"""The policy-backend contract: chat prompts in, sampled completions (token-exact) out.

Every backend (OpenAI-compatible HTTP for vLLM/SGLang, in-process transformers, scripted) is an
async object with the same surface, so the rollout engine and the trainer never know which one
they talk to::

    backend: PolicyBackend = ...
    [completion] = await backend.generate([Prompt(messages=[{"role": "user", "content": "hi"}])],
                                          SamplingParams(temperature=1.0, max_tokens=64))
    completion.token_ids, completion.logprobs, completion.policy_version

Token ids and logprobs are what the model sampled, stored verbatim: ``logprobs[i]`` is the log
probability of ``token_ids[i]`` under the distribution it was sampled from (temperature applied).
A backend that can only return text (an endpoint without token ids) marks ``token_exact=False``.
Failures raise :class:`~envhub.core.errors.PolicyUnavailableError` (retryable: down, paused,
timed out) or :class:`~envhub.core.errors.PolicyError` (terminal: the request is wrong).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Completion", "PolicyBackend", "Prompt", "SamplingParams"]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. Defaults are verl-agent's training rollouts (T=1, top-p 1)."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None


@dataclass(frozen=True)
class Prompt:
    """One generation request.

    ``messages`` are OpenAI-style chat messages; a message's ``content`` may be a list of parts
    with ``{"type": "image_url", ...}`` for the AgentOCR history image. ``token_ids``, when
    given, is the already-rendered prompt (trajectory mode renders it to check the prefix); the
    backend then sends those ids and does not render ``messages`` again. ``metadata`` is for
    backends that are not models (the scripted backend reads the raw observation, ``info`` and
    the member id from it); model backends ignore it.
    """

    messages: list[dict[str, Any]]
    token_ids: list[int] | None = None
    request_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    """What a backend sampled for one :class:`Prompt`."""

    text: str
    prompt_token_ids: list[int] | None
    token_ids: list[int] | None
    logprobs: list[float] | None
    finish_reason: str
    policy_version: int
    token_exact: bool = True
    latency_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class PolicyBackend(Protocol):
    """The async interface every policy backend implements.

    Attributes:
        policy_version: the version stamped on every completion (the trainer bumps it after
            each weight sync; the backend stamps it at request time).
        accepts_images: whether image content parts reach the model (else they are an error).
    """

    policy_version: int
    accepts_images: bool

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        """Sample one completion per prompt, in order. Raises PolicyError/PolicyUnavailableError."""
        ...

    async def aclose(self) -> None:
        """Release connections, models and threads."""
        ...

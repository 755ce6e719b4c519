"""A policy backend without a model: scripted text, for tests and benchmarks.

:class:`ScriptedBackend` implements :class:`~envhub.policy.base.PolicyBackend` over either

* a function ``script(prompt) -> str`` that sees the chat messages and the prompt's
  ``metadata`` (the rollout engine puts ``observation``, ``info``, ``member``,
  ``member_index`` and ``step_idx`` there), or
* a factory of :class:`envhub.core.policy.Policy` objects, one per group member (keyed by
  ``metadata["member"]``), whose ``act(observation, info)`` answer is wrapped as
  ``<think>…</think><action>…</action>`` so the usual projection rules read it.

It samples nothing: completions carry ``token_ids=None`` and ``token_exact=False``. Latency,
hangs and failures can be injected per prompt to exercise the engine's deadlines (a batch call
finishes when its slowest prompt does, as a batched LLM call does).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from envhub.core.errors import ConfigurationError, EnvhubError
from envhub.core.policy import Policy
from envhub.core.registry import load_entry_point
from envhub.policy.base import Completion, PolicyBackend, Prompt, SamplingParams

__all__ = ["ScriptedBackend", "heavy_tailed_latency", "load_scripted", "think_action"]

#: Most members whose Policy objects are kept (oldest forgotten first).
_MAX_MEMBERS = 4096


def think_action(action: str) -> str:
    """Wrap an action the way the think/action projection rule expects it."""
    return f"<think>scripted</think><action>{action}</action>"


def heavy_tailed_latency(
    *, median_s: float, alpha: float = 1.5, cap_s: float | None = None, seed: int = 0
) -> Callable[[Prompt], float]:
    """A Pareto-distributed latency (most calls fast, a few very slow), for straggler benchmarks.

    Args:
        median_s: the median latency in seconds.
        alpha: the tail index (smaller: heavier tail; 1.5 has a finite mean, infinite variance).
        cap_s: the longest latency returned (None: uncapped).
        seed: the generator's seed (the same seed gives the same sequence of latencies).

    Returns:
        A function of a prompt giving seconds to wait.
    """
    rng = np.random.default_rng(seed)
    scale = median_s / 2 ** (1 / alpha)  # Pareto median = scale * 2^(1/alpha)

    def latency(prompt: Prompt) -> float:
        value = float(scale * (1.0 + rng.pareto(alpha)))
        return value if cap_s is None else min(cap_s, value)

    return latency


class ScriptedBackend:
    """A :class:`PolicyBackend` that answers with scripted text.

    Args:
        script: ``script(prompt) -> text``. Give this or ``make_policy``.
        make_policy: ``make_policy(member_index) -> Policy``; one policy per member, reset on
            the member's first prompt.
        wrap: turns a Policy's action into the model-like text (default :func:`think_action`).
        latency: seconds to wait before answering one prompt (None: answer at once).
        hang: prompts for which the call never returns (until cancelled): a stuck endpoint.
        fail: an error to raise for a prompt (or None): a failing endpoint.
        policy_version: the version stamped on completions.

    Raises:
        ConfigurationError: neither or both of ``script`` and ``make_policy`` given.
    """

    accepts_images = True  # images are ignored, never rejected

    def __init__(
        self,
        script: Callable[[Prompt], str] | None = None,
        *,
        make_policy: Callable[[int], Policy] | None = None,
        wrap: Callable[[str], str] = think_action,
        latency: Callable[[Prompt], float] | None = None,
        hang: Callable[[Prompt], bool] | None = None,
        fail: Callable[[Prompt], EnvhubError | None] | None = None,
        policy_version: int = 0,
    ) -> None:
        if (script is None) == (make_policy is None):
            raise ConfigurationError("ScriptedBackend needs exactly one of script= or make_policy=.")
        self._script = script
        self._make_policy = make_policy
        self._wrap = wrap
        self._latency = latency
        self._hang = hang
        self._fail = fail
        self._policies: OrderedDict[str, Policy] = OrderedDict()
        self.policy_version = policy_version
        self.calls = 0

    def _text(self, prompt: Prompt) -> str:
        if self._script is not None:
            return self._script(prompt)
        assert self._make_policy is not None  # checked in __init__
        meta = prompt.metadata
        member = str(meta.get("member", ""))
        observation, info = str(meta.get("observation", "")), dict(meta.get("info") or {})
        policy = self._policies.get(member)
        if policy is None or int(meta.get("step_idx", 0)) == 0:
            policy = self._make_policy(int(meta.get("member_index", 0)))
            policy.reset(observation, info)
            self._policies[member] = policy
            while len(self._policies) > _MAX_MEMBERS:
                self._policies.popitem(last=False)
        return self._wrap(policy.act(observation, info))

    async def _one(self, prompt: Prompt, version: int) -> Completion:
        started = time.perf_counter()
        if self._fail is not None:
            error = self._fail(prompt)
            if error is not None:
                raise error
        if self._hang is not None and self._hang(prompt):
            await asyncio.Event().wait()  # never set: only cancellation ends it
        if self._latency is not None:
            await asyncio.sleep(max(0.0, self._latency(prompt)))
        text = self._text(prompt)
        return Completion(
            text=text,
            prompt_token_ids=None,
            token_ids=None,
            logprobs=None,
            finish_reason="stop",
            policy_version=version,
            token_exact=False,
            latency_s=time.perf_counter() - started,
        )

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        """One scripted completion per prompt, in order (waits for the slowest injected latency)."""
        self.calls += 1
        version = self.policy_version  # stamped at request time, as the model backends do
        if self._latency is None and self._hang is None:
            return [await self._one(p, version) for p in prompts]
        return list(await asyncio.gather(*(self._one(p, version) for p in prompts)))

    async def aclose(self) -> None:
        """Forget the members' policies."""
        self._policies.clear()


def load_scripted(spec: str, **kwargs: Any) -> PolicyBackend:
    """Build a scripted backend from ``"scripted:<module>:<callable>"`` (or ``"<module>:<callable>"``).

    The callable may be a :class:`PolicyBackend` factory (called with ``kwargs``), a Policy
    class (one instance per member, seeded with the member index), or a ``script(prompt) -> str``
    function.

    Raises:
        ConfigurationError: the spec does not name an importable callable.
    """
    path = spec.removeprefix("scripted:")
    try:
        target = load_entry_point(path)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigurationError(
            f"Cannot load scripted policy {spec!r}: {exc}. Use 'scripted:<module>:<callable>' with an "
            "importable module.",
            spec=spec,
        ) from exc
    if isinstance(target, type) and hasattr(target, "act") and hasattr(target, "reset"):
        return ScriptedBackend(make_policy=target, **kwargs)
    if isinstance(target, type) or getattr(target, "scripted_factory", False):
        backend = target(**kwargs)
        if not isinstance(backend, PolicyBackend):
            raise ConfigurationError(f"{spec!r} did not build a PolicyBackend.", spec=spec)
        return backend
    if callable(target):
        return ScriptedBackend(target, **kwargs)
    raise ConfigurationError(f"{spec!r} is not callable.", spec=spec)

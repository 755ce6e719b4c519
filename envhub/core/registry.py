"""Environment specs and their registration with gymnasium.

An :class:`EnvSpec` is data: the id, a ``"module:Class"`` entry point (a string, so listing
or registering envs imports nothing heavy), the family, the splits, the step limit, a
``"module:function"`` that reports whether the env's data is available, and how an agent talks
to the env (projection rule, prompt module, AgentOCR render preset, advantage defaults). The
catalogue of specs lives in :mod:`envhub.envs.catalog` and one resolver,
:func:`envhub.envs.registry.resolve`, finds a spec by any of its names; the layers above read
what they need from the spec. :func:`register_specs` hands the specs to gymnasium's registry,
the one registry envhub uses.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium

__all__ = ["DataStatus", "EnvSpec", "load_entry_point", "register_specs"]


@dataclass(frozen=True)
class DataStatus:
    """Whether an env can run here, and where its data comes from.

    Attributes:
        available: the env can be created and reset now.
        source: where the data is read from (a path, "embedded", "generated").
        how_to_get: what to run or set when ``available`` is False.
    """

    available: bool
    source: str
    how_to_get: str = ""


@dataclass(frozen=True)
class EnvSpec:
    """Everything envhub knows about one registered env, without importing it.

    The last four fields say how an agent talks to the env. Each is a string or plain data,
    read by the layer that uses it, so adding a family edits no other layer:

    * ``projection``: a rule name of :data:`envhub.agent.PROJECTIONS` (``"alfworld"``,
      ``"webshop"``, ``"search"``, ``"tool_call"``, ...) or a ``"module:function"`` taking the
      model's text and returning a :class:`~envhub.agent.Projection` (used by
      :func:`envhub.agent.project`);
    * ``prompt``: the ``"package.module"`` holding the prompt templates and memory style
      (contract: :mod:`envhub.agent.prompt`; used by :func:`envhub.agent.family_template`);
    * ``render_preset``: a ``"module:attribute"`` called as ``f(highlight=bool)`` that returns
      the AgentOCR :class:`~envhub.render.RenderConfig` (used by
      :func:`envhub.render.render_preset`);
    * ``advantage_defaults``: per estimator (``"grpo"``, ``"gigpo"``, ``"hgpo"``), the settings
      of the reference run scripts that differ from the class defaults (used by
      :func:`envhub.algos.default_config`).

    ``None`` (or an empty mapping) means the env has no such metadata.
    """

    id: str
    entry_point: str
    family: str
    description: str
    splits: tuple[str, ...] = ("train", "test")
    max_episode_steps: int | None = None
    data_status: str | None = None  # "module:function" -> DataStatus; None means always available
    demo_policy: str | None = None  # "module:Class", Class(seed) -> Policy: the demo's built-in policy
    baseline_policy: str = "envhub.core.policy:RandomPolicy"  # what the demo compares it with
    demo_episodes: int | None = None  # cap on the demo's episodes for slow envs (browser, engines)
    kwargs: dict[str, Any] = field(default_factory=dict)
    projection: str | None = None
    prompt: str | None = None
    render_preset: str | None = None
    advantage_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # "module:Class" that gymnasium.make_vec builds in its default mode (None: SyncVectorEnv)
    vector_entry_point: str | None = None
    # "module:function", f(task_id, task_score) -> {dimension: label}: how `envhub eval` breaks
    # results down (ALFWorld's task types, WebShop's score buckets, ...). None: no breakdown.
    breakdown: str | None = None
    # "module:function", f(task_id) -> str: the task's expert explanation (AnomSeer's ExpCoT), the
    # text TimerPO's grounded advantage aligns the policy's reasoning with. None: the env has none.
    expert_cot: str | None = None

    def status(self) -> DataStatus:
        """Ask the family whether its data is available (imports only the data module)."""
        if self.data_status is None:
            return DataStatus(available=True, source="built-in")
        try:
            check: Callable[[], DataStatus] = load_entry_point(self.data_status)
            return check()
        except ImportError as exc:
            return DataStatus(
                available=False, source="-", how_to_get=f"missing dependency: {exc.name or exc}"
            )


def load_entry_point(entry_point: str) -> Any:
    """Import ``"package.module:attribute"`` and return the attribute.

    The attribute may be dotted (``"envhub.render:RenderConfig.alfworld"``), as in Python
    packaging's entry points.
    """
    module_name, _, attr = entry_point.partition(":")
    if not attr:
        raise ValueError(f"entry point {entry_point!r} must look like 'package.module:Name'")
    value: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


def register_specs(specs: Iterable[EnvSpec]) -> None:
    """Register each spec with gymnasium (idempotent: ids already present are left alone)."""
    for spec in specs:
        if spec.id in gymnasium.registry:
            continue
        gymnasium.register(
            id=spec.id,
            entry_point=spec.entry_point,
            max_episode_steps=spec.max_episode_steps,
            kwargs=dict(spec.kwargs),
            vector_entry_point=spec.vector_entry_point,
        )

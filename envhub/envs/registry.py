"""``envhub.make`` and ``envhub.list_envs``: the catalogue seen from the user's side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium

from envhub.core.errors import UnknownEnvError
from envhub.core.registry import EnvSpec, load_entry_point, register_specs
from envhub.envs.catalog import CATALOG

__all__ = ["EnvListing", "get_spec", "list_envs", "make", "register_all"]


@dataclass(frozen=True)
class EnvListing:
    """One row of ``envhub list``."""

    id: str
    family: str
    description: str
    splits: tuple[str, ...]
    data_available: bool
    data_source: str
    how_to_get: str


def register_all() -> None:
    """Register every catalogue entry with gymnasium (idempotent)."""
    register_specs(CATALOG)


def get_spec(env_id: str) -> EnvSpec:
    """The catalogue entry for ``env_id`` (with or without the ``envhub/`` namespace).

    Raises:
        UnknownEnvError: no such id.
    """
    for spec in CATALOG:
        if env_id in (spec.id, spec.id.removeprefix("envhub/"), spec.family):
            return spec
    raise UnknownEnvError(env_id, [s.id for s in CATALOG])


def make(env_id: str, **kwargs: Any) -> gymnasium.Env[Any, Any]:
    """Create an env by id, short name, family name or ``"module:Class"`` entry point.

    ``envhub.make("TimeSeries-v0")``, ``envhub.make("envhub/TimeSeries-v0")`` and
    ``envhub.make("timeseries")`` give the same env (wrapped in ``TimeLimit`` with the
    registered step limit; pass ``max_episode_steps=`` to change it). An entry point such
    as ``"my_pkg.envs:CounterEnv"`` builds that class directly, unwrapped.

    Raises:
        UnknownEnvError: the id is neither registered nor an importable entry point.
    """
    register_all()
    if ":" in env_id and "/" not in env_id.partition(":")[0]:
        try:
            env_cls = load_entry_point(env_id)
        except (ImportError, AttributeError) as exc:
            raise UnknownEnvError(env_id, [s.id for s in CATALOG]) from exc
        return env_cls(**kwargs)  # type: ignore[no-any-return]
    if env_id in gymnasium.registry:
        return gymnasium.make(env_id, **kwargs)
    return gymnasium.make(get_spec(env_id).id, **kwargs)


def list_envs() -> list[EnvListing]:
    """Every registered env with its data status (imports each family's data module only)."""
    rows = []
    for spec in CATALOG:
        status = spec.status()
        rows.append(
            EnvListing(
                id=spec.id,
                family=spec.family,
                description=spec.description,
                splits=spec.splits,
                data_available=status.available,
                data_source=status.source,
                how_to_get=status.how_to_get,
            )
        )
    return rows

"""The catalogue seen from the user's side: one name resolver, ``make`` and ``list_envs``.

:func:`resolve` is the one place that turns a name into an :class:`EnvSpec`; everything that
takes an env name (``envhub.make``, ``envhub serve``, ``envhub demo``, the agent's prompt
lookup, the render presets) goes through it, so a family added to the catalogue is known to
all of them at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium

from envhub.core.errors import UnknownEnvError
from envhub.core.registry import EnvSpec, load_entry_point, register_specs
from envhub.envs import catalog

__all__ = ["EnvListing", "list_envs", "make", "register_all", "resolve", "resolve_all", "specs"]


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


def specs() -> tuple[EnvSpec, ...]:
    """Every catalogue entry, in catalogue order."""
    # Read at call time (not bound at import) so the catalogue stays the one source.
    return catalog.CATALOG


def register_all() -> None:
    """Register every catalogue entry with gymnasium (idempotent)."""
    register_specs(specs())


def _is_entry_point(name: str) -> bool:
    # "pkg.mod:Class"; an id never has a colon before its namespace slash.
    return ":" in name and "/" not in name.partition(":")[0]


def _spec_of_entry_point(name: str) -> EnvSpec:
    try:
        env_cls = load_entry_point(name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UnknownEnvError(name, [s.id for s in specs()]) from exc
    doc = (getattr(env_cls, "__doc__", None) or "").strip()
    return EnvSpec(
        id=name,
        entry_point=name,
        family=name.partition(":")[0],
        description=doc.splitlines()[0] if doc else f"envhub environment {name}",
        splits=tuple(getattr(env_cls, "splits", ("train", "test"))),
    )


def resolve_all(name: str) -> tuple[EnvSpec, ...]:
    """Every env ``name`` designates: one for an id, every entry of a family for its name.

    Accepted names: a registered id (``"envhub/WebShop-v0"``), the id without its namespace
    (``"WebShop-v0"``), a family name (``"webshop"``: both WebShop envs) or a
    ``"module:Class"`` entry point (a spec made on the spot, with no agent metadata).

    Raises:
        UnknownEnvError: the name matches no catalogue entry and is no importable entry point.
    """
    if _is_entry_point(name):
        return (_spec_of_entry_point(name),)
    found = tuple(s for s in specs() if name in (s.id, s.id.removeprefix("envhub/"), s.family))
    if not found:
        raise UnknownEnvError(name, [s.id for s in specs()])
    return found


def resolve(name: str) -> EnvSpec:
    """The spec of the env ``name`` designates (a family name gives its first entry).

    Names are those of :func:`resolve_all`: ``"envhub/ALFWorld-v0"``, ``"ALFWorld-v0"``,
    ``"alfworld"`` or ``"my_pkg.envs:CounterEnv"``.

    Raises:
        UnknownEnvError: the name matches no catalogue entry and is no importable entry point.
    """
    return resolve_all(name)[0]


def make(env_id: str, **kwargs: Any) -> gymnasium.Env[Any, Any]:
    """Create an env by id, short name, family name or ``"module:Class"`` entry point.

    ``envhub.make("TimeSeries-v0")``, ``envhub.make("envhub/TimeSeries-v0")`` and
    ``envhub.make("timeseries")`` give the same env (wrapped in ``TimeLimit`` with the
    registered step limit; pass ``max_episode_steps=`` to change it). An entry point such
    as ``"my_pkg.envs:CounterEnv"`` builds that class directly, unwrapped. Ids that other
    packages registered with gymnasium are made by gymnasium.

    Raises:
        UnknownEnvError: the id is neither registered nor an importable entry point.
    """
    register_all()
    if not _is_entry_point(env_id) and env_id in gymnasium.registry:
        return gymnasium.make(env_id, **kwargs)
    spec = resolve(env_id)
    if spec.id in gymnasium.registry:
        return gymnasium.make(spec.id, **kwargs)
    return load_entry_point(spec.entry_point)(**kwargs)  # type: ignore[no-any-return]


def list_envs() -> list[EnvListing]:
    """Every registered env with its data status (imports each family's data module only)."""
    rows = []
    for spec in specs():
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

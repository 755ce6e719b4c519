"""The catalogue seen from the user's side: one name resolver, ``make`` and ``list_envs``.

:func:`resolve` is the one place that turns a name into an :class:`EnvSpec`; everything that
takes an env name (``envhub.make``, ``envhub serve``, ``envhub demo``, the agent's prompt
lookup, the render presets) goes through it, so a family added to the catalogue is known to
all of them at once.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import gymnasium

from envhub.core.errors import ConfigurationError, UnknownEnvError
from envhub.core.registry import EnvSpec, load_entry_point, register_specs
from envhub.envs import catalog

__all__ = [
    "ENTRY_POINT_GROUP",
    "EnvListing",
    "PluginEnv",
    "list_envs",
    "make",
    "package_of",
    "plugin_envs",
    "register_all",
    "reload_plugins",
    "resolve",
    "resolve_all",
    "specs",
]

#: The entry-point group third-party env packages register in (pyproject:
#: ``[project.entry-points."envhub.envs"] name = "package.spec:SPECS"``). The value names an
#: :class:`EnvSpec`, a sequence of them, or a function returning either; it should import
#: nothing but ``envhub.core.registry`` (the env class is imported when the env is made).
ENTRY_POINT_GROUP = "envhub.envs"


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
    package: str = "envhub-rl"
    version: str = ""


@dataclass(frozen=True)
class PluginEnv:
    """An env an installed package registered through the ``envhub.envs`` entry-point group."""

    spec: EnvSpec
    package: str
    version: str
    entry_point: str  # "name = value" as the package declared it


_plugins: tuple[PluginEnv, ...] | None = None


def _as_specs(value: Any) -> list[EnvSpec]:
    if callable(value) and not isinstance(value, EnvSpec):
        value = value()
    found = [value] if isinstance(value, EnvSpec) else list(value) if isinstance(value, Iterable) else []
    if not found or not all(isinstance(v, EnvSpec) for v in found):
        raise TypeError(
            "the entry point must name an EnvSpec, a sequence of EnvSpecs, or a function returning one"
        )
    return found


def _load_plugins() -> tuple[PluginEnv, ...]:
    found: list[PluginEnv] = []
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        dist = ep.dist
        package = dist.metadata["Name"] if dist is not None else "?"
        version = dist.version if dist is not None else "?"
        try:
            loaded = _as_specs(ep.load())
        except Exception as exc:  # a broken package must not take envhub down with it
            warnings.warn(
                f"envhub: the env package {package} {version} failed to load its entry point "
                f"'{ep.name} = {ep.value}' ({type(exc).__name__}: {exc}); its envs are skipped. "
                f"Fix or uninstall it (pip uninstall {package}).",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        found += [PluginEnv(spec, package, version, f"{ep.name} = {ep.value}") for spec in loaded]
    _check_clashes(found)
    return tuple(found)


def _check_clashes(plugins: list[PluginEnv]) -> None:
    owner: dict[str, str] = {s.id: f"envhub-rl {_own_version()} (built in)" for s in catalog.CATALOG}
    for plugin in plugins:
        here = f"{plugin.package} {plugin.version} ({plugin.entry_point})"
        other = owner.get(plugin.spec.id)
        if other is not None:
            raise ConfigurationError(
                f"Env id {plugin.spec.id!r} is registered twice: by {other} and by {here}. Env ids must "
                f"be unique: rename the id in one package's EnvSpec, or uninstall one (pip uninstall "
                f"{plugin.package}).",
                env_id=plugin.spec.id,
            )
        owner[plugin.spec.id] = here


def _own_version() -> str:
    try:
        return metadata.version("envhub-rl")
    except metadata.PackageNotFoundError:
        return "dev"


def plugin_envs() -> tuple[PluginEnv, ...]:
    """The envs installed packages registered (loaded once, on first use).

    Raises:
        ConfigurationError: two packages (or a package and envhub) register the same env id.
    """
    global _plugins
    if _plugins is None:
        _plugins = _load_plugins()
    return _plugins


def reload_plugins() -> tuple[PluginEnv, ...]:
    """Read the ``envhub.envs`` entry points again (after installing a package in this process)."""
    global _plugins
    _plugins = None
    found = plugin_envs()
    register_specs(p.spec for p in found)
    return found


def package_of(spec: EnvSpec) -> tuple[str, str]:
    """The distribution that provides ``spec`` and its version."""
    for plugin in plugin_envs():
        if plugin.spec is spec:
            return plugin.package, plugin.version
    return "envhub-rl", _own_version()


def specs() -> tuple[EnvSpec, ...]:
    """Every catalogue entry, in catalogue order, then the envs of installed packages."""
    # Read at call time (not bound at import) so the catalogue stays the one source.
    return (*catalog.CATALOG, *(p.spec for p in plugin_envs()))


def register_all() -> None:
    """Register every catalogue entry and installed package's env with gymnasium (idempotent).

    Two packages claiming one env id do not break ``import envhub``: the built-in catalogue is
    registered, and listing, resolving or making an env raises the clash (:func:`plugin_envs`).
    """
    try:
        found = specs()
    except ConfigurationError:
        found = catalog.CATALOG
    register_specs(found)


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
        try:
            return gymnasium.make(env_id, **kwargs)
        except ModuleNotFoundError as exc:
            _raise_if_own_module_missing(env_id, exc)
            raise
    spec = resolve(env_id)
    try:
        if spec.id in gymnasium.registry:
            return gymnasium.make(spec.id, **kwargs)
        return load_entry_point(spec.entry_point)(**kwargs)  # type: ignore[no-any-return]
    except ModuleNotFoundError as exc:
        _raise_if_own_module_missing(spec.id, exc)
        raise


def _raise_if_own_module_missing(env_id: str, exc: ModuleNotFoundError) -> None:
    """A ConfigurationError naming the package when the env's own entry-point module is missing.

    (A dependency the env imports that is missing is the env's own error to word; it passes.)
    """
    spec = next((s for s in specs() if s.id == env_id), None)
    if spec is None or not exc.name:
        return
    module = spec.entry_point.partition(":")[0]
    if module == exc.name or module.startswith(exc.name + "."):
        package, version = package_of(spec)
        raise ConfigurationError(
            f"Env {spec.id}'s entry point {spec.entry_point!r} does not import ({exc}); its package "
            f"{package} {version} is broken: reinstall it, or fix the entry_point of its EnvSpec.",
            env=spec.id,
        ) from None


def list_envs() -> list[EnvListing]:
    """Every registered env with its data status and package (imports each family's data module only)."""
    rows = []
    for spec in specs():
        status = spec.status()
        package, version = package_of(spec)
        rows.append(
            EnvListing(
                id=spec.id,
                family=spec.family,
                description=spec.description,
                splits=spec.splits,
                data_available=status.available,
                data_source=status.source,
                how_to_get=status.how_to_get,
                package=package,
                version=version,
            )
        )
    return rows

"""Loading tau-bench's data: databases, tasks with gold actions, and policy documents.

The data is tau-bench's (MIT), as shipped in the PyPI package ``tau-trait`` 0.1.1. envhub
reads its files by path and never imports the package (importing it builds an OpenAI
client). Any directory with the same layout works; point ``TAU_DATA`` (or ``data_dir=``)
at it, e.g. a tau-bench checkout's ``tau_bench/envs`` or a directory written by
:func:`envhub.envs.tau.fixtures.write_fixture_data`::

    <root>/retail/data/{orders,products,users}.json
    <root>/retail/{tasks_test.py, tasks_train.py, wiki.md}
    <root>/airline/data/{flights,reservations,users}.json
    <root>/airline/{tasks_test.py, wiki.md}

Task files are Python modules holding one list of ``Task(...)`` calls; they are parsed with
:mod:`ast` and evaluated by a tiny literal evaluator, so nothing in them is executed.
Parsed domains are cached once per process (:func:`load_domain`); episodes never mutate
them (see :class:`envhub.envs.tau.db.TauDB`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from envhub.core.errors import ConfigurationError, DataNotFoundError
from envhub.core.registry import DataStatus

__all__ = [
    "DOMAINS",
    "DOMAIN_SPLITS",
    "DOMAIN_TABLES",
    "Domain",
    "GoldAction",
    "TauData",
    "TauSettings",
    "TauTask",
    "data_status",
    "load_domain",
    "parse_task_file",
    "resolve_data_root",
]

#: The domains envhub serves.
DOMAINS = ("retail", "airline")
#: The task splits of each domain, in the order envhub lists them.
DOMAIN_SPLITS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {"retail": ("test", "train"), "airline": ("test",)}
)
#: The database tables (one JSON file each) of each domain.
DOMAIN_TABLES: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {"retail": ("orders", "products", "users"), "airline": ("flights", "reservations", "users")}
)

_HOW_TO_GET = "pip install 'envhub-rl[tau]' (installs the tau-trait data package), or set TAU_DATA."


class TauSettings(BaseSettings):
    """Where the tau-bench data lives. Reads ``TAU_DATA`` from the environment."""

    model_config = SettingsConfigDict(env_prefix="TAU_", extra="ignore", env_ignore_empty=True)

    data: Path | None = Field(default=None, description="Directory laid out like tau_trait/envs.")


@dataclass(frozen=True)
class GoldAction:
    """One gold action of a task: a tool name and its keyword arguments."""

    name: str
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class TauTask:
    """One tau-bench task.

    Attributes:
        task_id: ``"<split>-<index>"``, e.g. ``"test-0"``.
        user_id: the simulated customer's user id.
        instruction: what the simulated user wants (the user simulator's script).
        actions: the gold actions; replaying them gives the gold database.
        outputs: strings the agent must say to the user (tau-bench's required outputs).
    """

    task_id: str
    user_id: str
    instruction: str
    actions: tuple[GoldAction, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Domain:
    """One parsed domain: its database, policy document and tasks (read-only by convention).

    Attributes:
        name: ``"retail"`` or ``"airline"``.
        root: the directory it was read from.
        tables: table name -> {record key -> record}, tau-bench's JSON as loaded.
        policy: the domain's policy document (``wiki.md``), the agent's system prompt.
        tasks: split -> tasks in file order.
    """

    name: str
    root: Path
    tables: MappingProxyType[str, dict[str, Any]]
    policy: str
    tasks: MappingProxyType[str, tuple[TauTask, ...]]

    def task(self, task_id: str) -> TauTask | None:
        """The task with id ``"<split>-<index>"``, or ``None`` if there is none."""
        split, _, index = task_id.partition("-")
        tasks = self.tasks.get(split)
        if tasks is None or not index.isdigit() or int(index) >= len(tasks):
            return None
        return tasks[int(index)]


@dataclass(frozen=True)
class TauData:
    """Where the data was found: the root directory and a human-readable source."""

    root: Path
    source: str


def resolve_data_root(data_dir: str | Path | None = None) -> TauData:
    """Find the data: ``data_dir``, else ``TAU_DATA``, else the installed ``tau-trait`` package.

    Raises:
        DataNotFoundError: none of them holds the data.
    """
    if data_dir is None:
        data_dir = TauSettings().data
    if data_dir is not None:
        root = Path(data_dir).expanduser()
        if not (root / "retail").is_dir() and not (root / "airline").is_dir():
            raise DataNotFoundError(
                "tau-bench data (retail/ and airline/ folders)",
                path=root,
                env_var="TAU_DATA",
                how_to_get=_HOW_TO_GET,
            )
        return TauData(root=root, source=str(root))
    # find_spec locates the package without importing it (its __init__ builds an OpenAI client).
    locations = _package_locations("tau_trait")
    if not locations:
        raise DataNotFoundError("tau-bench data", path=None, env_var="TAU_DATA", how_to_get=_HOW_TO_GET)
    root = Path(locations[0]) / "envs"
    return TauData(root=root, source=f"tau-trait package ({root})")


def _package_locations(name: str) -> list[str]:
    """Where an installed package lives, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ValueError, ImportError):  # already in sys.modules without a spec (e.g. a stub)
        module = sys.modules.get(name)
        return list(getattr(module, "__path__", []) or [])
    if spec is None or not spec.submodule_search_locations:
        return []
    return list(spec.submodule_search_locations)


@functools.lru_cache(maxsize=8)
def _load_domain_cached(name: str, root: Path) -> Domain:
    folder = root / name
    tables = {}
    for table in DOMAIN_TABLES[name]:
        path = folder / "data" / f"{table}.json"
        if not path.is_file():
            raise DataNotFoundError(
                f"tau-bench {name} table {table!r}", path=path, env_var="TAU_DATA", how_to_get=_HOW_TO_GET
            )
        tables[table] = json.loads(path.read_text(encoding="utf-8"))
    wiki = folder / "wiki.md"
    policy = wiki.read_text(encoding="utf-8") if wiki.is_file() else ""
    tasks = {}
    for split in DOMAIN_SPLITS[name]:
        path = folder / f"tasks_{split}.py"
        if path.is_file():
            tasks[split] = parse_task_file(path, split)
        elif split == "test" and (folder / "tasks.py").is_file():
            tasks[split] = parse_task_file(folder / "tasks.py", split)  # tau-bench's older airline name
        else:
            tasks[split] = ()
    return Domain(
        name=name, root=root, tables=MappingProxyType(tables), policy=policy, tasks=MappingProxyType(tasks)
    )


def load_domain(name: str, data_dir: str | Path | None = None) -> Domain:
    """Parse a domain once per process (later calls with the same root return the same object).

    Args:
        name: ``"retail"`` or ``"airline"``.
        data_dir: the data root; ``None`` means ``TAU_DATA`` or the tau-trait package.

    Raises:
        ConfigurationError: unknown domain name.
        DataNotFoundError: the data is missing.
    """
    if name not in DOMAINS:
        raise ConfigurationError(
            f"Unknown tau-bench domain {name!r}; use one of {list(DOMAINS)}.", domain=name
        )
    return _load_domain_cached(name, resolve_data_root(data_dir).root.resolve())


def parse_task_file(path: Path, split: str) -> tuple[TauTask, ...]:
    """Read a tau-bench ``tasks_*.py`` file without executing it.

    Raises:
        DataNotFoundError: the file holds no list of ``Task(...)`` calls.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            raw = [_literal(elt) for elt in node.value.elts]
            if raw and all(isinstance(t, dict) and "instruction" in t for t in raw):
                return tuple(_to_task(t, f"{split}-{i}") for i, t in enumerate(raw))
    raise DataNotFoundError(
        f"a list of Task(...) in {path.name}", path=path, env_var="TAU_DATA", how_to_get=_HOW_TO_GET
    )


def _to_task(raw: dict[str, Any], task_id: str) -> TauTask:
    return TauTask(
        task_id=task_id,
        user_id=str(raw.get("user_id", "")),
        instruction=str(raw.get("instruction", "")),
        actions=tuple(
            GoldAction(name=a["name"], kwargs=dict(a.get("kwargs", {}))) for a in raw.get("actions", [])
        ),
        outputs=tuple(str(o) for o in raw.get("outputs", [])),
    )


def _literal(node: ast.AST) -> Any:
    """Evaluate the literal subset task files use: constants, containers, Task/Action calls, str.join."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("Task", "Action"):
            return {kw.arg: _literal(kw.value) for kw in node.keywords if kw.arg is not None}
        if isinstance(func, ast.Attribute) and func.attr == "join" and isinstance(func.value, ast.Constant):
            return str(func.value.value).join(str(s) for s in _literal(node.args[0]))
        raise ValueError(f"unsupported call in task file at line {node.lineno}: {ast.unparse(node)[:80]}")
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _literal(k): _literal(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None
        }
    return ast.literal_eval(node)


def data_status() -> DataStatus:
    """Whether the tau-bench data can be found (used by ``envhub list``); parses nothing."""
    try:
        found = resolve_data_root()
    except DataNotFoundError:
        return DataStatus(available=False, source="-", how_to_get=_HOW_TO_GET)
    return DataStatus(available=True, source=found.source)

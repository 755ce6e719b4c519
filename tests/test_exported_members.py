"""Every envhub module's ``__all__`` and its real public names agree, in both directions.

For each module (package ``__init__`` or plain module) that declares ``__all__``:

* everything in ``__all__`` exists on the module, once;
* every public name the module binds at top level (``def``, ``class``, assignment) is in
  ``__all__``, and so is every public name a package ``__init__`` re-exports from envhub.
  Names imported from elsewhere (``typing.Any``, ``numpy as np``) and submodules are not
  public members, so they are ignored.

Modules without ``__all__`` (scripts such as ``envhub.cli``) and private modules
(``envhub.client._client``, checked through the package that re-exports them) are left out.
The names are read from the source with :mod:`ast`, so a helper that is used by another
module but was never meant to be API shows up here: rename it with ``_`` or export it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import types
from pathlib import Path

import pytest

import envhub
from envhub.core.errors import DependencyMissingError


def _source(name: str) -> tuple[str, bool]:
    """The module's source text and whether it is a package ``__init__``."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, name
    return Path(spec.origin).read_text(encoding="utf-8"), spec.submodule_search_locations is not None


def _declares_all(source: str) -> bool:
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any("__all__" in _bound_names(t) for t in targets):
            return True
    return False


def _modules() -> list[str]:
    """Every public envhub module that declares ``__all__`` (scripts such as ``envhub.cli`` do not)."""
    names = ["envhub"]
    for info in pkgutil.walk_packages(envhub.__path__, "envhub."):
        parts = info.name.split(".")[1:]
        if "data" in parts or any(part.startswith("_") for part in parts):
            continue
        names.append(info.name)
    return [name for name in names if _declares_all(_source(name)[0])]


def _top_level_statements(tree: ast.Module) -> list[ast.stmt]:
    """Module-level statements, looking inside ``if``/``try`` blocks (version and import guards)."""
    out: list[ast.stmt] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.If):
            if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                continue  # typing-only imports are not members at run time
            pending[:0] = [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            pending[:0] = [*node.body, *node.orelse, *node.finalbody]
            for handler in node.handlers:
                pending[:0] = handler.body
        else:
            out.append(node)
    return out


def _bound_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for element in target.elts for n in _bound_names(element)]
    return []


def _declared_public_names(source: str, is_package: bool) -> set[str]:
    """Public names the module defines, plus (for a package) what it imports from envhub."""
    names: set[str] = set()
    for node in _top_level_statements(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(n for target in node.targets for n in _bound_names(target))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            names.update(_bound_names(node.target))
        elif is_package and isinstance(node, ast.ImportFrom):
            internal = node.level > 0 or (node.module or "").split(".")[0] == "envhub"
            if internal:
                names.update(alias.asname or alias.name for alias in node.names)
    names.discard("__all__")
    return {n for n in names if not n.startswith("_")}


def test_the_check_covers_the_public_packages() -> None:
    modules = set(_modules())
    assert {"envhub", "envhub.core", "envhub.server", "envhub.client", "envhub.envs.tau.env"} <= modules


def _literal_all(source: str) -> list[str]:
    """``__all__`` read from the source, for a module whose extra lives in its own venv."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any("__all__" in _bound_names(t) for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("__all__ is not a literal list")


@pytest.mark.parametrize("name", _modules())
def test_all_matches_public_members(name: str) -> None:
    source, is_package = _source(name)
    declared = _declared_public_names(source, is_package)
    try:
        module = importlib.import_module(name)
    except DependencyMissingError:
        # The verl adapter's extra pins its own torch and lives in .venv-verl (its tests import
        # the module there); here the same check runs on the source alone.
        exported = _literal_all(source)
        assert len(exported) == len(set(exported)), f"{name}.__all__ lists a name twice"
        missing = sorted(set(exported) - declared)
        assert not missing, f"{name}.__all__ names {missing}, which it does not define"
        unexported = sorted(declared - set(exported))
        assert not unexported, f"{name} defines public names {unexported} that are not in __all__"
        return
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{name}.__all__ lists a name twice"
    missing = [member for member in exported if not hasattr(module, member)]
    assert not missing, f"{name}.__all__ names {missing}, which do not exist"
    submodules = {member for member in declared if _is_module(module, member)}
    unexported = sorted(declared - set(exported) - submodules)
    assert not unexported, (
        f"{name} defines public names {unexported} that are not in __all__: export them or prefix them with _"
    )


def _is_module(module: object, member: str) -> bool:
    return isinstance(getattr(module, member, None), types.ModuleType)

"""Skips for a missing dependency, made so they cannot pass quietly.

A test that needs an optional extra, a system program or downloaded data asks for it with
these helpers instead of calling ``pytest.skip`` itself. Every reason they give starts with
:data:`MISSING` and, for an extra, names it as ``envhub-rl[<extra>]``. ``tests/conftest.py``
then turns such a skip into a failure:

* under ``CI=true`` always: ``make test`` installs every extra, Chromium and the test data,
  so a missing one there is a broken setup, not a reason to pass;
* anywhere, when the extra the reason names is installed: the skip then hides a real error
  (an import that fails for another reason, a model that does not load).

Future integrations get both checks by skipping through :func:`require_module` or
:func:`requires_modules` with their extra's name.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
import shutil
import tomllib
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest
from packaging.requirements import Requirement

__all__ = [
    "MISSING",
    "defined_extras",
    "extra_installed",
    "extras_named_in",
    "missing",
    "require",
    "require_binary",
    "require_data",
    "require_module",
    "requires_modules",
]

#: Every reason these helpers give starts with this.
MISSING = "missing dependency: "

_PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_EXTRA = re.compile(r"envhub-rl\[([A-Za-z0-9_,-]+)\]")


@cache
def _extras() -> dict[str, list[str]]:
    project = tomllib.loads(_PYPROJECT.read_text(encoding="utf-8"))["project"]
    return dict(project.get("optional-dependencies", {}))


def defined_extras() -> frozenset[str]:
    """The extras envhub's pyproject.toml defines."""
    return frozenset(_extras())


def extra_installed(extra: str) -> bool:
    """Whether every distribution ``envhub-rl[extra]`` asks for is installed (nested extras too).

    Raises:
        KeyError: pyproject.toml has no such extra (a typo in a test's reason).
    """
    for line in _extras()[extra]:
        requirement = Requirement(line)
        if requirement.name == "envhub-rl":
            if not all(extra_installed(inner) for inner in requirement.extras):
                return False
            continue
        try:
            importlib.metadata.distribution(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            return False
    return True


def extras_named_in(reason: str) -> list[str]:
    """The extras a skip reason names as ``envhub-rl[a]`` or ``envhub-rl[a,b]``."""
    return [name for group in _EXTRA.findall(reason) for name in group.split(",")]


def _reason(what: str, extra: str | None, how: str | None = None) -> str:
    fix = how or (f"pip install 'envhub-rl[{extra}]'" if extra else "see the README")
    return f"{MISSING}{what}; {fix}"


def missing(what: str, *, extra: str | None = None, how: str | None = None) -> NoReturn:
    """Skip (loudly, see the module docstring) because ``what`` is missing; arguments as :func:`require`."""
    pytest.skip(_reason(what, extra, how))


def require(condition: bool, what: str, *, extra: str | None = None, how: str | None = None) -> None:
    """Skip (loudly, see the module docstring) unless ``condition`` holds.

    Args:
        condition: whether the dependency is there.
        what: what is missing, e.g. ``"the spaCy English model"``.
        extra: the envhub extra that provides it, if any.
        how: how to get it, when it is not ``pip install 'envhub-rl[extra]'``.
    """
    if not condition:
        missing(what, extra=extra, how=how)


def require_module(module: str, *, extra: str) -> ModuleType:
    """Import ``module``, or skip naming ``envhub-rl[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(_reason(f"{module} ({exc})", extra))


def requires_modules(*modules: str, extra: str) -> pytest.MarkDecorator:
    """A ``skipif`` mark for tests (or a whole module) that need ``modules`` from ``envhub-rl[extra]``."""
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(absent), reason=_reason(f"{', '.join(absent)} not importable", extra))


def require_binary(name: str, *, how: str) -> str:
    """The path of program ``name`` on PATH, or skip saying ``how`` to install it."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(_reason(f"{name} is not on PATH", None, how))
    return path


def require_data(spec: Any) -> None:
    """Skip unless the catalogue entry ``spec`` has its data here (``envhub list`` says how to get it)."""
    status = spec.status()
    if not status.available:
        pytest.skip(_reason(f"{spec.id}'s data", None, status.how_to_get))

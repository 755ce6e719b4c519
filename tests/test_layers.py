"""The seams between packages: which package may import which.

``envhub.algos`` takes settings as data (an env's spec), so it never imports the env
catalogue; the client and the server meet at the wire models in ``envhub.core.wire``, so
the client never imports the server.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "envhub"


def _imports(package: str) -> dict[str, set[str]]:
    """Every module a package's files import (at any depth, lazily or not), by file."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        found[str(path.relative_to(ROOT.parent))] = names
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("algos", "envhub.envs"),
        ("client", "envhub.server"),
        ("core", "envhub.server"),
        ("view", "envhub.integrations"),
        ("view", "envhub.cli"),
    ],
)
def test_package_does_not_import_across_its_seam(package: str, forbidden: str) -> None:
    offenders = {
        path: sorted(n for n in names if n == forbidden or n.startswith(forbidden + "."))
        for path, names in _imports(package).items()
    }
    assert not {path: names for path, names in offenders.items() if names}


def test_core_imports_nothing_above_it() -> None:
    """``envhub.core`` is the bottom layer: the contract, errors, records and wire models."""
    offenders = {
        path: sorted(n for n in names if n.startswith("envhub.") and not n.startswith("envhub.core"))
        for path, names in _imports("core").items()
    }
    assert not {path: names for path, names in offenders.items() if names}


def test_the_wire_history_styles_are_the_memory_styles() -> None:
    from typing import get_args

    from envhub.agent.memory import MEMORY_STYLES
    from envhub.core.wire import HistoryStyle

    assert set(get_args(HistoryStyle)) == set(MEMORY_STYLES)


def test_only_the_cli_imports_the_viewer() -> None:
    """``envhub.view`` sits at the top of the ladder, below integrations and the CLI only."""
    packages = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file())
    offenders = {
        path: sorted(n for n in names if n == "envhub.view" or n.startswith("envhub.view."))
        for package in packages
        if package != "view"
        for path, names in _imports(package).items()
    }
    assert not {path: names for path, names in offenders.items() if names}

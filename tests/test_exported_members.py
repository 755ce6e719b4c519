"""Each package's ``__all__`` lists exactly the public names it defines or re-exports."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import envhub


def _packages() -> list[str]:
    names = ["envhub"]
    for info in pkgutil.walk_packages(envhub.__path__, "envhub."):
        if info.ispkg and ".data" not in info.name:
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _packages())
def test_all_matches_public_members(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional extra is missing: nothing to check
        pytest.skip(f"{name} needs an optional dependency: {exc}")
    exported = getattr(module, "__all__", None)
    if exported is None:
        public = [n for n in vars(module) if not n.startswith("_")]
        assert not [n for n in public if not isinstance(getattr(module, n), type(importlib))], (
            f"{name} defines public names but no __all__"
        )
        return
    for member in exported:
        assert hasattr(module, member), f"{name}.__all__ names {member!r}, which does not exist"

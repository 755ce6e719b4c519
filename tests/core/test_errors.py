"""Errors carry a stable code, structured detail and a message that says how to fix it."""

from __future__ import annotations

import inspect

import envhub.core.errors as errors
from envhub.core.errors import (
    DataNotFoundError,
    DependencyMissingError,
    EnvhubError,
    UnknownEnvError,
    UnknownTaskError,
)


def test_every_error_derives_from_the_root_and_each_leaf_has_a_unique_code() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, Exception)]
    assert all(issubclass(c, EnvhubError) for c in classes)
    leaves = [c for c in classes if not c.__subclasses__()]
    codes = [c.code for c in leaves]
    assert len(codes) == len(set(codes))


def test_data_not_found_names_the_variable_and_the_fix() -> None:
    err = DataNotFoundError(
        "ALFWorld games", path="/nowhere", env_var="ALFWORLD_DATA", how_to_get="alfworld-download"
    )
    assert "ALFWORLD_DATA" in str(err) and "alfworld-download" in str(err) and "/nowhere" in str(err)
    assert err.to_dict() == {
        "code": "DATA_NOT_FOUND",
        "message": str(err),
        "detail": {"path": "/nowhere", "env_var": "ALFWORLD_DATA", "how_to_get": "alfworld-download"},
    }


def test_unknown_task_lists_examples_and_how_to_list() -> None:
    err = UnknownTaskError("x", env="E", splits=["train"], examples=["train-0", "train-1"])
    assert "'train-0'" in str(err) and "task_ids" in str(err)
    assert err.status_code == 404


def test_unknown_env_lists_known_ids() -> None:
    assert "envhub/B-v0" in str(UnknownEnvError("nope", ["envhub/B-v0"]))


def test_dependency_missing_names_the_extra() -> None:
    assert "pip install 'envhub-rl[alfworld]'" in str(DependencyMissingError("alfworld", extra="alfworld"))

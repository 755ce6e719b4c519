"""The envhub error tree.

Every error envhub raises on purpose derives from :class:`EnvhubError`. Each class carries a
stable machine-readable ``code`` (the server puts it in ``{code, message, detail}`` and the
client maps it back to the same class) and structured fields, and builds a message that says
how to fix the problem::

    EnvhubError
    ├── ConfigurationError          bad arguments or settings            (400 INVALID_CONFIG)
    │   ├── UnknownEnvError         no env registered under that id      (404 UNKNOWN_ENV)
    │   └── UnknownTaskError        task id not in the env's task list   (404 UNKNOWN_TASK)
    ├── DataNotFoundError           a dataset path is missing            (503 DATA_NOT_FOUND)
    ├── DependencyMissingError      an optional extra is not installed   (503 DEPENDENCY_MISSING)
    └── ResetNeededError            step() before reset()                (409 RESET_NEEDED)

Later layers (server, client, rollout) add their own subclasses under the same root.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

__all__ = [
    "ConfigurationError",
    "DataNotFoundError",
    "DependencyMissingError",
    "EnvhubError",
    "ResetNeededError",
    "UnknownEnvError",
    "UnknownTaskError",
]


class EnvhubError(Exception):
    """Root of every error envhub raises on purpose.

    Attributes:
        code: stable, machine-readable identifier (upper snake case).
        status_code: the HTTP status the server answers with.
        detail: structured fields, JSON-serialisable.
    """

    code: ClassVar[str] = "ENVHUB_ERROR"
    status_code: ClassVar[int] = 500

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.message = message
        self.detail: dict[str, Any] = detail

    def to_dict(self) -> dict[str, Any]:
        """The error as the wire form ``{code, message, detail}``."""
        return {"code": self.code, "message": self.message, "detail": self.detail}


class ConfigurationError(EnvhubError):
    """An argument or setting has a value envhub cannot use."""

    code = "INVALID_CONFIG"
    status_code = 400


class UnknownEnvError(ConfigurationError):
    """No environment is registered under the requested id."""

    code = "UNKNOWN_ENV"
    status_code = 404

    def __init__(self, env_id: str, known: Sequence[str]) -> None:
        super().__init__(
            f"No envhub environment is registered as {env_id!r}. "
            f"Known ids: {', '.join(sorted(known))}. Run `envhub list` to see them with their data status.",
            env_id=env_id,
            known=sorted(known),
        )
        self.env_id = env_id


class UnknownTaskError(ConfigurationError):
    """The requested task id is not one of the env's tasks."""

    code = "UNKNOWN_TASK"
    status_code = 404

    def __init__(self, task_id: object, *, env: str, splits: Sequence[str], examples: Sequence[str]) -> None:
        shown = ", ".join(repr(e) for e in list(examples)[:3])
        super().__init__(
            f"{env} has no task {task_id!r}. Task ids look like {shown}; "
            f"list them with env.task_ids(split) for split in {list(splits)} "
            "(over HTTP: GET /v1/tasks?split=...).",
            task_id=str(task_id),
            env=env,
            splits=list(splits),
        )
        self.task_id = task_id


class DataNotFoundError(EnvhubError):
    """The dataset an env needs is not where envhub looked."""

    code = "DATA_NOT_FOUND"
    status_code = 503

    def __init__(self, what: str, *, path: object | None, env_var: str | None, how_to_get: str) -> None:
        where = f" at {str(path)!r}" if path is not None else ""
        var = f" Set {env_var} to the directory that holds it, or pass the path explicitly." if env_var else ""
        super().__init__(
            f"{what} was not found{where}.{var} To get it: {how_to_get}",
            path=None if path is None else str(path),
            env_var=env_var,
            how_to_get=how_to_get,
        )


class DependencyMissingError(EnvhubError):
    """An optional dependency (an envhub extra) is not installed."""

    code = "DEPENDENCY_MISSING"
    status_code = 503

    def __init__(self, package: str, *, extra: str) -> None:
        super().__init__(
            f"This feature needs the {package!r} package. Install it with: pip install 'envhub[{extra}]'",
            package=package,
            extra=extra,
        )


class ResetNeededError(EnvhubError):
    """``step()`` was called before the first ``reset()``."""

    code = "RESET_NEEDED"
    status_code = 409

    def __init__(self, env: str) -> None:
        super().__init__(f"{env}: call reset() before step().", env=env)

"""Failure classes: which errors re-run a group and which drop it."""

from __future__ import annotations

import pytest

from envhub.core.errors import (
    ConfigurationError,
    ExecutionError,
    PolicyError,
    PolicyUnavailableError,
    ServerUnreachableError,
    SessionExpiredError,
    SessionLostError,
    StepTimeoutError,
    UnknownTaskError,
)
from envhub.rollout.failures import DeadlineExceeded, classify


@pytest.mark.parametrize(
    ("error", "cause", "retryable"),
    [
        (DeadlineExceeded("step", 5), "step_timeout", True),
        (DeadlineExceeded("episode", 60), "episode_timeout", True),
        (SessionLostError("s", reason="SIGKILL"), "session_lost", True),
        (SessionExpiredError("s", ttl_s=600), "session_gone", True),
        (StepTimeoutError("s", timeout_s=60), "env_5xx", True),
        (ExecutionError("boom", exception_type="ValueError"), "env_5xx", True),
        (ServerUnreachableError(url="http://x", attempts=6, reason="refused"), "env_unreachable", True),
        (PolicyUnavailableError("paused", endpoint="u"), "policy_unavailable", True),
        (PolicyError("prompt too long", endpoint="u"), "policy_error", False),
        (UnknownTaskError("t", env="e", splits=["test"], examples=["a"]), "unknown_task", False),
        (ConfigurationError("bad"), "configuration", False),
        (RuntimeError("bug"), "internal", False),
    ],
)
def test_classify(error: BaseException, cause: str, retryable: bool) -> None:
    failure = classify(error)
    assert (failure.cause, failure.retryable) == (cause, retryable)
    assert failure.message

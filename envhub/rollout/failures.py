"""Why a group failed, and whether running it again can help.

===============================================  ======================  ==========
error                                            cause                   retryable
===============================================  ======================  ==========
step deadline (policy + env of one step)         ``step_timeout``        yes
episode deadline                                 ``episode_timeout``     yes
``SessionLostError`` (410, its worker died)      ``session_lost``        yes
``SessionExpiredError`` / ``SessionNotFound``    ``session_gone``        yes
other env-server 5xx (step timeout, env raised)  ``env_5xx``             yes
``ServerUnreachableError``                       ``env_unreachable``     yes
``PolicyUnavailableError`` (down, paused)        ``policy_unavailable``  yes
``PolicyError`` (the request is wrong)           ``policy_error``        no
``UnknownTaskError``                             ``unknown_task``        no
``ConfigurationError``                           ``configuration``       no
anything else                                    ``internal``            no
===============================================  ======================  ==========

A retryable failure re-runs the group whole (a new group on the same task, ``attempt + 1``)
when the engine is configured to retry; a terminal one drops it. Either way the group is never
published half.
"""

from __future__ import annotations

from dataclasses import dataclass

from envhub.core.errors import (
    ConfigurationError,
    EnvhubError,
    PolicyError,
    PolicyUnavailableError,
    ServerError,
    ServerUnreachableError,
    SessionError,
    SessionLostError,
    UnknownTaskError,
)

__all__ = ["DeadlineExceeded", "Failure", "classify"]


class DeadlineExceeded(Exception):
    """A step or an episode ran past its deadline (``which`` is ``step`` or ``episode``)."""

    def __init__(self, which: str, seconds: float) -> None:
        super().__init__(f"the {which} deadline of {seconds:g} s passed")
        self.which = which
        self.seconds = seconds


@dataclass(frozen=True)
class Failure:
    """A classified failure: its cause label, whether a re-run can help, and the message."""

    cause: str
    retryable: bool
    message: str
    code: str = "INTERNAL_ERROR"


def classify(exc: BaseException) -> Failure:
    """Classify an exception raised while playing a group (see the module table)."""
    message = str(exc)
    if isinstance(exc, DeadlineExceeded):
        return Failure(f"{exc.which}_timeout", True, message, "DEADLINE_EXCEEDED")
    code = str(getattr(exc, "code", "INTERNAL_ERROR"))
    if isinstance(exc, SessionLostError):
        return Failure("session_lost", True, message, code)
    if isinstance(exc, SessionError):
        return Failure("session_gone", True, message, code)
    if isinstance(exc, ServerUnreachableError):
        return Failure("env_unreachable", True, message, code)
    if isinstance(exc, ServerError) and exc.status_code >= 500:
        return Failure("env_5xx", True, message, code)
    if isinstance(exc, PolicyUnavailableError):
        return Failure("policy_unavailable", True, message, code)
    if isinstance(exc, PolicyError):
        return Failure("policy_error", False, message, code)
    if isinstance(exc, UnknownTaskError):
        return Failure("unknown_task", False, message, code)
    if isinstance(exc, ConfigurationError):
        return Failure("configuration", False, message, code)
    if isinstance(exc, EnvhubError):
        return Failure(code.lower(), False, message, code)
    return Failure("internal", False, f"{type(exc).__name__}: {message}", "INTERNAL_ERROR")

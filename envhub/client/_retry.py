"""Retries, written once and without I/O: :class:`RetryPolicy` and the :func:`exchange` flow.

:func:`exchange` is a generator in the style of httpx's auth flows. It yields what the driver
must do next (:class:`Send` the call, or :class:`Sleep`), receives the outcome (a
:class:`Reply` or a :class:`TransportFailure`) and finally returns the parsed result or raises
the mapped error. The sync and async clients are two short loops that run it, so both retry
in exactly the same way.

What is retried, and why it is safe:

* ``503 CAPACITY_REACHED``: the server refused the request before acting, so any call may be
  repeated; the wait honours ``Retry-After`` (never shorter than the server asked).
* a connection that could not be made: nothing reached the server, so any call may be repeated;
* a connection that broke after the request was sent: only replay-safe calls (GET, DELETE,
  and steps/resets/batches, which carry a ``request_id`` the server deduplicates on). A
  ``POST /v1/sessions`` lost this way is not repeated, because it could create two sessions.

Everything else (404, 410, 422, 500, ...) is raised at once: repeating it cannot help.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from envhub.client._protocol import ApiCall
from envhub.core.errors import CapacityReachedError, ConfigurationError, ServerUnreachableError

__all__ = ["Reply", "RetryPolicy", "Send", "Sleep", "TransportFailure", "exchange"]

T = TypeVar("T")


@dataclass(frozen=True)
class Send:
    """Instruction: send the call once and feed back a :class:`Reply` or :class:`TransportFailure`."""


@dataclass(frozen=True)
class Sleep:
    """Instruction: wait ``seconds``, then feed back ``None``."""

    seconds: float


@dataclass(frozen=True)
class Reply:
    """What the server answered."""

    status: int
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True)
class TransportFailure:
    """No reply came back.

    Attributes:
        request_sent: False only when the connection could not be made at all (so the server
            surely did not act); True when it broke later (it may have acted).
        reason: the underlying library's error, for the final message.
    """

    request_sent: bool
    reason: str


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to retry (see the module docstring for what is retried).

    The n-th retry waits ``min(max_backoff_s, backoff_s * 2**(n-1))`` scaled by a random factor
    in ``[1 - jitter, 1]`` (so thousands of clients refused at once do not return at once), and
    never less than the server's ``Retry-After``.

    Args:
        max_attempts: attempts in all, the first included (1 disables retrying).
        backoff_s: the first retry's wait.
        max_backoff_s: cap of the exponential backoff (``Retry-After`` may exceed it).
        jitter: fraction of the wait that is randomised, in [0, 1].

    Raises:
        ConfigurationError: a value is out of range.
    """

    max_attempts: int = 6
    backoff_s: float = 0.05
    max_backoff_s: float = 5.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.backoff_s < 0 or self.max_backoff_s < 0 or not 0 <= self.jitter <= 1:
            raise ConfigurationError(
                "RetryPolicy needs max_attempts >= 1, backoff_s >= 0, max_backoff_s >= 0 and "
                f"0 <= jitter <= 1; got {self}.",
                max_attempts=self.max_attempts,
                backoff_s=self.backoff_s,
                max_backoff_s=self.max_backoff_s,
                jitter=self.jitter,
            )

    def backoff(self, retry: int, *, unit_random: float, at_least: float = 0.0) -> float:
        """Seconds to wait before retry number ``retry`` (1-based).

        Args:
            retry: which retry this is (1 for the first).
            unit_random: a number in [0, 1) from the driver's random generator.
            at_least: a floor, e.g. the server's ``Retry-After``.
        """
        base = min(self.max_backoff_s, self.backoff_s * 2 ** (retry - 1))
        return max(at_least, base * (1.0 - self.jitter * unit_random))


def exchange(
    call: ApiCall[T], policy: RetryPolicy, *, base_url: str, randoms: Any
) -> Generator[Send | Sleep, Reply | TransportFailure | None, T]:
    """Run ``call`` to completion under ``policy``.

    Args:
        call: what to send.
        policy: when to retry.
        base_url: the server, for the message of :class:`ServerUnreachableError`.
        randoms: an object with a ``random()`` method (``random.Random``) for the jitter.

    Returns:
        The parsed result of the call.

    Raises:
        EnvhubError: the mapped server error, once retrying cannot or may not help.
        ServerUnreachableError: no reply after the last allowed attempt.
    """
    attempt = 0
    while True:
        attempt += 1
        outcome = yield Send()
        if isinstance(outcome, TransportFailure):
            may_retry = attempt < policy.max_attempts and (call.replay_safe or not outcome.request_sent)
            if not may_retry:
                raise ServerUnreachableError(url=base_url, attempts=attempt, reason=outcome.reason)
            yield Sleep(policy.backoff(attempt, unit_random=randoms.random()))
            continue
        if outcome is None:  # a driver bug, not a server condition
            raise TypeError("exchange() expects a Reply or TransportFailure after Send")
        try:
            return call.parse(outcome.status, outcome.headers, outcome.body)
        except CapacityReachedError as exc:
            if attempt >= policy.max_attempts:
                raise
            floor = float(getattr(exc, "retry_after_s", 0.0) or 0.0)
            yield Sleep(policy.backoff(attempt, unit_random=randoms.random(), at_least=floor))

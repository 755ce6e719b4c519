"""A clock that moves only when a test moves it, for TTLs without sleeping.

Install it on a running server's session manager (``SessionManager.clock``) and the server's
notion of "now" stops: no session expires on its own however slow the machine is, and
:meth:`ManualClock.advance` expires them exactly when the test says.
"""

from __future__ import annotations

import threading
import time

import httpx

from envhub.server.testing import RunningServer

__all__ = ["ManualClock", "expire_idle_sessions", "install_manual_clock"]


class ManualClock:
    """Seconds since the epoch, frozen at creation until :meth:`advance` moves them."""

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else start
        self._lock = threading.Lock()  # the server reads it from its own thread

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``."""
        with self._lock:
            self._now += seconds


def install_manual_clock(server: RunningServer) -> ManualClock:
    """Give ``server``'s session manager a :class:`ManualClock` and return it."""
    clock = ManualClock()
    server.app.state.manager.clock = clock
    return clock


def expire_idle_sessions(server: RunningServer, clock: ManualClock, *, timeout_s: float = 60) -> None:
    """Move ``clock`` past the server's TTL and wait until its reaper has taken every session.

    The reaper wakes every ``ttl / 4`` seconds of real time, so this waits at most that long
    on an idle machine; ``timeout_s`` only bounds a machine that is very slow.
    """
    clock.advance(server.settings.session_ttl + 1)
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        while c.get("/ready").json()["active_sessions"] > 0:
            assert time.monotonic() < deadline, "the reaper did not expire the idle sessions"
            time.sleep(0.05)

"""Prometheus metrics of one env server, in a registry owned by that server (no global state)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from envhub.server.history import RenderStatsCollector

__all__ = ["ServerMetrics"]

# Step latency buckets (seconds): text envs answer in well under a millisecond, real ones
# (ALFWorld, a browser) in tens to hundreds of ms; the tail matters for stragglers.
_LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)


class ServerMetrics:
    """The server's counters, gauges and histogram.

    Args:
        env_id: the ``env`` label value.
        active_sessions: read when scraped (so the gauge is never stale).
        workers_alive: read when scraped.
    """

    def __init__(
        self, env_id: str, *, active_sessions: Callable[[], int], workers_alive: Callable[[], int]
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        gauge = Gauge("envhub_sessions_active", "Sessions held now.", registry=r)
        gauge.set_function(lambda: float(active_sessions()))
        alive = Gauge("envhub_workers_alive", "Worker processes alive now.", registry=r)
        alive.set_function(lambda: float(workers_alive()))
        self.sessions_created = Counter("envhub_sessions_created", "Sessions created.", registry=r)
        self.sessions_reaped = Counter(
            "envhub_sessions_reaped", "Sessions closed by the TTL reaper.", registry=r
        )
        self.sessions_lost = Counter("envhub_sessions_lost", "Sessions lost to a worker crash.", registry=r)
        self.worker_restarts = Counter("envhub_worker_restarts", "Worker processes replaced.", registry=r)
        steps = Counter("envhub_steps", "Env steps by env and status.", ["env", "status"], registry=r)
        resets = Counter("envhub_resets", "Env resets by env and status.", ["env", "status"], registry=r)
        latency = Histogram(
            "envhub_step_latency_seconds",
            "Time from sending a step to a worker to its answer.",
            ["env"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self._errors = Counter("envhub_request_errors", "Error responses by code.", ["code"], registry=r)
        # Bound children once: labels() on the hot path costs a dict lookup and a lock.
        self._steps = {True: steps.labels(env_id, "ok"), False: steps.labels(env_id, "error")}
        self._resets = {True: resets.labels(env_id, "ok"), False: resets.labels(env_id, "error")}
        self._latency = latency.labels(env_id)
        #: AgentOCR render counters summed over the workers; /metrics refreshes it before rendering.
        self.history = RenderStatsCollector(env_id)
        r.register(self.history)

    def observe_step(self, ok: bool, seconds: float) -> None:
        """Count one step and record its latency."""
        self._steps[ok].inc()
        self._latency.observe(seconds)

    def count_reset(self, ok: bool) -> None:
        """Count one reset."""
        self._resets[ok].inc()

    def count_error(self, code: str) -> None:
        """Count one error response."""
        self._errors.labels(code).inc()

    def render(self) -> bytes:
        """The exposition text."""
        return generate_latest(self.registry)

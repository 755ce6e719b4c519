"""Prometheus metrics of the rollout engine and service, on a registry of their own.

Rates (groups/s, steps/s, tokens/s) are ``rate()`` of the counters; the job progress endpoint
also reports them directly. Drops and retries are counted by cause (see
:func:`envhub.rollout.failures.classify`).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["RolloutMetrics"]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class RolloutMetrics:
    """The counters, gauges and histograms of one engine or service (never global)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.groups = Counter(
            "envhub_rollout_groups",
            "Groups finished, by outcome (published, dropped).",
            ["outcome"],
            registry=r,
        )
        self.retries = Counter(
            "envhub_rollout_group_retries", "Groups re-run whole, by cause.", ["cause"], registry=r
        )
        self.drops = Counter(
            "envhub_rollout_group_drops", "Groups dropped whole, by cause.", ["cause"], registry=r
        )
        self.steps = Counter(
            "envhub_rollout_steps", "Env steps recorded in finished or live groups.", registry=r
        )
        self.steps_redone = Counter(
            "envhub_rollout_steps_redone", "Steps played again after a crash or a group re-run.", registry=r
        )
        self.steps_resumed = Counter(
            "envhub_rollout_steps_resumed",
            "Journaled steps kept when an episode resumed after a restart.",
            registry=r,
        )
        self.tokens = Counter(
            "envhub_rollout_tokens", "Tokens seen, by kind (prompt, response).", ["kind"], registry=r
        )
        self.retokenization_splits = Counter(
            "envhub_rollout_retokenization_splits",
            "Trajectory-mode splits where a chat template rewrote earlier turns.",
            registry=r,
        )
        self.policy_latency = Histogram(
            "envhub_rollout_policy_latency_seconds",
            "One generate call for a group's live members.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.env_latency = Histogram(
            "envhub_rollout_env_latency_seconds",
            "One batch step of a group's live members.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.queue_lag = Histogram(
            "envhub_rollout_queue_put_seconds",
            "Time a finished group waited to enter the queue (back-pressure).",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.live_groups = Gauge("envhub_rollout_live_groups", "Groups being played now.", registry=r)
        self.errors = Counter(
            "envhub_rollout_http_errors",
            "Error responses of the rollout service, by code.",
            ["code"],
            registry=r,
        )

    def count_error(self, code: str) -> None:
        """Count one error response (the shared server error handler calls this)."""
        self.errors.labels(code).inc()

    def render(self) -> bytes:
        """The Prometheus text exposition."""
        return generate_latest(self.registry)

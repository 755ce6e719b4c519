"""Server-side AgentOCR history: what a worker keeps per session and how its renders are counted.

A session created with ``history: {...}`` (:class:`envhub.core.wire.HistoryOptions`) gets a
:class:`SessionHistory` in its worker. After each env step the worker calls
:meth:`SessionHistory.after_step`, which does exactly what a client using :mod:`envhub.render`
does: ``record(observation_before_step, action, compression=c)`` then ``render()``. Every
session of a worker shares that worker's :class:`HistoryRuntime`: one :class:`TileStore` (the
segment cache's process-wide LRU), one :class:`Typesetter` per preset (the font is loaded once),
and the counters ``/metrics`` scrapes (:class:`RenderCounters`, summed over workers by
:class:`RenderStatsCollector`).

Self-compression (``compression: true``): the ``<compression>c</compression>`` tag is read with
:func:`envhub.agent.projection.parse_compression` and removed from the action before the env
sees it (the env plays the action, the tag is for the history); the factor shrinks the next
image. When the episode ends, the compression-aware reward of every step row is returned in
its own field (:func:`envhub.render.compression_scores` with the bonus applied on this call);
the env reward is never changed.
"""

from __future__ import annotations

import base64
import bisect
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from envhub.agent.projection import parse_compression, strip_compression
from envhub.core.wire import HistoryOptions
from envhub.render import (
    OpticalHistory,
    RenderConfig,
    RenderedHistory,
    TileStore,
    Typesetter,
    compression_scores,
    estimate_text_tokens,
)

__all__ = [
    "DEFAULT_INLINE",
    "RENDER_BUCKETS",
    "HistoryRuntime",
    "RenderCounters",
    "RenderStatsCollector",
    "SessionHistory",
    "history_url",
]

#: Where a step's history goes when the session did not choose: inline (base64 in the step
#: response). Measured (``bench/history_server.py``, docs/agentocr-server.md): one round trip
#: per step beats a step plus a GET, although base64 adds a third to the image bytes.
DEFAULT_INLINE = True

#: Render-time buckets (seconds): a cached render of a few lines is well under a millisecond,
#: a page of new lines or a compressed page a few milliseconds.
RENDER_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)

_PRESETS: Mapping[str, Callable[[], RenderConfig]] = MappingProxyType(
    {"alfworld": RenderConfig.alfworld, "search": RenderConfig.search}
)


def history_url(session_id: str) -> str:
    """The path a client GETs a session's latest history PNG from."""
    return f"/v1/sessions/{session_id}/history.png"


@dataclass
class RenderCounters:
    """One worker's render counters since it started (plain numbers: they cross the pipe)."""

    renders: int = 0
    hits: int = 0
    misses: int = 0
    render_buckets: list[int] = field(default_factory=lambda: [0] * (len(RENDER_BUCKETS) + 1))
    render_seconds: float = 0.0
    encodes: int = 0
    encode_seconds: float = 0.0
    png_bytes: int = 0

    def observe_render(self, rendered: RenderedHistory, seconds: float) -> None:
        self.renders += 1
        self.hits += rendered.hits
        self.misses += rendered.misses
        self.render_buckets[bisect.bisect_left(RENDER_BUCKETS, seconds)] += 1
        self.render_seconds += seconds

    def observe_encode(self, nbytes: int, seconds: float) -> None:
        self.encodes += 1
        self.encode_seconds += seconds
        self.png_bytes += nbytes

    def add(self, other: RenderCounters) -> RenderCounters:
        """The element-wise sum (used to aggregate workers)."""
        return RenderCounters(
            renders=self.renders + other.renders,
            hits=self.hits + other.hits,
            misses=self.misses + other.misses,
            render_buckets=[a + b for a, b in zip(self.render_buckets, other.render_buckets, strict=True)],
            render_seconds=self.render_seconds + other.render_seconds,
            encodes=self.encodes + other.encodes,
            encode_seconds=self.encode_seconds + other.encode_seconds,
            png_bytes=self.png_bytes + other.png_bytes,
        )


class HistoryRuntime:
    """What all history sessions of one worker share: the tile store, typesetters, counters.

    Args:
        max_bytes: bound of the worker's tile store (the segment cache's LRU).
    """

    def __init__(self, *, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.store = TileStore(max_bytes)
        self.counters = RenderCounters()
        self._typesetters: dict[str, Typesetter] = {}

    def typesetter(self, preset: str) -> Typesetter:
        """The preset's typesetter, built once per worker."""
        typesetter = self._typesetters.get(preset)
        if typesetter is None:
            typesetter = self._typesetters[preset] = Typesetter(_PRESETS[preset]())
        return typesetter

    def open(self, options: HistoryOptions) -> SessionHistory:
        """A session's history with these options."""
        return SessionHistory(options, runtime=self)


class SessionHistory:
    """One session's AgentOCR history, kept in its worker.

    Args:
        options: the session's validated history options.
        runtime: the worker's shared store, typesetters and counters.
    """

    def __init__(self, options: HistoryOptions, *, runtime: HistoryRuntime) -> None:
        self.options = options
        self.inline = DEFAULT_INLINE if options.inline is None else options.inline
        self._runtime = runtime
        typesetter = runtime.typesetter(options.preset)
        self.optical = OpticalHistory(
            typesetter.config,
            window=options.window,
            style=options.style,
            store=runtime.store,
            typesetter=typesetter,
        )
        # The latest image: its pixels until encoded, then only its PNG. A composed ALFWorld
        # page is ~1 MB of pixels and ~30 KB of PNG, and a worker holds thousands of sessions.
        self._pending: RenderedHistory | None = None
        self._png: bytes | None = None
        self._factors: list[float] = []
        self._rewards: list[float] = []

    def reset(self) -> None:
        """A new episode: forget the steps, the episode's tiles and the last image."""
        self.optical.reset()
        self._pending, self._png = None, None
        self._factors.clear()
        self._rewards.clear()

    def close(self) -> None:
        """Release the episode's tiles from the worker's store."""
        self.optical.close()

    def env_action(self, action: str) -> tuple[str, float, bool | None]:
        """Split a sent action into what the env plays and the compression it asks for.

        Returns:
            ``(env_action, factor, tag_valid)``: without self-compression the action unchanged,
            ``1.0`` and ``None``; with it, the action with its ``<compression>`` blocks removed
            (stray tags too), the parsed factor and whether the tag use was valid.
        """
        if not self.options.compression:
            return action, 1.0, None
        tag = parse_compression(action)
        stripped = strip_compression(action)
        return stripped, tag.factor, tag.is_valid

    def after_step(
        self,
        *,
        session_id: str,
        observation: str,
        action: str,
        factor: float,
        tag_valid: bool | None,
        reward: float,
        done: bool,
        won: bool,
    ) -> dict[str, Any]:
        """Record one step, render the next prompt's image, and describe it for the response.

        Args:
            session_id: for the link to the PNG.
            observation: the observation the action was taken in.
            action: the action the env played.
            factor: the compression factor this step asked for (1 without self-compression).
            tag_valid: whether the compression tag use was valid (None: self-compression off).
            reward: the env reward of the step (kept for the compression-aware reward).
            done: the episode ended with this step.
            won: the env's ``info["won"]`` after this step.

        Returns:
            A :class:`HistoryFrame`-shaped dict.
        """
        self.optical.record(observation, action, compression=factor)
        started = time.perf_counter()
        rendered = self.optical.render()
        self._runtime.counters.observe_render(rendered, time.perf_counter() - started)
        self._pending, self._png = rendered, None
        self._factors.append(factor)
        self._rewards.append(reward)
        width, height = rendered.size
        window = self.optical.memory.window(self.options.window, self.options.style)
        frame: dict[str, Any] = {
            "step": len(self.optical.memory),
            "segments": rendered.segments,
            "width": width,
            "height": height,
            "vision_tokens": rendered.vision_tokens(),
            "text_tokens": estimate_text_tokens(window.text),
            "compression": rendered.compression,
            "cache_hits": rendered.hits,
            "cache_misses": rendered.misses,
            "truncated": rendered.truncated,
        }
        if self.inline:
            frame["png_base64"] = base64.b64encode(self.png()).decode("ascii")
        else:
            frame["url"] = history_url(session_id)
        if self.options.compression:
            frame["compression_valid"] = tag_valid
            if done:
                frame["compression_rewards"] = self.compression_rewards(won=won)
        return frame

    def compression_rewards(self, *, won: bool) -> list[float]:
        """Every step row's episode reward + compression term (AgentOCR's reward, bonus applied)."""
        rows = len(self._factors)
        episode = sum(self._rewards)
        scores = compression_scores(
            [episode] * rows,
            self._factors,
            [won] * rows,
            call_index=1,
            every=1,
            lam=self.options.compression_lam,
            mu=self.options.compression_mu,
        )
        return [float(x) for x in scores]

    def png(self) -> bytes:
        """The latest image as PNG (encoded once per image; counted in the worker's counters).

        Before the first step of an episode that is the blank page the first prompt shows.
        """
        if self._png is not None:
            return self._png
        rendered = self._pending if self._pending is not None else self.optical.render()
        started = time.perf_counter()
        self._png = rendered.png()
        self._runtime.counters.observe_encode(len(self._png), time.perf_counter() - started)
        self._pending = None
        return self._png


class RenderStatsCollector(Collector):
    """Prometheus collector of the workers' render counters, summed per server.

    ``/metrics`` pulls each live worker's :class:`RenderCounters` just before rendering the
    exposition and hands them to :meth:`update`. A worker that was replaced keeps counting:
    its last scraped counters move into a retired total, so the server's counters never go back.
    """

    def __init__(self, env_id: str) -> None:
        self._env_id = env_id
        self._live: dict[int, tuple[int, RenderCounters]] = {}
        self._retired = RenderCounters()

    def update(self, snapshots: Iterable[tuple[int, int, RenderCounters]]) -> None:
        """Take ``(slot_index, generation, counters)`` for each worker that answered."""
        for index, generation, counters in snapshots:
            previous = self._live.get(index)
            if previous is not None and previous[0] != generation:
                self._retired = self._retired.add(previous[1])
            self._live[index] = (generation, counters)

    def total(self) -> RenderCounters:
        """The server's counters: retired workers plus the latest scrape of the live ones."""
        total = self._retired
        for _generation, counters in self._live.values():
            total = total.add(counters)
        return total

    def collect(self) -> Iterator[Any]:
        total = self.total()
        labels = ["env"]
        value = [self._env_id]
        hits = CounterMetricFamily(
            "envhub_history_cache_hits", "History segments taken from the segment cache.", labels=labels
        )
        hits.add_metric(value, total.hits)
        misses = CounterMetricFamily(
            "envhub_history_cache_misses", "History segments drawn (segment cache misses).", labels=labels
        )
        misses.add_metric(value, total.misses)
        looked = total.hits + total.misses
        rate = GaugeMetricFamily(
            "envhub_history_cache_hit_rate",
            "Segment cache hits / (hits + misses) over the server's life (0 before any render).",
            labels=labels,
        )
        rate.add_metric(value, total.hits / looked if looked else 0.0)
        renders = CounterMetricFamily("envhub_history_renders", "History images rendered.", labels=labels)
        renders.add_metric(value, total.renders)
        cumulative, buckets = 0, []
        for bound, count in zip([*RENDER_BUCKETS, float("inf")], total.render_buckets, strict=True):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
        seconds = HistogramMetricFamily(
            "envhub_history_render_seconds", "Time to render one history image (worker side).", labels=labels
        )
        seconds.add_metric(value, buckets, total.render_seconds)
        png = CounterMetricFamily(
            "envhub_history_png_bytes", "PNG bytes encoded for history images.", labels=labels
        )
        png.add_metric(value, total.png_bytes)
        encode = CounterMetricFamily(
            "envhub_history_png_encode_seconds", "Time spent encoding history PNGs.", labels=labels
        )
        encode.add_metric(value, total.encode_seconds)
        yield from (hits, misses, rate, renders, seconds, png, encode)

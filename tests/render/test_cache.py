"""The segment optical cache: keys, per-step hits and misses, reset, and the process byte bound."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from envhub.agent import EpisodeMemory
from envhub.core.errors import ConfigurationError
from envhub.render import HistoryRenderer, RenderConfig, SegmentCache, TileStore, segment_key
from envhub.render.samples import alfworld_style_steps


def test_segment_key_is_a_stable_blake2b_digest_of_the_stripped_text() -> None:
    assert segment_key("[Observation]: look [Action]: look").hex() == "7ecc3698e33e04670bbae4d90c763360"
    assert segment_key("  a  ") == segment_key("a") != segment_key("b")
    code = "from envhub.render import segment_key; print(segment_key('abc').hex())"
    other_process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other_process.stdout.strip() == segment_key("abc").hex()


def _episode_windows(steps: int, k: int) -> list[list[str]]:
    memory = EpisodeMemory()
    windows = []
    for observation, action in alfworld_style_steps(steps, seed=11):
        memory.store(observation, action)
        windows.append(list(memory.window(k, "ocr").lines))
    return windows


@pytest.mark.parametrize("k", [50, 4, 1])
def test_each_step_misses_only_its_new_line(k: int) -> None:
    renderer = HistoryRenderer(RenderConfig.alfworld(), cache=SegmentCache())
    for t, window in enumerate(_episode_windows(20, k), start=1):
        out = renderer.render(window)
        assert (out.hits, out.misses) == (min(t, k) - 1, 1)
    assert renderer.cache is not None
    stats = renderer.cache.stats()
    assert (stats.hits, stats.misses) == (sum(min(t, k) - 1 for t in range(1, 21)), 20)


def test_a_repeated_line_hits_after_its_first_occurrence() -> None:
    renderer = HistoryRenderer(RenderConfig(), cache=SegmentCache())
    out = renderer.render(["[Observation]: Nothing happens. [Action]: x"] * 3 + ["other"])
    assert (out.hits, out.misses) == (2, 2)


def test_reset_clears_the_episode_cache_and_counters() -> None:
    renderer = HistoryRenderer(RenderConfig(), cache=SegmentCache())
    lines = _episode_windows(5, 50)[-1]
    renderer.render(lines)
    renderer.reset()
    assert renderer.cache is not None
    assert renderer.cache.stats().tiles == 0
    out = renderer.render(lines)
    assert (out.hits, out.misses) == (0, 5)


def test_episodes_sharing_a_store_keep_separate_namespaces() -> None:
    store = TileStore()
    first, second = SegmentCache(store), SegmentCache(store)
    a = HistoryRenderer(RenderConfig(), cache=first)
    b = HistoryRenderer(RenderConfig(), cache=second)
    a.render(["same line"])
    assert b.render(["same line"]).misses == 1
    first.clear()
    assert second.stats().tiles == 1 and first.stats().tiles == 0
    second.close()
    assert store.stats().tiles == 0


def _tile(height: int) -> np.ndarray:
    return np.full((height, 10, 3), 255, dtype=np.uint8)


def test_store_evicts_least_recently_used_tiles_past_its_byte_bound() -> None:
    store = TileStore(max_bytes=3 * 300)  # room for three 10x10 RGB tiles
    cache = SegmentCache(store)
    for name in (b"a", b"b", b"c"):
        cache.put(name, _tile(10))
    assert cache.get(b"a") is not None  # "a" becomes the most recently used
    cache.put(b"d", _tile(10))
    assert cache.get(b"b") is None and cache.get(b"a") is not None
    stats = store.stats()
    assert (stats.tiles, stats.nbytes, stats.evictions) == (3, 900, 1)


def test_a_tile_larger_than_the_bound_is_not_kept() -> None:
    cache = SegmentCache(max_bytes=100)
    cache.put(b"big", _tile(10))
    assert cache.get(b"big") is None
    assert cache.stats().nbytes == 0


def test_renderer_output_is_unchanged_when_the_bound_forces_evictions() -> None:
    lines = _episode_windows(12, 50)[-1]
    tiny = HistoryRenderer(RenderConfig(), cache=SegmentCache(max_bytes=40_000))
    roomy = HistoryRenderer(RenderConfig(), cache=SegmentCache())
    for t in range(1, 13):
        assert tiny.render(lines[:t]).image.tobytes() == roomy.render(lines[:t]).image.tobytes()
    assert tiny.cache is not None and tiny.cache.store.stats().evictions > 0
    assert tiny.cache.store.stats().nbytes <= 40_000


@pytest.mark.parametrize("bad", [0, -5, 1.5])
def test_bad_byte_bound_is_a_configuration_error(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="max_bytes"):
        TileStore(bad)  # type: ignore[arg-type]

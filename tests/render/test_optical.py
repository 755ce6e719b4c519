"""OpticalHistory: the per-episode AgentOCR loop."""

from __future__ import annotations

import pytest

from envhub.core.errors import ConfigurationError
from envhub.render import OpticalHistory, RenderConfig, TileStore, compressed_size
from envhub.render.samples import alfworld_style_steps


def test_blank_before_any_step_then_one_line_per_step() -> None:
    history = OpticalHistory(RenderConfig.alfworld())
    assert history.render().size == (38, 38)
    for t, (observation, action) in enumerate(alfworld_style_steps(6, seed=1), start=1):
        history.record(observation, action)
        out = history.render()
        assert (out.segments, out.hits, out.misses) == (t, t - 1, 1)


def test_compression_applies_to_the_next_image_only() -> None:
    history = OpticalHistory(RenderConfig.alfworld())
    steps = alfworld_style_steps(8, seed=2)
    for observation, action in steps[:7]:
        history.record(observation, action)
    plain = history.render()
    history.record(*steps[7], compression=3.0)
    shrunk = history.render()
    full = OpticalHistory(RenderConfig.alfworld())
    for observation, action in steps:
        full.record(observation, action)
    width, height = full.render().size
    assert shrunk.size == tuple(reversed([s + 10 for s in compressed_size(height - 10, width - 10, 3.0)]))
    assert plain.compression == 1.0 and shrunk.compression == 3.0


def test_window_limits_the_lines_and_reset_starts_over() -> None:
    history = OpticalHistory(RenderConfig.search(), window=4, style="ocr-search")
    for i in range(6):
        history.record("q", f"<search>query {i}</search>", result=f"<information>doc {i}</information>")
    assert history.render().segments == 4
    history.reset()
    assert history.render().segments == 0 and history.compression == 1.0


def test_episodes_share_a_store_and_close_releases_their_tiles() -> None:
    store = TileStore()
    a, b = OpticalHistory(store=store), OpticalHistory(store=store)
    a.record("o", "x")
    b.record("o", "y")
    a.render(), b.render()
    assert store.stats().tiles == 2
    a.close()
    assert store.stats().tiles == 1


def test_bad_window_or_style_fails_at_construction() -> None:
    with pytest.raises(ConfigurationError):
        OpticalHistory(window=-1)
    with pytest.raises(ConfigurationError):
        OpticalHistory(style="nope")

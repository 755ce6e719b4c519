"""History images: sizes, pixels, highlights, engines and cache on/off."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from envhub.agent import EpisodeMemory
from envhub.core.errors import ConfigurationError
from envhub.render import HistoryRenderer, RenderConfig, SegmentCache, Typesetter
from envhub.render.samples import alfworld_style_steps


def _lines(steps: int, seed: int = 0) -> list[str]:
    memory = EpisodeMemory()
    for observation, action in alfworld_style_steps(steps, seed=seed):
        memory.store(observation, action)
    return list(memory.window(steps, "ocr").lines)


def test_image_height_is_lines_times_line_height_plus_padding() -> None:
    renderer = HistoryRenderer(RenderConfig.alfworld())
    lines = _lines(12)
    out = renderer.render(lines)
    wrapped = sum(len(renderer.typesetter.wrap(line)) for line in lines)
    assert out.lines == wrapped
    assert out.size == (392 + 2 * 5, wrapped * 12 + 2 * 5)
    assert out.segments == 12 and not out.truncated


def test_empty_history_is_the_blank_28_pixel_page_plus_padding() -> None:
    out = HistoryRenderer(RenderConfig.alfworld()).render("")
    assert out.size == (38, 38)
    assert out.pixels.min() == 255 and out.segments == 0


def test_a_short_history_is_as_tall_as_its_lines_with_no_minimum() -> None:
    # AgentOCR renders segments with min_height 0: one 12 px line + 2 * 5 padding = 22 px,
    # two lines 34 px (measured with its OCRTool @25736f7, cache on and off).
    renderer = HistoryRenderer(RenderConfig.alfworld())
    out = renderer.render("look")
    assert out.size == (402, 12 + 10)
    assert out.pixels[5 + 12 :].min() == 255  # below the one text line: the bottom padding
    assert renderer.render(["look", "go to desk 1"]).size == (402, 24 + 10)


def test_a_short_history_compresses_to_at_least_the_minimum_side() -> None:
    # 12 px tall text area, c = 4: (max(28, int(12 / 2)), max(28, int(392 / 2))) = (28, 196).
    out = HistoryRenderer(RenderConfig.alfworld()).render("look", compression=4.0)
    assert out.size == (196 + 10, 28 + 10)


def test_search_preset_uses_font_12_and_width_560() -> None:
    out = HistoryRenderer(RenderConfig.search()).render("<search>q</search> <information>Doc 1</information>")
    assert out.size == (570, 15 + 10)  # one 15 px line plus padding


def test_lines_past_max_height_are_cut_not_squeezed() -> None:
    config = RenderConfig(max_height=100)
    out = HistoryRenderer(config).render(_lines(30))
    assert out.truncated
    assert out.size == (402, 7 * 12 + 10)  # (100 - 10) // 12 = 7 whole lines
    assert out.lines == 7


def test_cached_and_uncached_renders_have_identical_pixels() -> None:
    config = RenderConfig.alfworld()
    cached = HistoryRenderer(config, cache=SegmentCache())
    uncached = HistoryRenderer(config)
    lines = _lines(20, seed=5)
    for t in range(1, 21):
        a, b = cached.render(lines[:t]), uncached.render(lines[:t])
        assert np.array_equal(np.asarray(a.image), np.asarray(b.image))
    assert cached.render(lines).hits == 20


def test_atlas_engine_matches_pillow_draw_text_on_alfworld_text() -> None:
    for config in (RenderConfig(), RenderConfig.alfworld()):
        lines = _lines(15, seed=9)
        atlas = HistoryRenderer(config).render(lines)
        pillow = HistoryRenderer(config, typesetter=Typesetter(config, engine="pillow")).render(lines)
        assert np.array_equal(np.asarray(atlas.image), np.asarray(pillow.image))


def test_highlights_colour_the_markers_and_only_them() -> None:
    line = "[Observation]: You see a desk 1. [Action]: go to desk 1"
    plain = np.asarray(HistoryRenderer(RenderConfig()).render(line).image).astype(int)
    colour = np.asarray(HistoryRenderer(RenderConfig.alfworld()).render(line).image).astype(int)
    blue = (colour[..., 2] > 200) & (colour[..., 0] < 80)
    red = (colour[..., 0] > 200) & (colour[..., 2] < 80)
    assert blue.any() and red.any()
    assert blue[:, : 5 + 13 * 7].sum() == blue.sum()  # "[Observation]" is the first 13 cells
    grey = (colour == colour[..., :1]).all(axis=2)
    assert np.array_equal(colour[grey], plain[grey])  # everything else is the plain rendering


def test_png_bytes_decode_to_the_same_pixels() -> None:
    out = HistoryRenderer(RenderConfig.alfworld()).render(_lines(5))
    decoded = Image.open(io.BytesIO(out.png()))
    assert decoded.format == "PNG"
    assert np.array_equal(np.asarray(decoded.convert("RGB")), np.asarray(out.image))
    assert out.png() is out.png()


def test_any_text_renders_without_raising() -> None:
    renderer = HistoryRenderer(RenderConfig.alfworld(), cache=SegmentCache())
    nasty = ["\x00\x01\x1b[31m", "\ud800 lone", "中文 ÅÉ — …", "x" * 5000, "\t\t tabs", "🙂" * 10]
    out = renderer.render(nasty)
    assert out.segments == 6 and out.size[0] == 402


@pytest.mark.parametrize(
    "kwargs", [{"font_size": 0}, {"width": 0}, {"padding": -1}, {"min_side": 0}, {"max_height": 20}]
)
def test_out_of_range_config_is_a_configuration_error(kwargs: dict[str, int]) -> None:
    with pytest.raises(ConfigurationError, match="RenderConfig"):
        RenderConfig(**kwargs)


def test_unknown_engine_and_mismatched_typesetter_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="engine"):
        Typesetter(RenderConfig(), engine="cairo")
    with pytest.raises(ConfigurationError, match="typesetter"):
        HistoryRenderer(RenderConfig.alfworld(), typesetter=Typesetter(RenderConfig.search()))


def test_atlas_engine_stays_within_a_few_levels_of_pillow_on_search_text() -> None:
    config = RenderConfig.search()
    lines = [
        "<search>who founded Velmora</search> <information>Doc 1(Title: Velmora) WWW &K</information>",
        "</search><search>adjacent markers</search><information>x</information>",
    ]
    atlas = HistoryRenderer(config).render(lines).pixels.astype(int)
    pillow = (
        HistoryRenderer(config, typesetter=Typesetter(config, engine="pillow"))
        .render(lines)
        .pixels.astype(int)
    )
    assert atlas.shape == pillow.shape
    assert np.abs(atlas - pillow).max() <= 3  # only where two glyphs' anti-aliasing overlaps
    assert (atlas != pillow).any(axis=2).mean() < 0.001


def test_a_huge_segment_costs_at_most_one_page_of_pixels() -> None:
    config = RenderConfig.alfworld()
    out = HistoryRenderer(config).render(["x" * 5_000_000, "look"])
    assert out.truncated
    assert out.size == (402, (4096 - 10) // 12 * 12 + 10)

"""Visual-token accounting against the text-token estimate."""

from __future__ import annotations

import pytest

from envhub.agent import EpisodeMemory
from envhub.render import HistoryRenderer, RenderConfig, estimate_text_tokens, qwen_vl_resize, vision_tokens
from envhub.render.samples import alfworld_style_steps


@pytest.mark.parametrize(
    ("w", "h", "resized", "tokens"),
    [
        (402, 610, (616, 392), 22 * 14),  # rounded to multiples of 28
        (402, 38, (28, 392), 14),
        (28, 28, (56, 56), 4),  # raised to min_pixels = 56 * 56
        (1, 1, (56, 56), 4),
    ],
)
def test_vision_tokens_follow_qwen25_vl_resizing(
    w: int, h: int, resized: tuple[int, int], tokens: int
) -> None:
    assert qwen_vl_resize(h, w) == resized
    assert vision_tokens(w, h) == tokens


def test_huge_images_are_scaled_under_max_pixels() -> None:
    h, w = qwen_vl_resize(20_000, 20_000)
    assert h * w <= 16384 * 28 * 28 and h % 28 == 0 and w % 28 == 0
    assert vision_tokens(20_000, 20_000, max_pixels=28 * 28 * 100) <= 100


def test_text_estimate_counts_words_punctuation_and_single_digits() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("You arrive at desk 12.") == 8  # You| arrive| at| desk| |1|2|.
    assert estimate_text_tokens("[Action]: look") == 3  # "[Action" | "]:" | " look"


def test_image_history_costs_fewer_tokens_than_text_at_thirty_steps() -> None:
    memory = EpisodeMemory()
    for observation, action in alfworld_style_steps(30, seed=2):
        memory.store(observation, action)
    window = memory.window(30, "ocr")
    image = HistoryRenderer(RenderConfig.alfworld()).render(window.lines)
    assert image.vision_tokens() < 0.5 * estimate_text_tokens(window.text)

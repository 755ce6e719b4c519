"""Self-compression: the size formula and its effect on rendered images."""

from __future__ import annotations

import math

import pytest
from PIL import Image

from envhub.render import HistoryRenderer, RenderConfig, compress_image, compressed_size


@pytest.mark.parametrize(
    ("h", "w", "c", "expected"),
    [
        (610, 392, 1.0, (610, 392)),
        (610, 392, 2.0, (int(610 / math.sqrt(2)), int(392 / math.sqrt(2)))),
        (610, 392, 4.0, (305, 196)),
        (610, 392, 5.0, (272, 175)),
        (40, 392, 4.0, (28, 196)),  # never below 28
        (30, 30, 5.0, (28, 28)),
        (610, 392, float("nan"), (610, 392)),
        (610, 392, float("inf"), (610, 392)),
        (610, 392, 0.5, (610, 392)),
    ],
)
def test_compressed_size_formula(h: int, w: int, c: float, expected: tuple[int, int]) -> None:
    assert compressed_size(h, w, c) == expected


def test_factor_one_returns_the_image_itself() -> None:
    image = Image.new("RGB", (50, 40), "white")
    assert compress_image(image, 1.0) is image
    assert compress_image(image, 4.0).size == (28, 28)


def test_rendered_history_is_compressed_before_padding() -> None:
    renderer = HistoryRenderer(RenderConfig.alfworld())
    lines = [
        f"[Observation]: You arrive at cabinet {i}. The cabinet {i} is closed. [Action]: open it"
        for i in range(20)
    ]
    plain = renderer.render(lines)
    content_h, content_w = plain.size[1] - 10, plain.size[0] - 10
    for c in (1.5, 2.0, 3.3, 5.0):
        out = renderer.render(lines, compression=c)
        h, w = compressed_size(content_h, content_w, c)
        assert out.size == (w + 10, h + 10)
        assert out.compression == c
    assert renderer.render(lines, compression=float("nan")).size == plain.size

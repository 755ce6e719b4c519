"""A line plot of a series as PNG bytes, drawn with Pillow (deterministic pixels, ~ms)."""

from __future__ import annotations

import io

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFont

__all__ = ["plot_png"]


def plot_png(x: NDArray[np.float64], *, width: int = 600, height: int = 250) -> bytes:
    """The series as a 600x250 PNG with index ticks on the x axis (so intervals can be read off)."""
    left, right, top, bottom = 48, 10, 10, 24
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    lo, hi = float(x.min()), float(x.max())
    span = hi - lo or 1.0
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = left + np.arange(len(x)) * plot_w / max(1, len(x) - 1)
    ys = top + (hi - x) * plot_h / span
    draw.rectangle([left, top, width - right, height - bottom], outline="black")
    draw.line(list(zip(xs.tolist(), ys.tolist(), strict=True)), fill=(31, 119, 180), width=1)
    step = _tick_step(len(x))
    for tick in range(0, len(x), step):
        px = left + tick * plot_w / max(1, len(x) - 1)
        draw.line([px, height - bottom, px, height - bottom + 4], fill="black")
        draw.text((px - 8, height - bottom + 6), str(tick), fill="black", font=font)
    for value in (lo, (lo + hi) / 2, hi):
        py = top + (hi - value) * plot_h / span
        draw.text((2, py - 5), f"{value:.3g}", fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def _tick_step(length: int) -> int:
    for step in (25, 50, 100, 200):
        if length / step <= 10:
            return step
    return 500

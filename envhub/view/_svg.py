"""Learning curves as inline SVG, drawn on the server (no script, no chart library)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

__all__ = ["line_chart"]

_W, _H, _PAD = 420, 200, 38


def _ticks(low: float, high: float) -> list[float]:
    if high <= low:
        return [low]
    return [low + (high - low) * i / 4 for i in range(5)]


def line_chart(
    title: str,
    series: Sequence[tuple[float, float]],
    points: Sequence[tuple[float, float]] = (),
    *,
    element_id: str = "",
) -> str:
    """An SVG line of ``series`` (iteration, value) with ``points`` (validation) as dots.

    Non-finite values are skipped; an empty chart says so.
    """
    line = [(x, y) for x, y in series if math.isfinite(y)]
    dots = [(x, y) for x, y in points if math.isfinite(y)]
    every = line + dots
    attrs = f' id="{escape(element_id)}"' if element_id else ""
    head = f'<figure class="chart"{attrs}><figcaption>{escape(title)}</figcaption>'
    if not every:
        return head + '<p class="muted">no values</p></figure>'
    x0, x1 = min(x for x, _ in every), max(x for x, _ in every)
    y0, y1 = min(y for _, y in every), max(y for _, y in every)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1

    def sx(x: float) -> float:
        return _PAD + (x - x0) / (x1 - x0) * (_W - 2 * _PAD)

    def sy(y: float) -> float:
        return _H - _PAD + (y0 - y) / (y1 - y0) * (_H - 2 * _PAD)

    parts = [f'<svg viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img">']
    for y in _ticks(y0, y1):
        parts.append(
            f'<line class="grid" x1="{_PAD}" x2="{_W - _PAD}" y1="{sy(y):.1f}" y2="{sy(y):.1f}"/>'
            f'<text class="tick" x="{_PAD - 4}" y="{sy(y) + 3:.1f}" text-anchor="end">{y:.3g}</text>'
        )
    # Iterations are integers: round the x ticks and drop the repeats a short run would give.
    for x in sorted({round(x) for x in _ticks(x0, x1) if x0 <= round(x) <= x1}):
        parts.append(
            f'<text class="tick" x="{sx(x):.1f}" y="{_H - _PAD + 14}" text-anchor="middle">{x:.0f}</text>'
        )
    if line:
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in line)
        parts.append(f'<polyline class="train" points="{path}"/>')
        parts += [
            f'<circle class="train" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2">'
            f"<title>iteration {x:g}: {y:.4g}</title></circle>"
            for x, y in line
        ]
    parts += [
        f'<circle class="val" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4">'
        f"<title>validation at {x:g}: {y:.4g}</title></circle>"
        for x, y in dots
    ]
    parts.append(f'<text class="tick" x="{_W / 2}" y="{_H - 6}" text-anchor="middle">iteration</text></svg>')
    return head + "".join(parts) + "</figure>"

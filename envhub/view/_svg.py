"""Learning curves and GraphGPO transition graphs as inline SVG, drawn on the server (no script,
no chart or graph library)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from envhub.algos import TransitionGraph

__all__ = ["graph_chart", "line_chart"]

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


_GX, _GY, _GR = 110, 46, 13  # column and row spacing, node radius


def graph_chart(graph: TransitionGraph, *, element_id: str = "transition-graph") -> str:
    """A group's transition graph, laid out by distance: ``success`` on the right, one column
    per distance (unreachable states in the leftmost), nodes numbered, every edge an arrow whose
    width grows with the number of steps that took it; hovering names each node and edge.
    """
    columns: dict[int, list[int]] = {}
    for i, node in enumerate(graph.nodes):
        columns.setdefault(node.distance, []).append(i)
    far = max(columns)
    rows = max(len(c) for c in columns.values())
    width = _GX * (far + 1)
    height = _GY * rows + 40 + _GY
    pos: dict[int, tuple[float, float]] = {}
    for d, members in columns.items():
        x = _GX / 2 + (far - d) * _GX
        top = (height - 20 - _GY * len(members)) / 2 + _GY / 2
        for k, i in enumerate(sorted(members, key=lambda j: graph.nodes[j].label)):
            pos[i] = (x, top + k * _GY)
    parts = [
        f'<svg id="{escape(element_id)}" class="graph" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
        'markerHeight="8" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z"/></marker></defs>'
    ]
    for d in sorted(columns):
        x = _GX / 2 + (far - d) * _GX
        parts.append(f'<text class="tick" x="{x:.1f}" y="{height - 6}" text-anchor="middle">d={d}</text>')
    for e in graph.edges:
        (x1, y1), (x2, y2) = pos[e.source], pos[e.target]
        ends = f"{graph.nodes[e.source].label[:80]} -> {graph.nodes[e.target].label[:80]}"
        tip = f"{ends}: {e.count} step(s)"
        stroke = f"{min(1 + e.count, 6):.0f}"
        if e.source == e.target:  # a loop above the node
            top = y1 - _GR
            path = (
                f"M{x1 - 6:.1f},{top:.1f} C{x1 - 22:.1f},{y1 - 42:.1f} "
                f"{x1 + 22:.1f},{y1 - 42:.1f} {x1 + 6:.1f},{top:.1f}"
            )
        else:
            dx, dy = x2 - x1, y2 - y1
            length = math.hypot(dx, dy) or 1.0
            ux, uy = dx / length, dy / length
            sx, sy, ex, ey = x1 + ux * _GR, y1 + uy * _GR, x2 - ux * (_GR + 2), y2 - uy * (_GR + 2)
            # Bend every edge to its left, so opposite edges stay apart and long ones clear
            # the nodes between their ends.
            bend = 14 + 0.15 * length
            cx, cy = (sx + ex) / 2 - uy * bend, (sy + ey) / 2 + ux * bend
            path = f"M{sx:.1f},{sy:.1f} Q{cx:.1f},{cy:.1f} {ex:.1f},{ey:.1f}"
        parts.append(
            f'<path class="edge" d="{path}" stroke-width="{stroke}" marker-end="url(#arrow)">'
            f"<title>{escape(tip)}</title></path>"
        )
    for i, node in enumerate(graph.nodes):
        x, y = pos[i]
        reach = "" if node.reachable else " unreachable"
        mark = "✓" if node.kind == "success" else str(i)
        tip = f"{i}: {node.label[:300]} (d = {node.distance}{'' if node.reachable else ', unreachable'})"
        parts.append(
            f'<g class="node {escape(node.kind)}{reach}" data-distance="{node.distance}">'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{_GR}"><title>{escape(tip)}</title></circle>'
            f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{mark}</text></g>'
        )
    return "".join(parts) + "</svg>"

"""Drawing one history segment as a tile: wrapping, glyphs, highlight colours."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw

from envhub.core.errors import ConfigurationError
from envhub.render._config import RGB, RenderConfig
from envhub.render._glyphs import GlyphSource, LineLayout, blend_layer, compose_lines
from envhub.render._layout import FontMetrics, load_font, sanitize_text, wrap_text

__all__ = ["Typesetter"]

Span = tuple[int, str, RGB]  # (start column, marker, colour)


class Typesetter:
    """Draws one segment as a tile; it only memoises glyphs and markers, so it can be shared.

    Args:
        config: the look of the images.
        engine: ``"atlas"`` (default) composes glyph bitmaps kept in an atlas; ``"pillow"`` draws
            every line with ``ImageDraw.text``, which rasterises every glyph occurrence with
            FreeType (the reference renderer's way). They give the same pixels when no two
            glyphs' ink overlaps, as for printable ASCII in DejaVu Sans Mono 10 (tested);
            where anti-aliasing of neighbours overlaps (a few wide glyphs at size 12) a few
            pixels differ by at most a few levels.

    Raises:
        ConfigurationError: unknown ``engine``.
    """

    def __init__(self, config: RenderConfig, *, engine: str = "atlas") -> None:
        if engine not in ("atlas", "pillow"):
            raise ConfigurationError(
                f"Typesetter engine must be 'atlas' or 'pillow'; got {engine!r}.", engine=engine
            )
        self.config = config
        self.engine = engine
        self.font = load_font(config.font_size)
        self.metrics = FontMetrics.of(self.font)
        self.chars_per_line = self.metrics.chars_per_line(config.width)
        self.glyphs = GlyphSource(self.font, self.metrics.line_height)
        self.layout = LineLayout(self.glyphs.advance, self.chars_per_line, self.glyphs.cell_width)
        self._plain = config.text_color == (0, 0, 0) and config.background == (255, 255, 255)
        self._patches: dict[tuple[int, str], tuple[int, int, NDArray[np.uint8]]] = {}
        self._painted: dict[tuple[tuple[tuple[int, str], ...], RGB], NDArray[np.uint8]] = {}

    def wrap(self, segment: str, max_lines: int | None = None) -> list[str]:
        """The wrapped lines of ``segment`` at this font's characters per line."""
        return wrap_text(sanitize_text(segment), self.chars_per_line, max_lines)

    def tile(self, segment: str, *, margin: int = 0, max_lines: int | None = None) -> NDArray[np.uint8]:
        """Render ``segment`` alone: a ``(lines * line_height, width + 2 * margin, 3)`` RGB array.

        Equivalent to drawing the text with markers blanked in ``text_color``, then each
        highlight colour's markers on top, with ``ImageDraw.text``, line by line.

        Args:
            segment: one history line.
            margin: blank columns left and right (the page padding, so tiles stack directly).
            max_lines: draw at most this many lines (the rest could never be shown).
        """
        lines = self.wrap(segment, max_lines) or [""]
        spans = [self._highlight_spans(line) for line in lines] if self.config.highlights else []
        if self.engine == "pillow":
            return self._pillow_tile(lines, spans, margin)
        base_lines = [_blank(line, sp) for line, sp in zip(lines, spans, strict=True)] if spans else lines
        cells, edges = self.glyphs.cells(base_lines, self.chars_per_line)
        base = compose_lines(cells, self.layout, self.config.width, edges=edges, margin=margin)
        page = np.empty((*base.shape, 3), dtype=np.uint8)
        if self._plain:
            # Black on white is exactly 255 - coverage under Pillow's blend; skip the general path.
            # One channel at a time: numpy's inner loops then run along rows, not over 3 values.
            gray = 255 - base
            for channel in range(3):
                page[:, :, channel] = gray
        else:
            page[:] = self.config.background
            blend_layer(page, base, self.config.text_color)
        if any(spans):
            self._paint_markers(page, spans, margin)
        return page

    def _pillow_tile(self, lines: list[str], spans: list[list[Span]], margin: int) -> NDArray[np.uint8]:
        line_height = self.metrics.line_height
        size = (self.config.width + 2 * margin, len(lines) * line_height)
        tile = Image.new("RGB", size, self.config.background)
        text_area = Image.new("RGB", (self.config.width, size[1]), self.config.background)
        draw = ImageDraw.Draw(text_area)
        for row, line in enumerate(lines):
            text = _blank(line, spans[row]) if spans else line
            draw.text((0, row * line_height), text, fill=self.config.text_color, font=self.font)
        colors = dict.fromkeys(color for line_spans in spans for _, _, color in line_spans)
        for color in colors:
            for row, line in enumerate(lines):
                kept = [sp for sp in spans[row] if sp[2] == color]
                if kept:
                    draw.text((0, row * line_height), _keep(line, kept), fill=color, font=self.font)
        tile.paste(text_area, (margin, 0))
        return np.asarray(tile)

    def _marker_patch(self, start: int, marker: str) -> tuple[int, int, NDArray[np.uint8]]:
        """Coverage of ``marker`` drawn alone from column ``start``: ``(x0, x1, patch)``.

        A marker at a given column always has the same pixels, so patches are kept.
        """
        key = (start, marker)
        patch = self._patches.get(key)
        if patch is None:
            cells, edges = self.glyphs.cells([" " * start + marker], self.chars_per_line)
            coverage = compose_lines(cells, self.layout, self.config.width, edges=edges)
            x0 = int(self.layout.starts[start])
            last = min(start + len(marker), self.chars_per_line) - 1
            x1 = min(self.config.width, int(self.layout.starts[last]) + self.layout.cell_width)
            patch = self._patches[key] = (x0, x1, np.ascontiguousarray(coverage[:, x0:x1]))
        return patch

    def _paint_markers(self, page: NDArray[np.uint8], spans: list[list[Span]], margin: int) -> None:
        """Blend each colour's markers onto ``page``, one box per (colour, line)."""
        line_height = self.metrics.line_height
        colors = dict.fromkeys(color for line_spans in spans for _, _, color in line_spans)
        for color in colors:
            for row, line_spans in enumerate(spans):
                patches = [self._marker_patch(start, marker) for start, marker, c in line_spans if c == color]
                if not patches:
                    continue
                x0, x1, coverage = patches[0]
                if len(patches) > 1:  # one draw per colour and line: overlapping ink takes the maximum
                    x0, x1 = min(p[0] for p in patches), max(p[1] for p in patches)
                    coverage = np.zeros((line_height, x1 - x0), dtype=np.uint8)
                    for a, b, patch in patches:
                        np.maximum(coverage[:, a - x0 : b - x0], patch, out=coverage[:, a - x0 : b - x0])
                band = page[row * line_height : (row + 1) * line_height, margin + x0 : margin + x1]
                placed = tuple((start, marker) for start, marker, c in line_spans if c == color)
                self._blend_box(band, coverage, color, placed)

    def _blend_box(
        self,
        band: NDArray[np.uint8],
        coverage: NDArray[np.uint8],
        color: RGB,
        key: tuple[tuple[int, str], ...],
    ) -> None:
        """Blend a marker box; over a blank box the result only depends on the markers and their
        columns (``key``), so it is kept and copied next time."""
        blank = self._plain and not (band != 255).any()
        if blank:
            painted = self._painted.get((key, color))
            if painted is not None:
                band[:] = painted
                return
        blend_layer(band, coverage, color)
        if blank:
            self._painted[(key, color)] = band.copy()

    def _highlight_spans(self, line: str) -> list[Span]:
        spans: list[Span] = []
        taken = [False] * len(line)
        for mark in self.config.highlights:
            if not mark.marker:
                continue
            start = line.find(mark.marker)
            while start >= 0:
                end = start + len(mark.marker)
                if not any(taken[start:end]):
                    spans.append((start, mark.marker, mark.color))
                    taken[start:end] = [True] * len(mark.marker)
                start = line.find(mark.marker, end)
        return spans


def _blank(line: str, spans: list[Span]) -> str:
    chars = list(line)
    for start, marker, _ in spans:
        chars[start : start + len(marker)] = " " * len(marker)
    return "".join(chars)


def _keep(line: str, spans: list[Span]) -> str:
    chars = [" "] * len(line)
    for start, marker, _ in spans:
        chars[start : start + len(marker)] = marker
    return "".join(chars)

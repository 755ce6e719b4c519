"""Glyph rasterisation and line composition for the monospace history layout.

Pillow rasterises every glyph of every ``draw.text`` call with FreeType (it keeps no glyph
cache), which makes text the dominant cost of a history image. In a monospace font every
character occupies one cell, and Pillow places glyph ``j`` of a line at the integer pixel
``round(j * advance)`` with the same bitmap whatever its column, so a line can be composed from
per-character bitmaps: that is what this module does, reproducing ``ImageDraw.text`` pixel for
pixel on ordinary text (tests check it).

Model (documented simplifications): one character, one cell of ``line_height`` rows and
``int(advance) + 1`` columns (the extra column is the ink that overhangs into the next cell,
combined by maximum coverage); ink outside the cell is clipped (DejaVu Sans Mono's printable
ASCII fits at sizes 10 and 12); combining marks take a cell of their own.

:class:`GlyphSource` keeps each character's bitmap in an atlas filled on first use, so FreeType
rasterises a character once per font instead of once per occurrence.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFont

__all__ = ["GlyphSource", "LineLayout", "blend_layer", "compose_lines"]

_ASCII_PRINTABLE = "".join(chr(i) for i in range(32, 127))


class GlyphSource:
    """Coverage bitmaps (0 = no ink, 255 = full ink) of characters in one font.

    Args:
        font: the monospace font.
        line_height: rows of a cell.
    """

    def __init__(self, font: ImageFont.FreeTypeFont, line_height: int) -> None:
        self.font = font
        self.advance = float(font.getlength("M"))
        self.cell_height = line_height
        self.cell_width = int(self.advance) + 1
        self._index: dict[str, int] = {" ": 0}
        self._lock = threading.Lock()  # the atlas grows on first sight of a character
        self._atlas = np.zeros((128, line_height, self.cell_width), dtype=np.uint8)
        self._edge = np.zeros(128, dtype=bool)
        self._count = 1
        # Byte -> atlas index for printable ASCII, so ASCII lines map to codes in one numpy call.
        self._ascii = np.zeros(256, dtype=np.intp)
        for ch in _ASCII_PRINTABLE:
            self._ascii[ord(ch)] = self._slot(ch)

    def rasterize(self, ch: str) -> NDArray[np.uint8]:
        """FreeType's bitmap of ``ch`` drawn at the cell origin, as coverage."""
        cell = Image.new("L", (self.cell_width, self.cell_height), 0)
        ImageDraw.Draw(cell).text((0, 0), ch, fill=255, font=self.font)
        return np.asarray(cell)

    def _slot(self, ch: str) -> int:
        slot = self._index.get(ch)
        if slot is not None:
            return slot
        with self._lock:
            slot = self._index.get(ch)
            if slot is not None:
                return slot
            if self._count == len(self._atlas):
                self._atlas = np.concatenate([self._atlas, np.zeros_like(self._atlas)])
                self._edge = np.concatenate([self._edge, np.zeros_like(self._edge)])
            slot = self._count
            self._atlas[slot] = self.rasterize(ch)
            self._edge[slot] = bool(self._atlas[slot, :, -1].any())
            self._index[ch] = slot
            self._count += 1
        return slot

    def cells(self, lines: list[str], columns: int) -> tuple[NDArray[np.uint8], bool]:
        """Bitmaps for every cell of ``lines`` and whether any has ink in its last column.

        Returns:
            ``(cells, edges)``: cells of shape ``(len(lines), columns, height, width)`` (short
            lines padded with blank cells, long ones cut) and the overhang flag.
        """
        codes = np.zeros((len(lines), columns), dtype=np.intp)
        for row, line in enumerate(lines):
            line = line[:columns]
            if line.isascii():
                codes[row, : len(line)] = self._ascii[np.frombuffer(line.encode("ascii"), dtype=np.uint8)]
            else:
                codes[row, : len(line)] = [self._slot(ch) for ch in line]
        return self._atlas[codes], bool(self._edge[codes].any())


class LineLayout:
    """Where the cells of a line go: cell ``j`` starts at ``round(j * advance)`` (half up).

    That is FreeType's 26.6 pen position rounded to a pixel, as Pillow places glyphs. Cells
    whose starts are exactly ``int(advance)`` apart form *runs* that can be copied as one block.

    Args:
        advance: the font's advance in pixels.
        columns: cells per line.
        cell_width: pixel width of a cell (``int(advance) + 1``).
    """

    def __init__(self, advance: float, columns: int, cell_width: int) -> None:
        self.columns = columns
        self.cell_width = cell_width
        self.main = cell_width - 1
        self.starts = np.floor(np.arange(columns) * advance + 0.5).astype(np.intp)
        breaks = np.flatnonzero(np.diff(self.starts) != self.main) + 1
        bounds = [0, *breaks.tolist(), columns]
        self.runs = [(a, b, int(self.starts[a])) for a, b in itertools.pairwise(bounds) if b > a]
        self.span = int(self.starts[-1]) + cell_width if columns else 1


def compose_lines(
    cells: NDArray[np.uint8], layout: LineLayout, width: int, *, edges: bool, margin: int = 0
) -> NDArray[np.uint8]:
    """Lay cells out as text lines: coverage of shape ``(lines * height, width + 2 * margin)``.

    A cell's first ``int(advance)`` columns never overlap another cell's; its last column may
    land on the next cell's first column, where the larger coverage wins.

    Args:
        cells: ``(lines, columns, height, cell_width)`` bitmaps from :meth:`GlyphSource.cells`.
        layout: the column layout for ``columns`` cells.
        width: the width of the text area (ink past it is clipped).
        edges: whether any cell has ink in its last column (else that pass is skipped).
        margin: blank columns on each side of the text area (the page padding).

    Returns:
        The coverage image.
    """
    n_lines, _, height, _ = cells.shape
    main = layout.main
    out = np.zeros((n_lines, height, margin + max(width, layout.span) + margin), dtype=np.uint8)
    body = cells[..., :main].transpose(0, 2, 1, 3)  # (lines, height, columns, main)
    for a, b, x in layout.runs:
        x += margin
        out[:, :, x : x + (b - a) * main] = body[:, :, a:b].reshape(n_lines, height, (b - a) * main)
    if edges:
        edge = layout.starts + main + margin
        out[:, :, edge] = np.maximum(out[:, :, edge], cells[..., main].transpose(0, 2, 1))
    if layout.span > width:
        out[:, :, margin + width :] = 0  # clip at the text area, keep the right margin blank
    return out.reshape(n_lines * height, -1)[:, : width + 2 * margin]


def blend_layer(page: NDArray[np.uint8], coverage: NDArray[np.uint8], color: tuple[int, int, int]) -> None:
    """Paint ``color`` over ``page`` (H, W, 3) in place, with ``coverage`` (H, W) as alpha.

    Uses Pillow's integer blend, ``out = div255(out * (255 - a) + ink * a)`` with
    ``div255(v) = (((v + 128) >> 8) + v + 128) >> 8``, so a layer painted here equals the same
    layer drawn by ``ImageDraw.text`` with that fill; zero coverage leaves pixels unchanged.
    Pass views to paint a box of a larger page.
    """
    # Channel by channel in uint16 (every intermediate stays below 65536): broadcasting over
    # the 3-long colour axis would make numpy's inner loops three elements long.
    a = coverage.astype(np.uint16)
    keep = 255 - a
    for channel, ink in enumerate(color):
        v = page[:, :, channel] * keep
        v += a * int(ink) + 128
        v += v >> 8
        page[:, :, channel] = v >> 8

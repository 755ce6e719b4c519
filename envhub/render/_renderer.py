"""History -> image: AgentOCR's layout, drawn segment by segment and stacked.

A *segment* is one history line (one step). :class:`Typesetter` draws a segment alone as a
*tile* (black text on white, fixed width, with the page's side padding); :class:`HistoryRenderer`
stacks the tiles of a history vertically, reusing cached tiles when it has a
:class:`SegmentCache`, adds the top and bottom padding, and applies self-compression (to the
text area, before padding) when asked. A cached and an uncached render are pixel-identical
because both stack the same tiles; the cache only skips drawing them again.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from envhub.core.errors import ConfigurationError
from envhub.render._cache import SegmentCache
from envhub.render._compression import clean_factor, compress_image
from envhub.render._config import RenderConfig
from envhub.render._layout import split_segments
from envhub.render._tokens import vision_tokens
from envhub.render._typesetter import Typesetter

__all__ = ["HistoryRenderer", "RenderedHistory"]


@dataclass(eq=False)
class RenderedHistory:
    """One rendered history image and how it was made.

    The pixels are the primary product (a model's image processor takes arrays); the PIL image
    and the PNG bytes are made from them on first use and kept.

    Attributes:
        pixels: the RGB image as a ``(height, width, 3)`` uint8 array, padding included.
        segments: how many segments (steps) the history had.
        lines: how many wrapped text lines were drawn (after any cut).
        hits: segments taken from the cache in this render.
        misses: segments drawn in this render.
        truncated: lines past ``max_height`` were cut off.
        compression: the compression factor applied.
    """

    pixels: NDArray[np.uint8]
    segments: int
    lines: int
    hits: int
    misses: int
    truncated: bool
    compression: float
    _image: Image.Image | None = field(default=None, repr=False)
    _png: bytes | None = field(default=None, repr=False)

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels, as PIL reports sizes."""
        return int(self.pixels.shape[1]), int(self.pixels.shape[0])

    @property
    def image(self) -> Image.Image:
        """The image as a PIL RGB image (made once)."""
        if self._image is None:
            self._image = Image.fromarray(self.pixels, "RGB")
        return self._image

    def png(self) -> bytes:
        """The image as PNG bytes (encoded once)."""
        if self._png is None:
            buffer = io.BytesIO()
            self.image.save(buffer, format="PNG")
            self._png = buffer.getvalue()
        return self._png

    def vision_tokens(self) -> int:
        """Visual tokens a Qwen2.5-VL-style model spends on this image (see :func:`vision_tokens`)."""
        width, height = self.size
        return vision_tokens(width, height)


class HistoryRenderer:
    """Renders whole histories; with a cache, only segments it has not seen are drawn.

    Tiles are kept with the page's left and right padding already in place, so a page is one
    ``numpy.concatenate`` of the top padding, the tiles and the bottom padding.

    Args:
        config: the look of the images (``RenderConfig.alfworld()`` / ``.search()`` presets).
        cache: the episode's segment cache, or ``None`` to draw every segment every time.
        typesetter: a shared :class:`Typesetter` for ``config`` (saves loading the font again).

    Raises:
        ConfigurationError: ``typesetter`` was built for another config.

    Example:
        >>> renderer = HistoryRenderer(RenderConfig.alfworld(), cache=SegmentCache())
        >>> out = renderer.render(["[Observation]: You are in a room. [Action]: look"])
        >>> out.size, out.misses
        ((402, 22), 1)
    """

    def __init__(
        self,
        config: RenderConfig | None = None,
        *,
        cache: SegmentCache | None = None,
        typesetter: Typesetter | None = None,
    ) -> None:
        self.config = config if config is not None else RenderConfig()
        if typesetter is not None and typesetter.config != self.config:
            raise ConfigurationError(
                "The typesetter was built for a different RenderConfig; pass one built with the same config.",
            )
        self.typesetter = typesetter if typesetter is not None else Typesetter(self.config)
        self.cache = cache
        cfg = self.config
        self._page_width = cfg.width + 2 * cfg.padding
        self._pad_rows = self._blank(cfg.padding, self._page_width)
        self._max_lines = (cfg.max_height - 2 * cfg.padding) // self.typesetter.metrics.line_height

    def _blank(self, height: int, width: int) -> NDArray[np.uint8]:
        page = np.empty((height, width, 3), dtype=np.uint8)
        page[:] = self.config.background
        return page

    def reset(self) -> None:
        """Start a new episode: clear the segment cache (AgentOCR clears it on env reset)."""
        if self.cache is not None:
            self.cache.clear()

    def render(self, history: str | Sequence[str], *, compression: float = 1.0) -> RenderedHistory:
        """Render ``history`` (text with one step per line, or the lines) as one image.

        Args:
            history: the history; blank lines are ignored; an empty history gives AgentOCR's
                blank page, ``min_side`` x ``min_side`` plus padding. A non-empty one is as
                tall as its lines (plus padding), however few.
            compression: factor c from the agent's previous ``<compression>`` tag (1 = none).

        Returns:
            The image with its counters.
        """
        cfg = self.config
        tiles, hits, misses = self._tiles(split_segments(history))
        line_height = self.typesetter.metrics.line_height
        room = cfg.max_height - 2 * cfg.padding
        room -= room % line_height  # cut at whole lines, never squeeze
        placed: list[NDArray[np.uint8]] = []
        used = 0
        for tile in tiles:
            if used + len(tile) > room:
                if room > used:
                    placed.append(tile[: room - used])
                    used = room
                break
            placed.append(tile)
            used += len(tile)
        factor = clean_factor(compression)
        return RenderedHistory(
            pixels=self._compose(placed, used, factor),
            segments=len(tiles),
            lines=used // line_height,
            hits=hits,
            misses=misses,
            truncated=used < sum(len(tile) for tile in tiles),
            compression=factor,
        )

    def _tiles(self, segments: list[str]) -> tuple[list[NDArray[np.uint8]], int, int]:
        tiles: list[NDArray[np.uint8]] = []
        hits = misses = 0
        cache = self.cache
        for segment in segments:
            if cache is None:
                tiles.append(self._padded_tile(segment))
                misses += 1
                continue
            key = cache.key(segment)
            tile = cache.get(key)
            if tile is None:
                tile = self._padded_tile(segment)
                cache.put(key, tile)
                misses += 1
            else:
                hits += 1
            tiles.append(tile)
        return tiles, hits, misses

    def _padded_tile(self, segment: str) -> NDArray[np.uint8]:
        # One line more than a page holds: enough to know the segment was cut, never more.
        tile = self.typesetter.tile(segment, margin=self.config.padding, max_lines=self._max_lines + 1)
        tile.flags.writeable = False  # shared through the cache: nobody may draw on it
        return tile

    def _compose(self, tiles: list[NDArray[np.uint8]], used: int, factor: float) -> NDArray[np.uint8]:
        cfg = self.config
        if not tiles or used == 0:
            return self._blank(cfg.min_side + 2 * cfg.padding, cfg.min_side + 2 * cfg.padding)
        # No minimum height for a non-empty history: AgentOCR renders its segments with
        # min_height 0, so one 12 px line gives a 12 + 2 * padding page (min_side only bounds
        # the blank page and compressed sides).
        page = np.concatenate([self._pad_rows, *tiles, self._pad_rows])
        if factor == 1.0:
            return page
        pad = cfg.padding
        content = Image.fromarray(
            np.ascontiguousarray(page[pad : -pad or None, pad : pad + cfg.width]), "RGB"
        )
        small = np.asarray(compress_image(content, factor, min_side=cfg.min_side))
        out = self._blank(small.shape[0] + 2 * pad, small.shape[1] + 2 * pad)
        out[pad : pad + small.shape[0], pad : pad + small.shape[1]] = small
        return out

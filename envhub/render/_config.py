"""How history images look: the render configuration and its AgentOCR presets."""

from __future__ import annotations

from dataclasses import dataclass

from envhub.core.errors import ConfigurationError
from envhub.render._compression import MIN_SIDE

__all__ = ["RGB", "Highlight", "RenderConfig"]

RGB = tuple[int, int, int]
_BLUE: RGB = (0, 0, 255)
_RED: RGB = (255, 0, 0)


@dataclass(frozen=True)
class Highlight:
    """Draw every occurrence of ``marker`` in ``color`` (the rest of the text stays black)."""

    marker: str
    color: RGB


@dataclass(frozen=True)
class RenderConfig:
    """How history images look (defaults: AgentOCR's ALFWorld script, without colours).

    Attributes:
        font_size: DejaVu Sans Mono size in pixels (10 for ALFWorld-style, 12 for search).
        width: width of the text area in pixels (392 ALFWorld, 560 search); fixed.
        padding: white border added around the (possibly compressed) stack.
        min_side: the side of the blank page and the smallest side of a compressed image
            (28: one merged Qwen2.5-VL patch); an uncompressed history is as tall as its lines.
        max_height: the tallest image; lines past it are cut off, never squeezed.
        highlights: markers drawn in colour, e.g. ``[Observation]`` blue and ``[Action]`` red.
        text_color: colour of ordinary text.
        background: page colour.
    """

    font_size: int = 10
    width: int = 392
    padding: int = 5
    min_side: int = MIN_SIDE
    max_height: int = 4096
    highlights: tuple[Highlight, ...] = ()
    text_color: RGB = (0, 0, 0)
    background: RGB = (255, 255, 255)

    def __post_init__(self) -> None:
        checks = {
            "font_size": self.font_size >= 1,
            "width": self.width >= 1,
            "padding": self.padding >= 0,
            "min_side": self.min_side >= 1,
            "max_height": self.max_height >= self.min_side + 2 * self.padding,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ConfigurationError(
                f"RenderConfig has out-of-range values for {bad}: font_size, width and min_side must be "
                ">= 1, padding >= 0, and max_height >= min_side + 2 * padding "
                "(AgentOCR uses 10/392/5/28/4096).",
                fields=bad,
            )

    @classmethod
    def alfworld(cls, *, highlight: bool = True) -> RenderConfig:
        """AgentOCR's ALFWorld settings: font 10, width 392, ``[Observation]`` blue, ``[Action]`` red."""
        marks = (Highlight("[Observation]", _BLUE), Highlight("[Action]", _RED)) if highlight else ()
        return cls(font_size=10, width=392, highlights=marks)

    @classmethod
    def search(cls, *, highlight: bool = True) -> RenderConfig:
        """AgentOCR's search settings: font 12, width 560, ``<search>`` tags blue, ``<information>`` red."""
        marks = (
            (
                Highlight("<search>", _BLUE),
                Highlight("</search>", _BLUE),
                Highlight("<information>", _RED),
                Highlight("</information>", _RED),
            )
            if highlight
            else ()
        )
        return cls(font_size=12, width=560, highlights=marks)

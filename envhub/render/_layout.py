"""Font loading, glyph metrics and character-count wrapping for AgentOCR history images.

The layout reproduces AgentOCR's "fast mode" (``shared/reference/algorithms.md`` §5): a fixed
image width, a monospace font, and lines wrapped by *character count* (the number of average
glyph widths that fit the width), with words placed greedily and over-long words cut.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import ImageFont

from envhub.core.errors import ConfigurationError

__all__ = ["FontMetrics", "font_path", "load_font", "sanitize_text", "split_segments", "wrap_text"]

# The 88-character sample AgentOCR measures (letters, digits, a space, punctuation, brackets
# and symbols, in this order); its bounding box gives the average glyph width and the line
# height. The exact set matters: the bbox spans first to last glyph, so another sample shifts
# the average width and, at some widths, the characters per line.
_METRIC_SAMPLE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .,;:!?()[]{}@#$%^&*-_=+/\\"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def font_path() -> str:
    """Path of DejaVu Sans Mono as shipped inside matplotlib (a core dependency; nothing bundled)."""
    import matplotlib  # imported here: importing envhub.render should not load matplotlib

    return os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSansMono.ttf")


def load_font(size: int) -> ImageFont.FreeTypeFont:
    """Load DejaVu Sans Mono at ``size`` points.

    Args:
        size: font size in pixels (AgentOCR uses 10 for ALFWorld-style histories, 12 for search).

    Returns:
        The FreeType font.

    Raises:
        ConfigurationError: ``size`` is not a positive integer.
    """
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ConfigurationError(
            f"font_size must be a positive integer (e.g. 10); got {size!r}.", font_size=size
        )
    return ImageFont.truetype(font_path(), size)


@dataclass(frozen=True)
class FontMetrics:
    """The two numbers the character-count layout needs.

    Attributes:
        char_width: average advance of one glyph in pixels (bbox width of the sample / its length).
        line_height: ``int(1.2 * bbox height of the sample)``, the vertical pitch of text lines.
    """

    char_width: float
    line_height: int

    @classmethod
    def of(cls, font: ImageFont.FreeTypeFont) -> FontMetrics:
        """Measure ``font`` on the fixed 88-character sample."""
        left, top, right, bottom = font.getbbox(_METRIC_SAMPLE)
        return cls(char_width=(right - left) / len(_METRIC_SAMPLE), line_height=int((bottom - top) * 1.2))

    def chars_per_line(self, width: int) -> int:
        """How many glyphs fit in ``width`` pixels (at least 1)."""
        return max(1, int(width / self.char_width))


def sanitize_text(text: str) -> str:
    """Make any string drawable: tabs become spaces, lone surrogates and control characters U+FFFD.

    FreeType cannot encode lone surrogates and draws control characters as boxes of varying
    meaning; replacing them keeps rendering total (it never raises) and deterministic.
    """
    text = text.replace("\t", " ")
    if text.isascii():
        return _CONTROL.sub("\ufffd", text)
    text = _SURROGATE.sub("\ufffd", text)
    return "".join("\ufffd" if unicodedata.category(ch) == "Cc" and ch != "\n" else ch for ch in text)


def split_segments(history: str | Sequence[str]) -> list[str]:
    """Split a history into its segments: the stripped, non-empty lines (one per step).

    Args:
        history: the history text (lines joined by ``\\n``) or already a sequence of lines.

    Returns:
        The segments in order; duplicates are kept (they are cache hits, not removed).
    """
    lines = (
        history.split("\n") if isinstance(history, str) else [p for line in history for p in line.split("\n")]
    )
    return [s for s in (line.strip() for line in lines) if s]


def wrap_text(text: str, chars_per_line: int, max_lines: int | None = None) -> list[str]:
    """Wrap ``text`` greedily by character count.

    As AgentOCR's character-count wrap: each paragraph (newlines start one) is stripped; one
    that fits in a line is kept verbatim, inner spaces included. Longer ones are split into
    words (runs of non-space), placed on the current line while they fit; a word longer than a
    whole line is cut into ``chars_per_line``-sized pieces, each on a line of its own (the
    next word starts a new line). Blank paragraphs are dropped (segments never hold them).

    Args:
        text: the text of one segment.
        chars_per_line: the maximum characters per line (>= 1).
        max_lines: stop after this many lines (a page can only show so many; this keeps a
            pathological megabyte-long observation from costing megabytes of pixels). The
            lines returned are exactly the first ``max_lines`` of the full wrap.

    Returns:
        The wrapped lines; ``[]`` for blank text.
    """
    width = max(1, chars_per_line)
    limit = max_lines if max_lines is not None else len(text) + 1  # a bound never reached
    lines: list[str] = []
    for raw in text.split("\n"):
        paragraph = raw.strip()
        if not paragraph:
            continue
        if len(lines) >= limit:
            break
        if len(paragraph) <= width:
            lines.append(paragraph)  # the reference's fast path: no re-spacing
            continue
        current = ""
        for word in paragraph.split():
            if len(lines) >= limit:
                return lines[:limit]
            if not current and len(word) <= width:
                current = word
            elif current and len(current) + 1 + len(word) <= width:
                current = f"{current} {word}"
            else:
                if current:
                    lines.append(current)
                current = ""
                if len(word) > width:
                    stop = min(len(word), max(0, limit - len(lines)) * width)  # no more pieces than wanted
                    lines.extend(word[i : i + width] for i in range(0, stop, width))
                else:
                    current = word
        if current:
            lines.append(current)
    return lines[:limit]

"""AgentOCR self-compression: the agent shrinks its own next history image.

The factor ``c`` comes from the agent's ``<compression>c</compression>`` tag (parsed by
:func:`envhub.agent.projection.parse_compression`; NaN/inf -> 1, clamped to [1, 5]). The next
history image keeps its aspect ratio and loses about a factor ``c`` of pixel area, so about
``c`` times fewer visual tokens (``shared/reference/algorithms.md`` §5).
"""

from __future__ import annotations

import math

from PIL import Image

__all__ = ["MIN_SIDE", "clean_factor", "compress_image", "compressed_size"]

# Qwen2.5-VL's smallest image is one 28x28 merged patch; AgentOCR never goes below it.
MIN_SIDE = 28


def clean_factor(factor: float) -> float:
    """``factor`` as a float >= 1; NaN, inf, non-numbers and values below 1 become 1.

    Callers pass parsed factors, but a bad value must never enlarge an image or crash.
    """
    if not isinstance(factor, int | float) or math.isnan(factor) or math.isinf(factor) or factor < 1.0:
        return 1.0
    return float(factor)


def compressed_size(height: int, width: int, factor: float, *, min_side: int = MIN_SIDE) -> tuple[int, int]:
    """The (height, width) of an image compressed by ``factor``.

    Formula: ``(max(min_side, int(h / sqrt(c))), max(min_side, int(w / sqrt(c))))``; ``c = 1``
    (or any invalid factor) leaves the size untouched.

    Args:
        height: image height in pixels.
        width: image width in pixels.
        factor: the compression factor c (>= 1).
        min_side: the smallest side allowed (28, one merged Qwen2.5-VL patch).

    Returns:
        ``(new_height, new_width)``.
    """
    c = clean_factor(factor)
    if c == 1.0:
        return height, width
    scale = math.sqrt(c)
    return max(min_side, int(height / scale)), max(min_side, int(width / scale))


def compress_image(image: Image.Image, factor: float, *, min_side: int = MIN_SIDE) -> Image.Image:
    """Resize ``image`` to :func:`compressed_size` with Lanczos; ``c = 1`` returns it unchanged.

    Args:
        image: the stacked history image (before padding).
        factor: the compression factor c.
        min_side: the smallest side allowed.

    Returns:
        The resized image (the same object when nothing changes).
    """
    height, width = compressed_size(image.height, image.width, factor, min_side=min_side)
    if (height, width) == (image.height, image.width):
        return image
    return image.resize((width, height), Image.Resampling.LANCZOS)

"""Token accounting: what a history costs as an image versus as text.

* :func:`vision_tokens` is exact for Qwen2.5-VL-style processors: the image is resized by the
  processor's ``smart_resize`` rule (each side rounded to a multiple of 28 px, the area kept
  inside ``[min_pixels, max_pixels]``), cut into 14 px patches, and every 2x2 patches are merged
  into one token, so tokens = (h' / 28) * (w' / 28). The two ``<|vision_start|>``/``<|vision_end|>``
  delimiters are not counted.
* :func:`estimate_text_tokens` is an **estimate**: envhub ships no tokenizer files (nothing is
  downloaded), so it counts the *pre-tokens* of a Qwen2/GPT-style BPE pre-tokenizer split
  (a letter run with its leading space or punctuation mark, each single digit, a punctuation
  run, a whitespace run). BPE never merges across pre-tokens, so this is a lower bound of the
  real count; common English words are single BPE tokens, so for English environment text it
  runs a little under the true count (rare words split further).
"""

from __future__ import annotations

import math
import re

__all__ = ["estimate_text_tokens", "qwen_vl_resize", "vision_tokens"]

_FACTOR = 28  # patch 14 px x spatial merge 2
_MIN_PIXELS = 56 * 56  # Qwen2.5-VL image processor defaults
_MAX_PIXELS = 16384 * 28 * 28

# Letters are "word characters that are neither digits nor underscore" (Python's re has no \p{L}).
_PRETOKEN = re.compile(
    r"""'(?:[sdmt]|ll|ve|re)"""  # English contractions
    r"""|[^\r\n\w]?[^\W\d_]+"""  # a letter run, optionally led by one space/punctuation mark
    r"""|\d"""  # digits one by one (Qwen2 splits numbers into single digits)
    r"""| ?[^\s\w]+[\r\n]*"""  # a punctuation run
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+""",  # newlines and other whitespace runs
    re.IGNORECASE,
)


def qwen_vl_resize(
    height: int, width: int, *, min_pixels: int = _MIN_PIXELS, max_pixels: int = _MAX_PIXELS
) -> tuple[int, int]:
    """The (height, width) a Qwen2.5-VL image processor resizes an image to.

    Args:
        height: image height in pixels (>= 1).
        width: image width in pixels (>= 1).
        min_pixels: the processor's smallest area.
        max_pixels: the processor's largest area.

    Returns:
        ``(h', w')``, both multiples of 28.
    """
    height, width = max(1, int(height)), max(1, int(width))
    h_bar = max(_FACTOR, round(height / _FACTOR) * _FACTOR)
    w_bar = max(_FACTOR, round(width / _FACTOR) * _FACTOR)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(_FACTOR, math.floor(height / beta / _FACTOR) * _FACTOR)
        w_bar = max(_FACTOR, math.floor(width / beta / _FACTOR) * _FACTOR)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / _FACTOR) * _FACTOR
        w_bar = math.ceil(width * beta / _FACTOR) * _FACTOR
    return h_bar, w_bar


def vision_tokens(width: int, height: int, **limits: int) -> int:
    """Visual tokens for a ``width`` x ``height`` image: 28 px merged patches after resizing.

    Args:
        width: image width in pixels.
        height: image height in pixels.
        **limits: ``min_pixels`` / ``max_pixels`` overrides for the processor.

    Returns:
        ``(h' / 28) * (w' / 28)`` with ``(h', w') = qwen_vl_resize(height, width)``.
    """
    h_bar, w_bar = qwen_vl_resize(height, width, **limits)
    return (h_bar // _FACTOR) * (w_bar // _FACTOR)


def estimate_text_tokens(text: str) -> int:
    """Estimate the BPE tokens of ``text`` by counting Qwen2-style pre-tokens (a lower bound).

    Args:
        text: any text.

    Returns:
        The number of pre-tokens.
    """
    return sum(1 for _ in _PRETOKEN.finditer(text))

"""AgentOCR: render an agent's history as a compact image instead of ever-growing text.

* :class:`OpticalHistory` — one episode's context: memory + cached renderer + the agent's
  compression factor; ``record`` each step, ``render`` the next prompt's image.
* :class:`HistoryRenderer` — history lines -> one image (monospace, character-count wrapping,
  fixed width), built from per-segment tiles.
* :class:`SegmentCache` / :class:`TileStore` — the segment optical cache: per-episode, keyed by a
  stable content hash, inside one byte-bounded LRU per process.
* :func:`compress_image` / :func:`compressed_size` — the agent's self-compression.
* :func:`compression_scores` / :class:`CompressionReward` — the compression-aware reward.
* :func:`vision_tokens` / :func:`estimate_text_tokens` — image vs text token accounting.
* :func:`render_preset` — an env's look and line style, from its catalogue entry.

Reference semantics: ``shared/reference/algorithms.md`` §5 (AgentOCR, arXiv 2601.04786).
"""

from envhub.render._cache import CacheStats, SegmentCache, TileStore, segment_key
from envhub.render._compression import MIN_SIDE, clean_factor, compress_image, compressed_size
from envhub.render._config import Highlight, RenderConfig
from envhub.render._layout import FontMetrics, font_path, load_font, sanitize_text, split_segments, wrap_text
from envhub.render._optical import OpticalHistory
from envhub.render._preset import RenderPreset, render_preset
from envhub.render._renderer import HistoryRenderer, RenderedHistory
from envhub.render._reward import CompressionReward, compression_scores
from envhub.render._tokens import estimate_text_tokens, qwen_vl_resize, vision_tokens
from envhub.render._typesetter import Typesetter

__all__ = [
    "MIN_SIDE",
    "CacheStats",
    "CompressionReward",
    "FontMetrics",
    "Highlight",
    "HistoryRenderer",
    "OpticalHistory",
    "RenderConfig",
    "RenderPreset",
    "RenderedHistory",
    "SegmentCache",
    "TileStore",
    "Typesetter",
    "clean_factor",
    "compress_image",
    "compressed_size",
    "compression_scores",
    "estimate_text_tokens",
    "font_path",
    "load_font",
    "qwen_vl_resize",
    "render_preset",
    "sanitize_text",
    "segment_key",
    "split_segments",
    "vision_tokens",
    "wrap_text",
]

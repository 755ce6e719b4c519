"""One episode's AgentOCR context: memory, cached renderer and the pending compression factor."""

from __future__ import annotations

from envhub.agent.memory import EpisodeMemory
from envhub.render._cache import SegmentCache, TileStore
from envhub.render._compression import clean_factor
from envhub.render._config import RenderConfig
from envhub.render._renderer import HistoryRenderer, RenderedHistory
from envhub.render._typesetter import Typesetter

__all__ = ["OpticalHistory"]


class OpticalHistory:
    """The history image of one episode, step after step (AgentOCR's env-manager loop).

    After each env step, :meth:`record` the observation the action was taken in, the action
    and the agent's compression factor; :meth:`render` then gives the image for the next
    prompt: the last ``window`` steps, one line each, shrunk by the factor the agent chose at
    the previous step. :meth:`reset` starts a new episode (memory, segment cache, factor).

    Args:
        config: the look (``RenderConfig.alfworld()`` / ``RenderConfig.search()``).
        window: steps shown (AgentOCR: 50 for ALFWorld, i.e. all; 4 for search).
        style: memory line style, ``ocr`` or ``ocr-search``.
        store: the process-wide :class:`TileStore` (``None``: a private one).
        typesetter: a shared :class:`Typesetter` built for ``config``.

    Example:
        >>> history = OpticalHistory(RenderConfig.alfworld())
        >>> history.record("You are in a room.", "look", compression=2.0)
        >>> image = history.render()
        >>> image.segments, image.compression
        (1, 2.0)
    """

    def __init__(
        self,
        config: RenderConfig | None = None,
        *,
        window: int = 50,
        style: str = "ocr",
        store: TileStore | None = None,
        typesetter: Typesetter | None = None,
    ) -> None:
        self.memory = EpisodeMemory()
        self.window = window
        self.style = style
        self.renderer = HistoryRenderer(config, cache=SegmentCache(store), typesetter=typesetter)
        self.compression = 1.0
        self.memory.window(window, style)  # validates window and style now, not at the first render

    def reset(self) -> None:
        """Start a new episode."""
        self.memory.reset()
        self.renderer.reset()
        self.compression = 1.0

    def record(self, observation: str, action: str, *, compression: float = 1.0, result: str = "") -> None:
        """Add one step; ``compression`` (the agent's factor) applies to the next image."""
        self.memory.store(observation, action, result=result)
        self.compression = clean_factor(compression)

    def render(self) -> RenderedHistory:
        """The history image for the next prompt (blank 28x28 + padding before any step)."""
        lines = self.memory.window(self.window, self.style).lines
        return self.renderer.render(lines, compression=self.compression)

    def close(self) -> None:
        """Release this episode's tiles from the shared store."""
        if self.renderer.cache is not None:
            self.renderer.cache.close()

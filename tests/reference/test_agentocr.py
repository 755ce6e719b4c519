"""envhub's history renderer against AgentOCR's own ``OCRTool`` (``agentocr.json.gz``, README.md).

48 histories (ALFWorld-style episode windows from envhub's memory and random word soups with
long words, tabs, tags and non-ASCII) were rendered by AgentOCR @25736f7 with its ALFWorld
(font 10, width 392) and search (font 12, width 560) settings, padding 5 and no highlights.
envhub must produce the same pixel array (shape and SHA-256 of the RGB bytes) and wrap each
segment into the same lines. Highlights are not compared: AgentOCR draws coloured runs at
fractional x positions, which envhub does not reproduce (README.md).

One known difference, found by this fixture: a segment that holds a tab and fits on one line.
AgentOCR's fast wrap keeps such a segment verbatim and Pillow draws its tab; a longer segment
is split on whitespace, which turns tabs into spaces. envhub turns every tab into a space
first. Those histories are excluded by :func:`_keeps_a_tab`, and the tests check that they
are exactly the ones that differ, so a fix shows up as a failure here.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest

from envhub.render import HistoryRenderer, RenderConfig
from envhub.render._layout import split_segments

from .fixtures import load_json

HISTORIES: list[dict[str, Any]] = load_json("agentocr.json.gz")["histories"]
CONFIGS = {"alfworld": RenderConfig.alfworld(highlight=False), "search": RenderConfig.search(highlight=False)}


def _keeps_a_tab(history: dict[str, Any]) -> bool:
    """AgentOCR leaves a tab in a segment that fits on one line (module docstring)."""
    return any("\t" in s and len(s) <= history["chars_per_line"] for s in split_segments(history["text"]))


def test_fixture_covers_both_presets_and_multi_line_wraps() -> None:
    assert {h["preset"] for h in HISTORIES} == {"alfworld", "search"}
    assert any(len(lines) > 2 for h in HISTORIES for lines in h["wrapped"])


@pytest.mark.parametrize("preset", ["alfworld", "search"])
def test_pixels_equal_agentocrs(preset: str) -> None:
    renderer = HistoryRenderer(CONFIGS[preset])
    wrong, tabbed = [], []
    for index, history in enumerate(h for h in HISTORIES if h["preset"] == preset):
        renderer.reset()
        pixels = np.ascontiguousarray(renderer.render(history["text"]).pixels, dtype=np.uint8)
        digest = hashlib.sha256(pixels.tobytes()).hexdigest()
        if [*pixels.shape] != history["shape"] or digest != history["sha256"]:
            wrong.append(index)
        if _keeps_a_tab(history):
            tabbed.append(index)
    assert wrong == tabbed
    assert len(wrong) < len([h for h in HISTORIES if h["preset"] == preset]) // 2


@pytest.mark.parametrize("preset", ["alfworld", "search"])
def test_wrapped_lines_equal_agentocrs(preset: str) -> None:
    typesetter = HistoryRenderer(CONFIGS[preset]).typesetter
    for history in (h for h in HISTORIES if h["preset"] == preset):
        assert typesetter.chars_per_line == history["chars_per_line"]
        got = [typesetter.wrap(segment) for segment in split_segments(history["text"])]
        assert (got == history["wrapped"]) != _keeps_a_tab(history), history["text"]

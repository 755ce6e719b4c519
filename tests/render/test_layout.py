"""Font metrics and character-count wrapping."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envhub.core.errors import ConfigurationError
from envhub.render import FontMetrics, font_path, load_font, sanitize_text, split_segments, wrap_text


def test_font_is_dejavu_sans_mono_from_matplotlib() -> None:
    assert os.path.basename(font_path()) == "DejaVuSansMono.ttf"
    assert os.path.isfile(font_path())


@pytest.mark.parametrize(("size", "width", "cpl", "line_height"), [(10, 392, 65, 12), (12, 560, 77, 15)])
def test_metrics_give_the_reference_characters_per_line(
    size: int, width: int, cpl: int, line_height: int
) -> None:
    metrics = FontMetrics.of(load_font(size))
    assert metrics.chars_per_line(width) == cpl
    assert metrics.line_height == line_height


def test_average_glyph_width_is_measured_on_agentocrs_88_character_sample() -> None:
    # DejaVu Sans Mono 10: the reference's 88-character sample has a 529 px wide bbox, so
    # 529 / 88 = 6.0114 px per character. At width 6011 that gives int(999.94) = 999 characters
    # per line; a different sample (e.g. 547 px over 91 characters) would give 1000.
    metrics = FontMetrics.of(load_font(10))
    assert metrics.char_width == 529 / 88
    assert metrics.chars_per_line(6011) == 999


@pytest.mark.parametrize("size", [0, -3, 1.5, True])
def test_bad_font_size_is_a_configuration_error(size: object) -> None:
    with pytest.raises(ConfigurationError, match="font_size"):
        load_font(size)  # type: ignore[arg-type]


WRAPS = [
    ("", 10, []),
    ("   ", 10, []),
    ("look", 10, ["look"]),
    ("go to desk 1", 10, ["go to desk", "1"]),
    ("go to desk 1", 12, ["go to desk 1"]),
    ("a bb ccc dddd", 4, ["a bb", "ccc", "dddd"]),
    ("abcdefghij xy", 4, ["abcd", "efgh", "ij", "xy"]),
    ("abcdefghij", 3, ["abc", "def", "ghi", "j"]),
    ("ab abcdefg", 3, ["ab", "abc", "def", "g"]),
    ("one\ntwo three", 20, ["one", "two three"]),
    ("x  y\t z", 3, ["x y", "z"]),
    # The remainder of a cut word is a line of its own, as in AgentOCR: not "fg hi".
    ("abcdefg hi", 5, ["abcde", "fg", "hi"]),
    ("a bcdefghij k", 4, ["a", "bcde", "fghi", "j", "k"]),
    # A paragraph that fits is kept verbatim (stripped), its inner spaces included.
    ("a  b", 10, ["a  b"]),
    ("  a   b  \nc  d e f g", 5, ["a   b", "c d e", "f g"]),  # a long one is re-spaced
]


@pytest.mark.parametrize(("text", "cpl", "lines"), WRAPS)
def test_wrap_places_words_greedily_and_cuts_long_words(text: str, cpl: int, lines: list[str]) -> None:
    assert wrap_text(text, cpl) == lines


def test_wrapped_lines_never_exceed_the_limit_and_keep_every_character() -> None:
    text = "[Observation]: You arrive at countertop 1. On the countertop 1, you see a butterknife 2 " * 5
    lines = wrap_text(text, 65)
    assert all(len(line) <= 65 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


def test_segments_are_the_stripped_non_empty_lines() -> None:
    assert split_segments("  a \n\n b\n   \nb") == ["a", "b", "b"]
    assert split_segments(["a\nb", " ", "c "]) == ["a", "b", "c"]
    assert split_segments("") == []


def test_sanitize_replaces_what_freetype_cannot_draw() -> None:
    assert sanitize_text("a\tb\x00c\x7f") == "a b\ufffdc\ufffd"
    assert sanitize_text("é\ud800\x85") == "é\ufffd\ufffd"


def test_wrap_stops_at_max_lines() -> None:
    assert wrap_text("aa bb cc dd ee", 2, max_lines=3) == ["aa", "bb", "cc"]
    assert wrap_text("x" * 10_000, 10, max_lines=2) == ["x" * 10, "x" * 10]


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab cd\n")), max_size=120),
    width=st.integers(1, 12),
    max_lines=st.integers(0, 15),
)
def test_max_lines_gives_exactly_the_first_lines_of_the_full_wrap(
    text: str, width: int, max_lines: int
) -> None:
    assert wrap_text(text, width, max_lines) == wrap_text(text, width)[:max_lines]

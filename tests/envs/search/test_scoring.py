"""Search-R1's answer normalisation, EM, sub-EM and token F1."""

from __future__ import annotations

import pytest

from envhub.envs.search.scoring import SCORERS, exact_match, normalize_answer, sub_exact_match, token_f1


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("Paris", "paris"),
        ("  The   Eiffel Tower. ", "eiffel tower"),
        ("a cat, an apple & the dog!", "cat apple dog"),
        ("Theatre", "theatre"),  # articles only as whole words
        ("U.S.A.", "usa"),
        ("Zürich", "zürich"),  # non-ASCII letters stay
        ("1,234", "1234"),
        ("", ""),
        ("the", ""),
        ("Ann\tArbor\n", "ann arbor"),
    ],
)
def test_normalize_answer(text: str, normalized: str) -> None:
    assert normalize_answer(text) == normalized


def test_exact_match_against_any_golden_answer() -> None:
    golden = ["Oskar", "the river Oskar"]
    assert exact_match("The Oskar", golden) == 1.0
    assert exact_match("river oskar!", golden) == 1.0
    assert exact_match("Oskar river", golden) == 0.0
    assert exact_match("", golden) == 0.0


def test_sub_exact_match_needs_golden_inside_prediction() -> None:
    assert sub_exact_match("It was founded in 1923.", ["1923"]) == 1.0
    assert sub_exact_match("1923", ["It was 1923"]) == 0.0


def test_token_f1_is_best_over_golden_answers() -> None:
    assert token_f1("Alena Vostrik", ["Alena Vostrik"]) == 1.0
    assert token_f1("Alena", ["Alena Vostrik"]) == pytest.approx(2 / 3)
    assert token_f1("Alena", ["Boris", "Alena Vostrik"]) == pytest.approx(2 / 3)
    assert token_f1("nothing", ["Alena Vostrik"]) == 0.0
    assert token_f1("", ["x"]) == 0.0


def test_scorers_are_registered_by_name() -> None:
    assert set(SCORERS) == {"em", "subem", "f1"}

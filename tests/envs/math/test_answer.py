"""The final answer is read and compared as the authors' math env does (envhub.envs.math.answer)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from envhub.envs.math.answer import answers_equal, extract_final_answer, format_number, parse_number


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("so it is \\boxed{42}.", "42"),
        ("first \\boxed{1}, then \\boxed{2}", "2"),  # the last box
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),  # braces balanced inside the box
        ("<think>maybe \\boxed{3}</think> the answer: \\boxed{4}", "4"),  # after </think> only
        ("<think>\\boxed{3}</think> no box here", None),  # a box inside the thinking is not read
        ("<think>a</think> \\boxed{5} </think> \\boxed{6}", "5"),  # up to a second </think>
        ("no answer", None),
        ("\\boxed{7", None),  # unbalanced
        ("\\boxed 7", None),  # not followed directly by a brace
        ("\\fbox{8}", None),  # the authors read \boxed only
        ("<answer>9</answer>", None),  # nor <answer> blocks
    ],
)
def test_the_final_answer_is_the_last_box_after_the_thinking(text: str, answer: str | None) -> None:
    assert extract_final_answer(text) == answer


@pytest.mark.parametrize(
    ("given", "number"),
    [
        ("42", "42"),
        (" 42.0 ", "42"),
        ("\\$42", "42"),
        ("$42$", "42"),
        ("x = 42", "42"),
        ("\\text{42}", "42"),
        ("42 \\text{ apples}", "42"),
        ("1,000", "1000"),
        ("-3", "-3"),
        ("50\\%", "50"),
        ("90^\\circ", "90"),
        (".5", "0.5"),
    ],
)
def test_numbers_are_read_through_the_math_normalisation(given: str, number: str) -> None:
    assert parse_number(given) == Decimal(number)


@pytest.mark.parametrize("given", ["\\frac{84}{2}", "6*7", "forty-two", "", "1,00", "4 2 x = 1 = 2", "1e3"])
def test_anything_but_a_plain_number_is_not_a_number(given: str) -> None:
    assert parse_number(given) is None


def test_answers_are_equal_when_their_numbers_are() -> None:
    assert answers_equal("42.0", "42") and answers_equal("\\$1,200", "1200")
    assert not answers_equal("41", "42") and not answers_equal(None, "42")
    assert not answers_equal("\\frac{84}{2}", "42")  # as the authors' grader for an integer gold
    assert [format_number(Decimal(x)) for x in ("42.0", "100", "-0", "2.50")] == ["42", "100", "0", "2.5"]

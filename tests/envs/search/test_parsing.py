"""Action parsing: Search-R1's first-block rule and verl-agent's strict rules."""

from __future__ import annotations

import pytest

from envhub.agent.projection import project_search_answer
from envhub.envs.search.parsing import INVALID_ACTION_FEEDBACK, parse_action

# (response, Search-R1 result, strict result) as (kind, content)
TABLE = [
    ("<search>capital of France</search>", ("search", "capital of France"), ("search", "capital of France")),
    ("<answer> Paris </answer>", ("answer", "Paris"), ("answer", "Paris")),
    (
        "<think>hmm</think>\n<search>\n multi\nline \n</search>",
        ("search", "multi\nline"),
        ("search", "multi\nline"),
    ),
    # both tags: the first complete block wins; strict rejects
    ("<search>q</search> <answer>a</answer>", ("search", "q"), ("invalid", "")),
    ("<answer>a</answer> <search>q</search>", ("answer", "a"), ("invalid", "")),
    # repeated tags: the first wins; strict rejects
    ("<search>one</search><search>two</search>", ("search", "one"), ("invalid", "")),
    ("<answer>x</answer><answer>y</answer>", ("answer", "x"), ("invalid", "")),
    # none
    ("I think the answer is Paris.", ("invalid", ""), ("invalid", "")),
    ("", ("invalid", ""), ("invalid", "")),
    # unclosed or mismatched tags are not blocks
    ("<search>never closed", ("invalid", ""), ("invalid", "")),
    ("<search>q</answer>", ("invalid", ""), ("invalid", "")),
    # nested: Search-R1 cuts the response after its first </search> before matching, so an
    # answer around a search is cut open and the search wins; strict sees two tags
    ("<search>a <answer>b</answer> c</search>", ("search", "a <answer>b</answer> c"), ("invalid", "")),
    ("<answer><search>x</search></answer>", ("search", "x"), ("invalid", "")),
    ("<answer>I would <search>q</search> first</answer>", ("search", "q"), ("invalid", "")),
    # the cut is after the first </search> even when an answer block closes earlier
    ("<answer>a</answer> then <search>q</search>", ("answer", "a"), ("invalid", "")),
    # unicode content is fine under both (verl-agent's search projection has no script rule)
    (
        "<answer>Zürich – São Paulo 🙂</answer>",
        ("answer", "Zürich – São Paulo 🙂"),
        ("answer", "Zürich – São Paulo 🙂"),
    ),
    ("<answer>北京</answer>", ("answer", "北京"), ("answer", "北京")),
    ("<search>東京の人口</search>", ("search", "東京の人口"), ("search", "東京の人口")),
    # strict also cuts after the first (lower-case) </search> before looking for blocks
    ("<search>q</answer></SEARCH>", ("invalid", ""), ("invalid", "")),
    # tag case: Search-R1 is case-sensitive, verl-agent is not
    ("<SEARCH>q</SEARCH>", ("invalid", ""), ("search", "q")),
    # an empty query cannot be searched
    ("<search>   </search>", ("invalid", ""), ("invalid", "")),
    # an empty answer is still an answer (it just scores 0)
    ("<answer></answer>", ("answer", ""), ("answer", "")),
]


@pytest.mark.parametrize(("text", "expected", "_"), TABLE)
def test_search_r1_rules(text: str, expected: tuple[str, str], _: object) -> None:
    parsed = parse_action(text)
    assert (parsed.kind, parsed.content) == expected
    assert parsed.is_valid == (expected[0] != "invalid")


@pytest.mark.parametrize(("text", "_", "expected"), TABLE)
def test_strict_rules(text: str, _: object, expected: tuple[str, str]) -> None:
    parsed = parse_action(text, strict=True)
    assert (parsed.kind, parsed.content) == expected


def test_invalid_action_explains_why() -> None:
    assert "both" in parse_action("<search>q</search><answer>a</answer>", strict=True).reason
    assert "empty" in parse_action("<search></search>").reason
    assert parse_action("nothing").reason


def test_corrective_feedback_is_search_r1_text() -> None:
    assert INVALID_ACTION_FEEDBACK.startswith("\nMy previous action is invalid.")
    assert "<search> and </search>" in INVALID_ACTION_FEEDBACK
    assert INVALID_ACTION_FEEDBACK.endswith("Let me try again.\n")


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        ("<think>x</think><search>Capital of France</search>", "search"),
        ("<ANSWER> Paris </ANSWER>", "answer"),
        ("no tags", "invalid"),
        ("<search></search>", "invalid"),  # the projection forwards it; the env refuses an empty query
    ],
)
def test_agent_projection_actions_are_understood_by_the_env(output: str, kind: str) -> None:
    assert parse_action(project_search_answer(output).action).kind == kind

"""The action grammar: what parses, and the message for what does not."""

from __future__ import annotations

import pytest

from envhub.envs.timeseries.actions import Answer, Invalid, ToolCall, normalise_class, parse_action

L = 300


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("stats[0:100]", ToolCall("stats", 0, 100)),
        ("  ZSCORE [ 10 : 20 ] ", ToolCall("zscore", 10, 20)),
        ("fft[:50]", ToolCall("fft", 0, 50)),
        ("zoom[250:]", ToolCall("zoom", 250, 300)),
        ("stats[]", ToolCall("stats", 0, 300)),
        ("I think zoom[1:5] then stats[0:2]", ToolCall("zoom", 1, 5)),
        ("answer[normal]", Answer("normal", ())),
        ("answer[level shift; 10:20, 30-40]", Answer("level_shift", ((10, 20), (30, 40)))),
        ("answer[Global Point;5:6]", Answer("global_point", ((5, 6),))),
        ("<answer>[[3, 9]]</answer> <class>contextual point</class>", Answer("contextual_point", ((3, 9),))),
        ("<answer>[]</answer><class>normal</class>", Answer("normal", ())),
        ('<answer>[{"start": 1, "end": 4}]</answer><class>trend</class>', Answer("trend_change", ((1, 4),))),
    ],
)
def test_valid_actions_parse(text: str, expected: object) -> None:
    assert parse_action(text, L) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "No command found"),
        ("look around", "No command found"),
        ("answer[", "is not closed"),
        ("answer[global_point; 1:2", "is not closed"),
        ("stats[-5:10]", "must be >= 0"),
        ("stats[20:10]", "start must be smaller"),
        ("stats[5:5]", "start must be smaller"),
        ("zoom[0:301]", "must be <= 300"),
        ("stats[a:b]", "no valid range"),
        ("answer[cat]", "unknown class"),
        ("answer[shapelet; 1:x]", "is not 'a:b'"),
        ("answer[shapelet; 9:3]", "start must be smaller"),
        ("<answer>[[1,2]</answer><class>normal</class>", "list of [start, end]"),
        ("<answer>[[1,2,3]]</answer><class>normal</class>", "integer pairs"),
        ("<class>nonsense</class>", "<class> must hold"),
        ("<class>normal</class>", "needs <answer>"),
        ("<answer>" + "[" * 5000 + "</answer><class>normal</class>", "list of [start, end]"),
        ("中文" * 10_000, "No command found"),
        ("\x00\x01stats\u200b[0:1]", "No command found"),
    ],
)
def test_invalid_actions_explain_what_was_expected(text: str, message: str) -> None:
    result = parse_action(text, L)
    assert isinstance(result, Invalid)
    assert message in result.message


def test_class_aliases_normalise() -> None:
    assert normalise_class(" Seasonal ") == "seasonality_change"
    assert normalise_class("level-shift") == "level_shift"
    assert normalise_class("variance_change") == "variance_change"
    assert normalise_class("??") is None

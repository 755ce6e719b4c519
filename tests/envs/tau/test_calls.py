"""Reading agent actions: three tool-call syntaxes, messages, and malformed calls."""

from __future__ import annotations

import json

import pytest

from envhub.envs.tau.calls import parse_action

ORDER = {"get_order_details": ["order_id"], "calculate": ["expression"]}


def test_tool_call_tag_is_a_call() -> None:
    parsed = parse_action(
        'ok <tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W1"}}</tool_call>'
    )
    assert (parsed.kind, parsed.name, parsed.arguments) == ("tool", "get_order_details", {"order_id": "#W1"})


def test_openai_function_call_with_string_arguments_is_a_call() -> None:
    action = json.dumps(
        {"type": "function", "function": {"name": "calculate", "arguments": '{"expression": "1+1"}'}}
    )
    parsed = parse_action(action)
    assert (parsed.kind, parsed.name, parsed.arguments) == ("tool", "calculate", {"expression": "1+1"})


def test_openai_tool_calls_list_uses_the_first_and_counts_the_rest() -> None:
    calls = [{"function": {"name": "calculate", "arguments": {"expression": str(i)}}} for i in range(3)]
    parsed = parse_action(json.dumps({"tool_calls": calls}))
    assert parsed.arguments == {"expression": "0"}
    assert parsed.extra_calls == 2


def test_second_tool_call_tag_is_ignored() -> None:
    one = '<tool_call>{"name": "calculate", "arguments": {"expression": "1"}}</tool_call>'
    two = '<tool_call>{"name": "calculate", "arguments": {"expression": "2"}}</tool_call>'
    parsed = parse_action(one + two)
    assert parsed.arguments == {"expression": "1"}
    assert parsed.extra_calls == 1


def test_python_call_syntax_is_a_call_with_positional_arguments_mapped() -> None:
    parsed = parse_action('get_order_details("#W2")', ORDER)
    assert (parsed.kind, parsed.arguments) == ("tool", {"order_id": "#W2"})
    parsed = parse_action("calculate(expression='2 * 3')", ORDER)
    assert parsed.arguments == {"expression": "2 * 3"}


@pytest.mark.parametrize(
    "text",
    ["Hello! How can I help?", "Sure (I think) that works.", "", "{not json at all", "[1] first point"],
)
def test_plain_text_is_a_message(text: str) -> None:
    parsed = parse_action(text, ORDER)
    assert parsed.kind == "message"
    assert parsed.text == text


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>{bad json}</tool_call>",
        '{"name": "calculate", "arguments": {"expression": }',
        '<tool_call>{"arguments": {}}</tool_call>',
        '{"name": "calculate", "arguments": "{oops"}',
        '{"name": "calculate", "arguments": [1, 2]}',
        "calculate(expression=x)",
    ],
)
def test_broken_calls_are_malformed(text: str) -> None:
    assert parse_action(text, ORDER).kind == "malformed"

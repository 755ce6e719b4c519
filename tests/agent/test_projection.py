"""Projection rules, table-driven, including adversarial strings; nothing ever raises."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envhub.agent import PROJECTIONS, Projection, parse_compression, project, projector
from envhub.core.errors import ConfigurationError

THINK_ACTION = [
    # (rule, output, action, valid)
    ("alfworld", "<think>go</think><action>Go To Desk 1</action>", "go to desk 1", True),
    (
        "alfworld",
        "<think>x</think> <action>  take apple 1 from desk 1 </action> trailing",
        "take apple 1 from desk 1",
        True,
    ),
    ("alfworld", "<think>x</think><action></action>", "", True),
    ("alfworld", "<action>look</action>", "look", False),  # no think block
    ("alfworld", "<think>x</think><action>look", "<think>x</think><action>look"[-30:].lower(), False),
    # Reversed tags: the reference slices text[start + 8 : end] with end < start, giving "",
    # and flags the output valid (both tags and the think block are present).
    ("alfworld", "<think>x</think></action>look<action>", "", True),
    ("alfworld", "<THINK>x</THINK><action>look</action>", "look", False),  # think tags are case-sensitive
    ("alfworld", "<Think>x</Think><ACTION>Look</ACTION>", "look", False),  # action tags are not
    (
        "alfworld",
        "I will go to the desk 1 now and open the drawer",
        "o the desk 1 now and open the drawer"[-30:],
        False,
    ),
    ("alfworld", "<think>我</think><action>look</action>", "look", False),  # CJK ideograph
    ("alfworld", "<think>\u4e00</think><action>look</action>", "look", False),  # first of the block
    ("alfworld", "<think>\u9fff</think><action>look</action>", "look", False),  # last of the block
    (
        "alfworld",
        "<think>かな 한국</think><action>look</action>",
        "look",
        True,
    ),  # kana/Hangul: reference allows
    ("agentocr", "<think>我</think><action>look</action>", "look", False),
    (
        "alfworld",
        "<think>a</think><action>look</action><action>go</action>",
        "look",
        True,
    ),  # reference: first wins
    ("webshop", "plain text answer that is long enough to cut", "ough to cut"[-20:].rjust(20)[-20:], False),
    ("webshop", "<think>a</think><action>click[Buy Now]</action>", "click[buy now]", True),
    ("agentocr", "no tags at all in this answer", "", False),
    # AgentOCR: repeated action tags (either one, any case) -> invalid with no action at all.
    ("agentocr", "<think>a</think><action>look</action><action>go</action>", "", False),
    ("agentocr", "<think>a</think><action>look</action></ACTION>", "", False),
    ("agentocr", "<think>a</think><think>b</think><action>look</action>", "look", False),
    ("agentocr", "<think>a</think></think><action>look</action>", "look", False),
    (
        "agentocr",
        "<think>a</think><THINK><action>look</action>",
        "look",
        True,
    ),  # think counts are case-sensitive
    ("agentocr", "<think>a</think><action>look</action>", "look", True),
    ("alfworld", "", "", False),
]


@pytest.mark.parametrize(("rule", "output", "action", "valid"), THINK_ACTION)
def test_think_action_rules(rule: str, output: str, action: str, valid: bool) -> None:
    result = project(output, rule)
    if rule == "webshop" and not valid:
        assert result.action == output.lower()[-20:]
    else:
        assert result.action == action
    assert result.is_valid is valid
    assert (result.reason == "") is valid


def test_invalid_output_without_tags_sends_the_reference_tail() -> None:
    text = "x" * 10 + "GO TO DESK 1" * 5
    assert project(text, "alfworld").action == text.lower()[-30:]
    assert project(text, "webshop").action == text.lower()[-20:]


SEARCH = [
    (
        "<think>a</think><search> Velmora founder </search>",
        "<search>Velmora founder</search>",
        "search",
        True,
    ),
    ("<SEARCH>Mixed Case</Search>", "<search>Mixed Case</search>", "search", True),
    ("<answer> Ana Ruiz </answer>", "<answer>Ana Ruiz</answer>", "answer", True),
    ("<search>a</search> then <answer>b</answer>", "<search>a</search>", "search", False),  # both kinds
    ("<search>a</search><search>b</search>", "<search>a</search>", "search", False),  # repeated
    ("<answer>a</answer><answer>b</answer>", "<answer>a</answer>", "answer", False),
    ("<search>unclosed", "", "none", False),
    ("no tags", "", "none", False),
    ("<answer>北京</answer>", "<answer>北京</answer>", "answer", True),  # no CJK rule for search
    # The reference cuts the text after the first "</search>" (else "</answer>") before looking.
    ("</search>x<search>q</search>", "", "none", False),
    ("</answer> <answer>x</answer>", "", "none", False),
    ("<answer>x</answer> <search>q</search>", "<search>q</search>", "search", False),
    ("<search>a</SEARCH> b</search>", "<search>a</search>", "search", True),
]


@pytest.mark.parametrize(("output", "action", "kind", "valid"), SEARCH)
def test_search_answer_rule(output: str, action: str, kind: str, valid: bool) -> None:
    result = project(output, "search")
    assert (result.action, result.kind, result.is_valid) == (action, kind, valid)


def test_search_rule_can_require_a_think_block() -> None:
    from envhub.agent import project_search_answer

    assert not project_search_answer("<search>q</search>", require_think=True).is_valid
    assert project_search_answer("<think>t</think><search>q</search>", require_think=True).is_valid


TOOL_CALLS = [
    ('<tool_call>{"name": "get_order", "arguments": {"id": "#W1"}}</tool_call>', "get_order", {"id": "#W1"}),
    ('<tool_call>\n{"name": "f", "arguments": "{\\"x\\": 1}"}\n</tool_call> done', "f", {"x": 1}),
    ('{"type": "function", "function": {"name": "f", "arguments": "{\\"a\\": [1, 2]}"}}', "f", {"a": [1, 2]}),
    ('{"tool_calls": [{"function": {"name": "g", "arguments": {}}}, {"name": "h"}]}', "g", {}),
    ('{"function_call": {"name": "k", "arguments": "{}"}}', "k", {}),
    ('```json\n{"name": "f", "parameters": {"q": "x"}}\n```', "f", {"q": "x"}),
    ("find_user(email='a@b.c', limit=3)", "find_user", {"email": "a@b.c", "limit": 3}),
    ("tools.lookup(ids=[1, 2], deep=True)", "tools.lookup", {"ids": [1, 2], "deep": True}),
    ("list_orders()", "list_orders", {}),
]


@pytest.mark.parametrize(("output", "name", "arguments"), TOOL_CALLS)
def test_tool_call_syntaxes(output: str, name: str, arguments: dict[str, object]) -> None:
    result = project(output, "tool_call")
    assert result.is_valid and result.kind == "tool_call"
    assert result.tool_call is not None
    assert (result.tool_call.name, dict(result.tool_call.arguments)) == (name, arguments)
    assert json.loads(result.action) == {"name": name, "arguments": arguments}


@pytest.mark.parametrize(
    "output",
    [
        "<tool_call>{not json}</tool_call>",
        '<tool_call>{"arguments": {}}</tool_call>',
        '<tool_call>{"name": "f", "arguments": "[1"}</tool_call>',
        '<tool_call>{"name": "f", "arguments": [1, 2]}</tool_call>',
        '{"name": 3}',
        "f(x=open('/etc/passwd'))",
        "f(x=float('nan'))",
        "f(x={1, 2})",
    ],
)
def test_malformed_tool_calls_are_invalid_with_a_reason(output: str) -> None:
    result = project(output, "tool_call")
    assert not result.is_valid
    assert result.kind == "none"
    assert result.reason


@pytest.mark.parametrize(
    "output", ["Sure, one moment (checking).", "Thanks (really)", "Hello!", "{ not json"]
)
def test_plain_text_is_a_message_to_the_user(output: str) -> None:
    result = project(output, "tool_call")
    assert (result.kind, result.is_valid, result.action) == ("message", True, output)


COMPRESSION = [
    ("", 1.0, True),
    ("<compression>2.5</compression>", 2.5, True),
    ("<COMPRESSION> 3 </compression>", 3.0, True),
    ("<compression>0.2</compression>", 1.0, True),
    ("<compression>99</compression>", 5.0, True),
    ("<compression>nan</compression>", 1.0, True),
    ("<compression>inf</compression>", 1.0, True),
    ("<compression>-inf</compression>", 1.0, True),
    ("<compression>abc</compression>", 1.0, True),
    ("<compression>2", 1.0, True),
    # Repeated tags are invalid, but AgentOCR still reads the factor from the first pair.
    ("<compression>2</compression><compression>3</compression>", 2.0, False),
    ("<compression>2</compression></compression>", 2.0, False),
    ("</compression>3<compression>", 1.0, True),  # the first closing tag comes first: nothing read
]


@pytest.mark.parametrize(("output", "factor", "valid"), COMPRESSION)
def test_compression_tag(output: str, factor: float, valid: bool) -> None:
    tag = parse_compression(output)
    assert (tag.factor, tag.is_valid) == (factor, valid)


def test_repeated_compression_tag_makes_the_projection_invalid() -> None:
    text = "<think>a</think><action>look</action><compression>2</compression><compression>2</compression>"
    assert project(text, "alfworld").is_valid
    result = project(text, "alfworld", compression=True)
    assert not result.is_valid
    assert "compression" in result.reason
    good = project(
        "<think>a</think><action>look</action><compression>2</compression>", "agentocr", compression=True
    )
    assert (good.is_valid, good.compression) == (True, 2.0)


def test_compression_factor_is_1_where_agentocr_does_not_read_it() -> None:
    # Repeated action tags stop AgentOCR's projection before the tag is read; an answer
    # (search) always has factor 1.
    repeated = project(
        "<think>a</think><action>x</action><action>y</action><compression>3</compression>",
        "agentocr",
        compression=True,
    )
    assert (repeated.action, repeated.is_valid, repeated.compression) == ("", False, 1.0)
    answer = project("<answer>Paris</answer><compression>3</compression>", "search", compression=True)
    assert (answer.is_valid, answer.compression) == (True, 1.0)
    search = project("<search>q</search><compression>3</compression>", "search", compression=True)
    assert (search.is_valid, search.compression) == (True, 3.0)


ADVERSARIAL: list[object] = [
    None,
    b"\xff\xfe<action>look</action>",
    12345,
    "\x00" * 100,
    "\ud800<action>\udfff</action>",
    "<" * 10_000,
    "<action>" * 5_000,
    "<tool_call>" + "[" * 50_000 + "</tool_call>",
    "f(" + "(" * 5_000 + ")" * 5_000 + ")",
    "f(x=" + "[" * 3_000 + "]" * 3_000 + ")",
    "İ" * 50 + "<search>q</search>",
    "<compression>" + "9" * 5_000 + "</compression>",
    "<compression>1e400</compression>",
]


class _Hostile:
    def __str__(self) -> str:
        raise RuntimeError("no")


@pytest.mark.parametrize("rule", sorted(PROJECTIONS))
@pytest.mark.parametrize("output", [*ADVERSARIAL, _Hostile()], ids=lambda o: type(o).__name__)
def test_adversarial_outputs_never_raise(rule: str, output: object) -> None:
    result = project(output, rule, compression=True)
    assert isinstance(result, Projection)
    assert isinstance(result.action, str)
    assert 1.0 <= result.compression <= 5.0


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("<>/actionhkserwpl{}()[]=\"':,. 1中\n")) | st.characters(), max_size=200
    )
)
def test_any_text_projects_under_every_rule(text: str) -> None:
    for rule in PROJECTIONS:
        result = project(text, rule, compression=True)
        assert isinstance(result.action, str) and isinstance(result.is_valid, bool)
        assert not math.isnan(result.compression)


def test_unknown_rule_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="alfworld"):
        project("x", "sokoban")
    with pytest.raises(ConfigurationError, match="does not import"):
        project("x", "no_such_module_xyz:rule")


def test_a_rule_can_be_a_function_named_by_its_entry_point() -> None:
    rule = "envhub.agent.projection:project_search_answer"
    assert projector(rule) is PROJECTIONS["search"]
    assert project("<search>q</search>", rule) == project("<search>q</search>", "search")


@pytest.mark.parametrize(
    ("env", "rule"),
    [("alfworld", "alfworld"), ("WebShopHTML-v0", "webshop"), ("search", "search"), ("tau", "tool_call")],
)
def test_each_env_names_its_rule_on_its_catalogue_entry(env: str, rule: str) -> None:
    from envhub.envs import resolve

    assert resolve(env).projection == rule

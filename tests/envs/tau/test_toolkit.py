"""The tool dispatcher, schemas and tau-bench's ``calculate``."""

from __future__ import annotations

import pytest

from envhub.envs.tau.db import TauDB
from envhub.envs.tau.retail_tools import RETAIL_TOOLS
from envhub.envs.tau.toolkit import invoke_tool, safe_calculate, tool_schemas


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 + 2", "4.0"),
        (" (10 - 4) / 3", "2.0"),
        ("1 / 3", "0.33"),
        ("2 ** 10", "1024.0"),
        ("7 // 2", "3.0"),
        ("-3 * -3", "9.0"),
    ],
)
def test_calculate_matches_python_arithmetic_rounded_to_two_places(expression: str, expected: str) -> None:
    assert safe_calculate(expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 / 0", "Error: division by zero"),
        ("2 +", "Error: invalid syntax (<string>, line 1)"),
        ("abc", "Error: invalid characters in expression"),
        ("9 ** 9 ** 9", "Error: exponent too large"),
        # a JSON array passes tau-bench's character check and fails in its eval()
        ([], "Error: eval() arg 1 must be a string, bytes or code object"),
        (["1", "+"], "Error: eval() arg 1 must be a string, bytes or code object"),
        ({}, "Error: eval() arg 1 must be a string, bytes or code object"),
    ],
)
def test_calculate_errors_are_error_strings(expression: str, expected: str) -> None:
    assert safe_calculate(expression) == expected


def test_unknown_tool_and_bad_arguments_never_raise() -> None:
    tools = {t.name: t for t in RETAIL_TOOLS}
    db = TauDB({"orders": {}, "products": {}, "users": {}})
    assert invoke_tool(tools, db, "nope", {}).output == "Unknown action nope"
    missing = invoke_tool(tools, db, "get_order_details", {})
    assert (
        missing.output == "Error: GetOrderDetails.invoke() missing 1 required positional argument: 'order_id'"
    )
    assert invoke_tool(tools, db, "get_order_details", {"order_id": ["#W1"]}).output == (
        "Error: unhashable type: 'list'"
    )


def test_schemas_are_openai_functions_with_required_parameters() -> None:
    schemas = {s["function"]["name"]: s for s in tool_schemas(RETAIL_TOOLS)}
    cancel = schemas["cancel_pending_order"]["function"]["parameters"]
    assert cancel["required"] == ["order_id", "reason"]
    assert cancel["properties"]["reason"]["enum"] == ["no longer needed", "ordered by mistake"]
    assert schemas["list_all_product_types"]["function"]["parameters"]["properties"] == {}
    assert schemas["exchange_delivered_order_items"]["function"]["parameters"]["properties"]["item_ids"][
        "items"
    ] == {"type": "string"}

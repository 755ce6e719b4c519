"""Retail tools: outputs on the good path, and every error path returns tau-bench's
``Error: ...`` text and leaves the database unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from envhub.envs.tau.data import Domain
from envhub.envs.tau.db import TauDB
from envhub.envs.tau.retail_tools import RETAIL_TOOLS
from envhub.envs.tau.reward import changed_records
from envhub.envs.tau.toolkit import invoke_tool

from .conftest import first_order, payment_of_source

TOOLS = {t.name: t for t in RETAIL_TOOLS}

Setup = Callable[[Domain, TauDB], tuple[str, dict[str, Any], str]]


def _pending(d: Domain) -> dict[str, Any]:
    return first_order(d, "pending")


def _delivered(d: Domain) -> dict[str, Any]:
    return first_order(d, "delivered")


def _other_variant(d: Domain, item: dict[str, Any], *, pricier: bool = False) -> str:
    variants = d.tables["products"][item["product_id"]]["variants"]
    return next(
        vid
        for vid, v in variants.items()
        if vid != item["item_id"] and v["available"] and (not pricier or v["price"] > item["price"])
    )


def _drain_gift_card(db: TauDB, user_id: str) -> str:
    """Give ``user_id`` a gift card with balance 0 (set up inside the episode's db)."""
    user = db.writable("users", user_id)
    user["payment_methods"]["gift_card_0000001"] = {
        "source": "gift_card",
        "id": "gift_card_0000001",
        "balance": 0,
    }
    return "gift_card_0000001"


def _cases() -> dict[str, Setup]:
    def order_call(tool: str, status: str, expected: str, **kwargs: Any) -> Setup:
        def setup(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
            order = first_order(d, status)
            args = {"order_id": order["order_id"], **kwargs}
            return tool, args, expected

        return setup

    address = {
        "address1": "1 A St",
        "address2": "",
        "city": "X",
        "state": "CA",
        "country": "USA",
        "zip": "00000",
    }

    def exchange_bad_item(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        order = _delivered(d)
        pm = order["payment_history"][0]["payment_method_id"]
        args = {
            "order_id": order["order_id"],
            "item_ids": ["0000000000"],
            "new_item_ids": ["1"],
            "payment_method_id": pm,
        }
        return "exchange_delivered_order_items", args, "Error: 0000000000 not found"

    def swap(d: Domain, order: dict[str, Any], **over: Any) -> dict[str, Any]:
        """Arguments swapping the order's first item for another variant; ``over`` breaks one of them."""
        item = order["items"][0]
        args = {
            "order_id": order["order_id"],
            "item_ids": [item["item_id"]],
            "new_item_ids": [_other_variant(d, item)],
            "payment_method_id": order["payment_history"][0]["payment_method_id"],
        }
        args.update(over)
        return args

    def gift_card_short(tool: str, status: str, expected: str) -> Setup:
        def setup(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
            order = next(
                o
                for o in d.tables["orders"].values()
                if o["status"] == status
                and any(
                    v["available"] and v["price"] > o["items"][0]["price"]
                    for vid, v in d.tables["products"][o["items"][0]["product_id"]]["variants"].items()
                )
            )
            card = _drain_gift_card(db, order["user_id"])
            args = {
                "order_id": order["order_id"],
                "item_ids": [order["items"][0]["item_id"]],
                "new_item_ids": [_other_variant(d, order["items"][0], pricier=True)],
                "payment_method_id": card,
            }
            return tool, args, expected

        return setup

    def payment_same(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        order = next(
            o
            for o in d.tables["orders"].values()
            if o["status"] == "pending" and len(o["payment_history"]) == 1
        )
        pm = order["payment_history"][0]["payment_method_id"]
        return (
            "modify_pending_order_payment",
            {"order_id": order["order_id"], "payment_method_id": pm},
            "Error: the new payment method should be different from the current one",
        )

    def payment_two_payments(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        order = _pending(d)
        db.writable("orders", order["order_id"])["payment_history"].append(
            {"transaction_type": "payment", "amount": 1, "payment_method_id": "x"}
        )
        card = _drain_gift_card(db, order["user_id"])
        return (
            "modify_pending_order_payment",
            {"order_id": order["order_id"], "payment_method_id": card},
            "Error: there should be exactly one payment for a pending order",
        )

    def payment_gift_short(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        order = next(
            o
            for o in d.tables["orders"].values()
            if o["status"] == "pending" and len(o["payment_history"]) == 1
        )
        card = _drain_gift_card(db, order["user_id"])
        return (
            "modify_pending_order_payment",
            {"order_id": order["order_id"], "payment_method_id": card},
            "Error: insufficient gift card balance to pay for the order",
        )

    def return_wrong_method(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        order = _delivered(d)
        user = db.writable("users", order["user_id"])
        user["payment_methods"]["paypal_0000001"] = {"source": "paypal", "id": "paypal_0000001"}
        args = {"order_id": order["order_id"], "item_ids": [], "payment_method_id": "paypal_0000001"}
        return (
            "return_delivered_order_items",
            args,
            "Error: payment method should be either the original payment method or a gift card",
        )

    def return_bad_item(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        order = _delivered(d)
        pm = order["payment_history"][0]["payment_method_id"]
        args = {"order_id": order["order_id"], "item_ids": ["0000000000"], "payment_method_id": pm}
        return "return_delivered_order_items", args, "Error: some item not found"

    def plain(tool: str, args: dict[str, Any], expected: str) -> Setup:
        return lambda d, db: (tool, dict(args), expected)

    return {
        "cancel/unknown order": plain(
            "cancel_pending_order",
            {"order_id": "#W0", "reason": "no longer needed"},
            "Error: order not found",
        ),
        "cancel/not pending": order_call(
            "cancel_pending_order",
            "delivered",
            "Error: non-pending order cannot be cancelled",
            reason="no longer needed",
        ),
        "cancel/bad reason": order_call(
            "cancel_pending_order", "pending", "Error: invalid reason", reason="meh"
        ),
        "exchange/unknown order": plain(
            "exchange_delivered_order_items",
            {"order_id": "#W0", "item_ids": [], "new_item_ids": [], "payment_method_id": "x"},
            "Error: order not found",
        ),
        "exchange/not delivered": order_call(
            "exchange_delivered_order_items",
            "pending",
            "Error: non-delivered order cannot be exchanged",
            item_ids=[],
            new_item_ids=[],
            payment_method_id="x",
        ),
        "exchange/unknown item": exchange_bad_item,
        "exchange/count mismatch": lambda d, db: (
            "exchange_delivered_order_items",
            swap(d, _delivered(d), new_item_ids=[]),
            "Error: the number of items to be exchanged should match",
        ),
        "exchange/unavailable new item": lambda d, db: (
            "exchange_delivered_order_items",
            swap(d, _delivered(d), new_item_ids=["123"]),
            "Error: new item 123 not found or available",
        ),
        "exchange/unknown payment": lambda d, db: (
            "exchange_delivered_order_items",
            swap(d, _delivered(d), payment_method_id="paypal_0"),
            "Error: payment method not found",
        ),
        "exchange/gift card short": gift_card_short(
            "exchange_delivered_order_items",
            "delivered",
            "Error: insufficient gift card balance to pay for the price difference",
        ),
        "find email/unknown": plain(
            "find_user_id_by_email", {"email": "nobody@example.com"}, "Error: user not found"
        ),
        "find name zip/unknown": plain(
            "find_user_id_by_name_zip",
            {"first_name": "No", "last_name": "Body", "zip": "00000"},
            "Error: user not found",
        ),
        "order details/unknown": plain("get_order_details", {"order_id": "W123"}, "Error: order not found"),
        "product details/unknown": plain(
            "get_product_details", {"product_id": "1"}, "Error: product not found"
        ),
        "user details/unknown": plain("get_user_details", {"user_id": "nobody_1"}, "Error: user not found"),
        "address/unknown order": plain(
            "modify_pending_order_address", {"order_id": "#W0", **address}, "Error: order not found"
        ),
        "address/not pending": order_call(
            "modify_pending_order_address",
            "delivered",
            "Error: non-pending order cannot be modified",
            **address,
        ),
        "items/unknown order": plain(
            "modify_pending_order_items",
            {"order_id": "#W0", "item_ids": [], "new_item_ids": [], "payment_method_id": "x"},
            "Error: order not found",
        ),
        "items/not pending": order_call(
            "modify_pending_order_items",
            "processed",
            "Error: non-pending order cannot be modified",
            item_ids=[],
            new_item_ids=[],
            payment_method_id="x",
        ),
        "items/unknown item": lambda d, db: (
            "modify_pending_order_items",
            swap(d, _pending(d), item_ids=["42"]),
            "Error: 42 not found",
        ),
        "items/count mismatch": lambda d, db: (
            "modify_pending_order_items",
            swap(d, _pending(d), new_item_ids=["1", "2"]),
            "Error: the number of items to be exchanged should match",
        ),
        "items/unavailable new item": lambda d, db: (
            "modify_pending_order_items",
            swap(d, _pending(d), new_item_ids=["9"]),
            "Error: new item 9 not found or available",
        ),
        "items/unknown payment": lambda d, db: (
            "modify_pending_order_items",
            swap(d, _pending(d), payment_method_id="paypal_0"),
            "Error: payment method not found",
        ),
        "items/gift card short": gift_card_short(
            "modify_pending_order_items",
            "pending",
            "Error: insufficient gift card balance to pay for the new item",
        ),
        "payment/unknown order": plain(
            "modify_pending_order_payment",
            {"order_id": "#W0", "payment_method_id": "x"},
            "Error: order not found",
        ),
        "payment/not pending": order_call(
            "modify_pending_order_payment",
            "delivered",
            "Error: non-pending order cannot be modified",
            payment_method_id="x",
        ),
        "payment/unknown method": order_call(
            "modify_pending_order_payment",
            "pending",
            "Error: payment method not found",
            payment_method_id="paypal_0",
        ),
        "payment/same method": payment_same,
        "payment/two payments": payment_two_payments,
        "payment/gift card short": payment_gift_short,
        "user address/unknown user": plain(
            "modify_user_address", {"user_id": "nobody_1", **address}, "Error: user not found"
        ),
        "return/unknown order": plain(
            "return_delivered_order_items",
            {"order_id": "#W0", "item_ids": [], "payment_method_id": "x"},
            "Error: order not found",
        ),
        "return/not delivered": order_call(
            "return_delivered_order_items",
            "pending",
            "Error: non-delivered order cannot be returned",
            item_ids=[],
            payment_method_id="x",
        ),
        "return/unknown payment": order_call(
            "return_delivered_order_items",
            "delivered",
            "Error: payment method not found",
            item_ids=[],
            payment_method_id="y",
        ),
        "return/wrong method": return_wrong_method,
        "return/unknown item": return_bad_item,
        "calculate/invalid characters": plain(
            "calculate", {"expression": "import os"}, "Error: invalid characters in expression"
        ),
        "calculate/division by zero": plain("calculate", {"expression": "1 / 0"}, "Error: division by zero"),
        "think/unexpected argument": plain(
            "think",
            {"thought": "x", "mood": "calm"},
            "Error: Think.invoke() got an unexpected keyword argument 'mood'",
        ),
    }


CASES = _cases()


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_path_returns_error_text_and_leaves_db_unchanged(retail: Domain, case: str) -> None:
    db = TauDB(retail.tables)
    name, args, expected = CASES[case](retail, db)
    before = changed_records(retail, db)
    result = invoke_tool(TOOLS, db, name, args)
    assert result.output == expected
    assert result.error
    assert changed_records(retail, db) == before


def test_every_retail_tool_has_an_error_case_or_none_exists() -> None:
    covered = {case.split("/")[0] for case in CASES}
    assert len(TOOLS) == 16
    assert covered >= {
        "cancel",
        "exchange",
        "items",
        "payment",
        "address",
        "user address",
        "return",
        "calculate",
    }


def test_cancel_refunds_gift_card_at_once(retail: Domain) -> None:
    order = next(
        o
        for o in retail.tables["orders"].values()
        if o["status"] == "pending" and "gift_card" in o["payment_history"][0]["payment_method_id"]
    )
    card = order["payment_history"][0]["payment_method_id"]
    balance = retail.tables["users"][order["user_id"]]["payment_methods"][card]["balance"]
    db = TauDB(retail.tables)
    out = invoke_tool(
        TOOLS, db, "cancel_pending_order", {"order_id": order["order_id"], "reason": "ordered by mistake"}
    )
    record = json.loads(out.output)
    assert record["status"] == "cancelled"
    assert record["payment_history"][-1]["transaction_type"] == "refund"
    expected = round(balance + order["payment_history"][0]["amount"], 2)
    assert db.get("users", order["user_id"])["payment_methods"][card]["balance"] == expected
    # The shared base is untouched: the change lives in the episode's copy only.
    assert retail.tables["orders"][order["order_id"]]["status"] == "pending"
    assert retail.tables["users"][order["user_id"]]["payment_methods"][card]["balance"] == balance


def test_list_all_product_types_is_sorted_by_name(retail: Domain) -> None:
    listing = json.loads(invoke_tool(TOOLS, TauDB(retail.tables), "list_all_product_types", {}).output)
    assert len(listing) == 50
    assert list(listing) == sorted(listing)


def test_find_user_by_email_ignores_case(retail: Domain) -> None:
    user_id, profile = next(iter(retail.tables["users"].items()))
    out = invoke_tool(
        TOOLS, TauDB(retail.tables), "find_user_id_by_email", {"email": profile["email"].upper()}
    )
    assert out.output == user_id


def test_payment_helper_finds_gift_cards(retail: Domain) -> None:
    user_id = next(iter(retail.tables["users"]))
    found = payment_of_source(retail, user_id, "gift_card")
    assert found is None or found.startswith("gift_card_")

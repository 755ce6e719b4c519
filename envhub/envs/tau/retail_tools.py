"""The 16 tools of tau-bench's retail domain, reimplemented over :class:`TauDB`.

Semantics, check order, rounding and output strings follow tau-bench's retail tools
(sierra-research/tau-bench ``tau_bench/envs/retail/tools``), because the reward compares
final databases and agents see the exact texts. Read tools return ``json.dumps`` of the
record; write tools change records (through ``db.writable``) and return the changed record.
"""

from __future__ import annotations

import json
from typing import Any

from envhub.envs.tau.db import TauDB
from envhub.envs.tau.toolkit import CALCULATE_TOOL, THINK_TOOL, TRANSFER_TOOL, Param, ToolSpec

__all__ = [
    "RETAIL_TOOLS",
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_order_details",
    "get_product_details",
    "get_user_details",
    "list_all_product_types",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
]

_ORDER_ID = Param("order_id", "string", "The order id, e.g. '#W0000000' (it starts with '#').")
_ITEM_LIST = {"type": "string"}
_PAYMENT = Param(
    "payment_method_id",
    "string",
    "A payment method id from the user's profile or order, e.g. 'gift_card_0000000' or "
    "'credit_card_0000000'.",
)
_ADDRESS = (
    Param("address1", "string", "First address line, e.g. '123 Main St'."),
    Param("address2", "string", "Second address line, e.g. 'Apt 1', or ''."),
    Param("city", "string", "City, e.g. 'San Francisco'."),
    Param("state", "string", "State, e.g. 'CA'."),
    Param("country", "string", "Country, e.g. 'USA'."),
    Param("zip", "string", "Zip code, e.g. '12345'."),
)


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, Any]:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "state": state,
        "country": country,
        "zip": zip,
    }


def find_user_id_by_email(db: TauDB, email: str) -> str:
    for user_id, profile in db.items("users"):
        if profile["email"].lower() == email.lower():
            return str(user_id)
    return "Error: user not found"


def find_user_id_by_name_zip(db: TauDB, first_name: str, last_name: str, zip: str) -> str:
    for user_id, profile in db.items("users"):
        name = profile["name"]
        if (
            name["first_name"].lower() == first_name.lower()
            and name["last_name"].lower() == last_name.lower()
            and profile["address"]["zip"] == zip
        ):
            return str(user_id)
    return "Error: user not found"


def get_order_details(db: TauDB, order_id: str) -> str:
    if db.has("orders", order_id):
        return json.dumps(db.get("orders", order_id))
    return "Error: order not found"


def get_product_details(db: TauDB, product_id: str) -> str:
    if db.has("products", product_id):
        return json.dumps(db.get("products", product_id))
    return "Error: product not found"


def get_user_details(db: TauDB, user_id: str) -> str:
    if db.has("users", user_id):
        return json.dumps(db.get("users", user_id))
    return "Error: user not found"


def list_all_product_types(db: TauDB) -> str:
    by_name = {product["name"]: product["product_id"] for product in db.values("products")}
    return json.dumps(dict(sorted(by_name.items())))


def cancel_pending_order(db: TauDB, order_id: str, reason: str) -> str:
    if not db.has("orders", order_id):
        return "Error: order not found"
    if db.get("orders", order_id)["status"] != "pending":
        return "Error: non-pending order cannot be cancelled"
    if reason not in ("no longer needed", "ordered by mistake"):
        return "Error: invalid reason"
    order = db.writable("orders", order_id)
    refunds = []
    for payment in order["payment_history"]:
        method_id = payment["payment_method_id"]
        refunds.append(
            {"transaction_type": "refund", "amount": payment["amount"], "payment_method_id": method_id}
        )
        if "gift_card" in method_id:  # gift cards are refunded at once, other methods in 5-7 days
            method = db.writable("users", order["user_id"])["payment_methods"][method_id]
            method["balance"] = round(method["balance"] + payment["amount"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return json.dumps(order)


def _item_swap_price(db: TauDB, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]) -> Any:
    """Price difference of swapping items for variants of the same product, or an error string."""
    owned = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > owned.count(item_id):
            return f"Error: {item_id} not found"
    if len(item_ids) != len(new_item_ids):
        return "Error: the number of items to be exchanged should match"
    diff: Any = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        item = next(i for i in order["items"] if i["item_id"] == item_id)
        variants = db.get("products", item["product_id"])["variants"]
        if not (new_item_id in variants and variants[new_item_id]["available"]):
            return f"Error: new item {new_item_id} not found or available"
        diff += variants[new_item_id]["price"] - item["price"]
    return diff


def exchange_delivered_order_items(
    db: TauDB, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> str:
    if not db.has("orders", order_id):
        return "Error: order not found"
    order = db.get("orders", order_id)
    if order["status"] != "delivered":
        return "Error: non-delivered order cannot be exchanged"
    diff = _item_swap_price(db, order, item_ids, new_item_ids)
    if isinstance(diff, str):
        return diff
    diff = round(diff, 2)
    methods = db.get("users", order["user_id"])["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < diff:
        return "Error: insufficient gift card balance to pay for the price difference"
    order = db.writable("orders", order_id)
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff
    return json.dumps(order)


def modify_pending_order_items(
    db: TauDB, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> str:
    if not db.has("orders", order_id):
        return "Error: order not found"
    order = db.get("orders", order_id)
    if order["status"] != "pending":
        return "Error: non-pending order cannot be modified"
    diff = _item_swap_price(db, order, item_ids, new_item_ids)
    if isinstance(diff, str):
        return diff
    methods = db.get("users", order["user_id"])["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    if methods[payment_method_id]["source"] == "gift_card" and methods[payment_method_id]["balance"] < diff:
        return "Error: insufficient gift card balance to pay for the new item"
    order = db.writable("orders", order_id)
    # tau-bench records the unrounded difference and rounds only the gift card balance.
    order["payment_history"].append(
        {
            "transaction_type": "payment" if diff > 0 else "refund",
            "amount": abs(diff),
            "payment_method_id": payment_method_id,
        }
    )
    if methods[payment_method_id]["source"] == "gift_card":
        method = db.writable("users", order["user_id"])["payment_methods"][payment_method_id]
        method["balance"] = round(method["balance"] - diff, 2)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        # Each swap takes the first item still carrying the old id, so duplicates map in order.
        item = next(i for i in order["items"] if i["item_id"] == item_id)
        variant = db.get("products", item["product_id"])["variants"][new_item_id]
        item["item_id"] = new_item_id
        item["price"] = variant["price"]
        item["options"] = variant["options"]
    order["status"] = "pending (item modified)"
    return json.dumps(order)


def modify_pending_order_payment(db: TauDB, order_id: str, payment_method_id: str) -> str:
    if not db.has("orders", order_id):
        return "Error: order not found"
    order = db.get("orders", order_id)
    if order["status"] != "pending":
        return "Error: non-pending order cannot be modified"
    methods = db.get("users", order["user_id"])["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    history = order["payment_history"]
    if len(history) > 1 or history[0]["transaction_type"] != "payment":
        return "Error: there should be exactly one payment for a pending order"
    old_method_id = history[0]["payment_method_id"]
    if old_method_id == payment_method_id:
        return "Error: the new payment method should be different from the current one"
    amount = history[0]["amount"]
    if methods[payment_method_id]["source"] == "gift_card" and methods[payment_method_id]["balance"] < amount:
        return "Error: insufficient gift card balance to pay for the order"
    order = db.writable("orders", order_id)
    order["payment_history"].extend(
        [
            {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
            {"transaction_type": "refund", "amount": amount, "payment_method_id": old_method_id},
        ]
    )
    if methods[payment_method_id]["source"] == "gift_card":
        method = db.writable("users", order["user_id"])["payment_methods"][payment_method_id]
        method["balance"] = round(method["balance"] - amount, 2)
    if "gift_card" in old_method_id:
        method = db.writable("users", order["user_id"])["payment_methods"][old_method_id]
        method["balance"] = round(method["balance"] + amount, 2)
    return json.dumps(order)


def modify_pending_order_address(
    db: TauDB, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> str:
    if not db.has("orders", order_id):
        return "Error: order not found"
    if db.get("orders", order_id)["status"] != "pending":
        return "Error: non-pending order cannot be modified"
    order = db.writable("orders", order_id)
    order["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(order)


def modify_user_address(
    db: TauDB, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> str:
    if not db.has("users", user_id):
        return "Error: user not found"
    user = db.writable("users", user_id)
    user["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(user)


def return_delivered_order_items(
    db: TauDB, order_id: str, item_ids: list[str], payment_method_id: str
) -> str:
    if not db.has("orders", order_id):
        return "Error: order not found"
    order = db.get("orders", order_id)
    if order["status"] != "delivered":
        return "Error: non-delivered order cannot be returned"
    if payment_method_id not in db.get("users", order["user_id"])["payment_methods"]:
        return "Error: payment method not found"
    if (
        "gift_card" not in payment_method_id
        and payment_method_id != order["payment_history"][0]["payment_method_id"]
    ):
        return "Error: payment method should be either the original payment method or a gift card"
    owned = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > owned.count(item_id):
            return "Error: some item not found"
    order = db.writable("orders", order_id)
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return json.dumps(order)


_ITEMS = "Item ids such as '1008292230'; an id may repeat."
_CONFIRM = " Explain the details to the user and get an explicit yes before calling."

#: The retail tools, in tau-bench's order.
RETAIL_TOOLS: tuple[ToolSpec, ...] = (
    CALCULATE_TOOL,
    ToolSpec(
        "cancel_pending_order",
        "Cancel a pending order (processed or delivered orders cannot be cancelled) and refund it: gift card "
        "payments are refunded at once, other methods in 5-7 business days. Returns the updated order."
        + _CONFIRM,
        cancel_pending_order,
        (
            _ORDER_ID,
            Param(
                "reason",
                "string",
                "Why the order is cancelled.",
                enum=("no longer needed", "ordered by mistake"),
            ),
        ),
        writes=True,
    ),
    ToolSpec(
        "exchange_delivered_order_items",
        "Exchange items of a delivered order for other variants of the same products. A delivered order "
        "can be returned or exchanged only once." + _CONFIRM,
        exchange_delivered_order_items,
        (
            _ORDER_ID,
            Param("item_ids", "array", "The items to exchange. " + _ITEMS, items=_ITEM_LIST),
            Param(
                "new_item_ids",
                "array",
                "The new items, position by position, same product. " + _ITEMS,
                items=_ITEM_LIST,
            ),
            _PAYMENT,
        ),
        writes=True,
    ),
    ToolSpec(
        "find_user_id_by_email",
        "Look up a user id by email; returns an error if no user has that email.",
        find_user_id_by_email,
        (Param("email", "string", "The user's email, e.g. 'someone@example.com'."),),
    ),
    ToolSpec(
        "find_user_id_by_name_zip",
        "Look up a user id by first name, last name and zip code; returns an error if there is no match. "
        "Prefer find_user_id_by_email; use this when the email is unknown or not found.",
        find_user_id_by_name_zip,
        (
            Param("first_name", "string", "First name, e.g. 'John'."),
            Param("last_name", "string", "Last name, e.g. 'Doe'."),
            Param("zip", "string", "Zip code, e.g. '12345'."),
        ),
    ),
    ToolSpec(
        "get_order_details", "Return the status and details of an order.", get_order_details, (_ORDER_ID,)
    ),
    ToolSpec(
        "get_product_details",
        "Return a product's inventory details, including every variant.",
        get_product_details,
        (Param("product_id", "string", "The product id, e.g. '6086499569' (not an item id)."),),
    ),
    ToolSpec(
        "get_user_details",
        "Return a user's details: profile, addresses, payment methods and orders.",
        get_user_details,
        (Param("user_id", "string", "The user id, e.g. 'sara_doe_496'."),),
    ),
    ToolSpec(
        "list_all_product_types",
        "List the store's 50 product types as a map from product name to product id.",
        list_all_product_types,
        (),
    ),
    ToolSpec(
        "modify_pending_order_address",
        "Change the shipping address of a pending order." + _CONFIRM,
        modify_pending_order_address,
        (_ORDER_ID, *_ADDRESS),
        writes=True,
    ),
    ToolSpec(
        "modify_pending_order_items",
        "Swap items of a pending order for other variants of the same products; possible only once per order."
        + _CONFIRM,
        modify_pending_order_items,
        (
            _ORDER_ID,
            Param("item_ids", "array", "The items to modify. " + _ITEMS, items=_ITEM_LIST),
            Param(
                "new_item_ids",
                "array",
                "The new items, position by position, same product. " + _ITEMS,
                items=_ITEM_LIST,
            ),
            _PAYMENT,
        ),
        writes=True,
    ),
    ToolSpec(
        "modify_pending_order_payment",
        "Change the payment method of a pending order." + _CONFIRM,
        modify_pending_order_payment,
        (_ORDER_ID, _PAYMENT),
        writes=True,
    ),
    ToolSpec(
        "modify_user_address",
        "Change a user's default address." + _CONFIRM,
        modify_user_address,
        (Param("user_id", "string", "The user id, e.g. 'sara_doe_496'."), *_ADDRESS),
        writes=True,
    ),
    ToolSpec(
        "return_delivered_order_items",
        "Request a return of items of a delivered order; the status becomes 'return requested' and the "
        "user gets an email on how to send them back." + _CONFIRM,
        return_delivered_order_items,
        (
            _ORDER_ID,
            Param("item_ids", "array", "The items to return. " + _ITEMS, items=_ITEM_LIST),
            Param(
                "payment_method_id",
                "string",
                "Where the refund goes: the original payment method or a gift card, "
                "e.g. 'gift_card_0000000'.",
            ),
        ),
        writes=True,
    ),
    THINK_TOOL,
    TRANSFER_TOOL,
)

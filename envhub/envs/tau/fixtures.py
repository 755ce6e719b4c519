"""envhub's generator of small tau-bench-format data (for tests and offline demos).

:func:`write_fixture_data` writes a data root in the layout :mod:`envhub.envs.tau.data`
reads (``retail/`` and ``airline/`` with ``data/*.json``, ``tasks_*.py`` and ``wiki.md``):
a few users, orders, products, flights and reservations with the same fields as tau-bench's,
and tasks whose gold actions are consistent with that data. Everything is derived from
``seed``; the policies are short summaries written for envhub.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["write_fixture_data"]

_FIRST = ("Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo")
_LAST = ("Kim", "Lopez", "Moreau", "Nakamura", "Okafor", "Patel", "Quinn", "Rossi")
_PRODUCTS = (
    ("T-Shirt", "color", ("red", "blue", "black")),
    ("Water Bottle", "capacity", ("500ml", "750ml", "1000ml")),
    ("Desk Lamp", "brightness", ("low", "medium", "high")),
)
_STATUSES = ("pending", "delivered", "processed", "cancelled")
_RETAIL_POLICY = """# Retail agent policy (envhub fixture)

- Authenticate the user by email, or by name and zip code, before anything else.
- Before any change to the database, list the details and get an explicit "yes".
- Pending orders can be cancelled or modified; delivered orders can be returned or exchanged.
- Make at most one tool call at a time, and do not reply to the user in the same turn.
- Transfer to a human agent only when the request is outside these rules.
"""
_AIRLINE_POLICY = """# Airline agent policy (envhub fixture)

- Get the user id before anything else.
- Before booking, changing or cancelling, list the details and get an explicit "yes".
- Each passenger has a free checked-bag allowance; extra bags cost 50 dollars each.
- Make at most one tool call at a time, and do not reply to the user in the same turn.
"""


def _digits(rng: np.random.Generator, n: int) -> str:
    return "".join(str(d) for d in rng.integers(0, 10, size=n))


def _retail(rng: np.random.Generator, n_users: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    products: dict[str, Any] = {}
    for name, option, values in _PRODUCTS:
        pid = _digits(rng, 10)
        variants = {}
        for value in values:
            iid = _digits(rng, 10)
            price = round(float(rng.uniform(10, 200)), 2)
            variants[iid] = {"item_id": iid, "options": {option: value}, "available": True, "price": price}
        products[pid] = {"name": name, "product_id": pid, "variants": variants}
    users: dict[str, Any] = {}
    orders: dict[str, Any] = {}
    tasks: list[dict[str, Any]] = []
    for i in range(n_users):
        first, last = _FIRST[i % len(_FIRST)], _LAST[i % len(_LAST)]
        uid = f"{first.lower()}_{last.lower()}_{1000 + i}"
        zip_code = f"{10000 + 37 * i:05d}"
        address = {
            "address1": f"{i + 1} Main St",
            "address2": "",
            "city": "Springfield",
            "country": "USA",
            "state": "IL",
            "zip": zip_code,
        }
        card, gift = f"credit_card_{_digits(rng, 7)}", f"gift_card_{_digits(rng, 7)}"
        methods = {
            card: {"source": "credit_card", "brand": "visa", "last_four": _digits(rng, 4), "id": card},
            gift: {"source": "gift_card", "balance": round(float(rng.uniform(0, 300)), 2), "id": gift},
        }
        user_orders = []
        for k in range(2):
            oid = f"#W{_digits(rng, 7)}"
            product = list(products.values())[(i + k) % len(products)]
            iid, variant = next(iter(product["variants"].items()))
            item = {
                "name": product["name"],
                "product_id": product["product_id"],
                "item_id": iid,
                "price": variant["price"],
                "options": dict(variant["options"]),
            }
            orders[oid] = {
                "order_id": oid,
                "user_id": uid,
                "address": dict(address),
                "items": [item],
                "fulfillments": [],
                "status": _STATUSES[(i + k) % len(_STATUSES)],
                "payment_history": [
                    {"transaction_type": "payment", "amount": variant["price"], "payment_method_id": card}
                ],
            }
            user_orders.append(oid)
        users[uid] = {
            "user_id": uid,
            "name": {"first_name": first, "last_name": last},
            "address": address,
            "email": f"{first.lower()}.{last.lower()}{i}@example.com",
            "payment_methods": methods,
            "orders": user_orders,
        }
        tasks.append(_retail_task(users[uid], [orders[o] for o in user_orders]))
    return {"orders": orders, "products": products, "users": users}, tasks


def _retail_task(user: dict[str, Any], orders: list[dict[str, Any]]) -> dict[str, Any]:
    name = user["name"]
    who = f"You are {name['first_name']} {name['last_name']} in {user['address']['zip']}."
    find = {
        "name": "find_user_id_by_name_zip",
        "kwargs": {
            "first_name": name["first_name"],
            "last_name": name["last_name"],
            "zip": user["address"]["zip"],
        },
    }
    for order in orders:
        if order["status"] == "pending":
            cancel = {"order_id": order["order_id"], "reason": "no longer needed"}
            return {
                "user_id": user["user_id"],
                "actions": [find, {"name": "cancel_pending_order", "kwargs": cancel}],
                "instruction": f"{who} You want to cancel order {order['order_id']} because you no longer "
                "need it.",
                "outputs": [],
            }
        if order["status"] == "delivered":
            ret = {
                "order_id": order["order_id"],
                "item_ids": [order["items"][0]["item_id"]],
                "payment_method_id": order["payment_history"][0]["payment_method_id"],
            }
            return {
                "user_id": user["user_id"],
                "actions": [find, {"name": "return_delivered_order_items", "kwargs": ret}],
                "instruction": f"{who} You want to return everything in order {order['order_id']} to the "
                "original payment method.",
                "outputs": [],
            }
    return {
        "user_id": user["user_id"],
        "actions": [find],
        "outputs": ["3"],
        "instruction": f"{who} You want to know how many T-Shirt options the store has.",
    }


def _airline(rng: np.random.Generator, n_users: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    routes = (("SFO", "JFK"), ("JFK", "SFO"), ("LAX", "SEA"), ("SEA", "LAX"))
    flights: dict[str, Any] = {}
    for n, (origin, destination) in enumerate(routes, start=1):
        dates = {}
        for day in range(15, 21):
            prices = {
                "basic_economy": int(rng.integers(50, 100)),
                "economy": int(rng.integers(100, 200)),
                "business": int(rng.integers(300, 600)),
            }
            seats = {cabin: int(rng.integers(1, 10)) for cabin in prices}
            dates[f"2024-05-{day}"] = {"status": "available", "available_seats": seats, "prices": prices}
        flights[f"HAT{n:03d}"] = {
            "flight_number": f"HAT{n:03d}",
            "origin": origin,
            "destination": destination,
            "scheduled_departure_time_est": "08:00:00",
            "scheduled_arrival_time_est": "11:00:00",
            "dates": dates,
        }
    users: dict[str, Any] = {}
    reservations: dict[str, Any] = {}
    tasks: list[dict[str, Any]] = []
    for i in range(n_users):
        first, last = _FIRST[-1 - i % len(_FIRST)], _LAST[-1 - i % len(_LAST)]
        uid = f"{first.lower()}_{last.lower()}_{2000 + i}"
        card = f"credit_card_{_digits(rng, 7)}"
        rid = "".join(rng.choice(list("ABCDEFGHJKLMNPQRSTUVWXYZ")) for _ in range(3)) + _digits(rng, 3)
        number = f"HAT{i % len(routes) + 1:03d}"
        flight = flights[number]
        price = flight["dates"]["2024-05-16"]["prices"]["economy"]
        reservations[rid] = {
            "reservation_id": rid,
            "user_id": uid,
            "origin": flight["origin"],
            "destination": flight["destination"],
            "flight_type": "one_way",
            "cabin": "economy",
            "flights": [
                {
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "flight_number": number,
                    "date": "2024-05-16",
                    "price": price,
                }
            ],
            "passengers": [{"first_name": first, "last_name": last, "dob": "1990-01-01"}],
            "payment_history": [{"payment_id": card, "amount": price}],
            "created_at": "2024-05-01T10:00:00",
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "insurance": "no",
        }
        users[uid] = {
            "name": {"first_name": first, "last_name": last},
            "dob": "1990-01-01",
            "email": f"{first.lower()}.{last.lower()}@example.com",
            "membership": "regular",
            "payment_methods": {
                card: {"source": "credit_card", "brand": "visa", "last_four": _digits(rng, 4), "id": card}
            },
            "saved_passengers": [],
            "reservations": [rid],
        }
        if i % 2 == 0:
            kwargs = {"reservation_id": rid, "total_baggages": 2, "nonfree_baggages": 1, "payment_id": card}
            tasks.append(
                {
                    "user_id": uid,
                    "actions": [{"name": "update_reservation_baggages", "kwargs": kwargs}],
                    "instruction": f"Your user id is {uid}. You want to add two checked bags, one of them "
                    f"paid, to reservation {rid}, paying with {card}.",
                    "outputs": [],
                }
            )
        else:
            tasks.append(
                {
                    "user_id": uid,
                    "actions": [{"name": "cancel_reservation", "kwargs": {"reservation_id": rid}}],
                    "instruction": f"Your user id is {uid}. You want to cancel reservation {rid}.",
                    "outputs": [],
                }
            )
    return {"flights": flights, "reservations": reservations, "users": users}, tasks


def _task_source(variable: str, tasks: list[dict[str, Any]]) -> str:
    """Python source in tau-bench's task-file format (a list of ``Task(...)`` calls)."""
    lines = ["from tau_bench.types import Action, Task", "", f"{variable} = ["]
    for task in tasks:
        actions = ", ".join(f"Action(name={a['name']!r}, kwargs={a['kwargs']!r})" for a in task["actions"])
        lines.append(
            f"    Task(annotator='envhub', user_id={task['user_id']!r}, instruction={task['instruction']!r}, "
            f"actions=[{actions}], outputs={task['outputs']!r}),"
        )
    lines.append("]")
    return "\n".join(lines) + "\n"


def _write_domain(
    folder: Path, tables: dict[str, Any], policy: str, splits: dict[str, list[dict[str, Any]]]
) -> None:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    for table, records in tables.items():
        (folder / "data" / f"{table}.json").write_text(json.dumps(records, indent=1), encoding="utf-8")
    (folder / "wiki.md").write_text(policy, encoding="utf-8")
    for split, tasks in splits.items():
        (folder / f"tasks_{split}.py").write_text(
            _task_source(f"TASKS_{split.upper()}", tasks), encoding="utf-8"
        )


def write_fixture_data(root: str | Path, *, seed: int = 0, n_users: int = 6) -> Path:
    """Write a small tau-bench-format data root (use it as ``TAU_DATA`` or ``data_dir=``).

    Args:
        root: directory to create (or fill).
        seed: seed of the generator; the same seed writes the same files.
        n_users: users per domain (one task each).

    Returns:
        ``root`` as a :class:`~pathlib.Path`.
    """
    root = Path(root)
    rng = np.random.default_rng(seed)
    retail_tables, retail_tasks = _retail(rng, n_users)
    half = max(1, len(retail_tasks) // 2)
    _write_domain(
        root / "retail",
        retail_tables,
        _RETAIL_POLICY,
        {"test": retail_tasks[:half], "train": retail_tasks[half:]},
    )
    airline_tables, airline_tasks = _airline(rng, n_users)
    _write_domain(root / "airline", airline_tables, _AIRLINE_POLICY, {"test": airline_tasks})
    return root

"""Airline tools: good paths, and every error path returns tau-bench's ``Error: ...`` text
and leaves the database unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from envhub.envs.tau.airline_tools import AIRLINE_TOOLS
from envhub.envs.tau.data import Domain
from envhub.envs.tau.db import TauDB
from envhub.envs.tau.reward import changed_records
from envhub.envs.tau.toolkit import invoke_tool

TOOLS = {t.name: t for t in AIRLINE_TOOLS}

Setup = Callable[[Domain, TauDB], tuple[str, dict[str, Any], str]]


def _reservation(d: Domain) -> dict[str, Any]:
    return next(r for r in d.tables["reservations"].values() if r.get("status") != "cancelled")


def _available(d: Domain) -> tuple[str, str, dict[str, Any]]:
    """A (flight number, date, day record) with status available."""
    for number, flight in d.tables["flights"].items():
        for date, day in flight["dates"].items():
            if day["status"] == "available":
                return number, date, day
    raise AssertionError("no available flight")


def _not_available(d: Domain) -> tuple[str, str]:
    for number, flight in d.tables["flights"].items():
        for date, day in flight["dates"].items():
            if day["status"] != "available":
                return number, date
    raise AssertionError("no unavailable flight")


def _add_method(db: TauDB, user_id: str, source: str, amount: float = 0) -> str:
    pid = f"{source}_9999999"
    db.writable("users", user_id)["payment_methods"][pid] = {"source": source, "amount": amount, "id": pid}
    return pid


def _booking(d: Domain, **over: Any) -> dict[str, Any]:
    number, date, _ = _available(d)
    user_id = next(iter(d.tables["users"]))
    args = {
        "user_id": user_id,
        "origin": "SFO",
        "destination": "JFK",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": number, "date": date}],
        "passengers": [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}],
        "payment_methods": [],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    args.update(over)
    return args


def _cases() -> dict[str, Setup]:
    def plain(tool: str, args: dict[str, Any], expected: str) -> Setup:
        return lambda d, db: (tool, dict(args), expected)

    def book_unavailable(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        number, date = _not_available(d)
        args = _booking(d, flights=[{"flight_number": number, "date": date}])
        return "book_reservation", args, f"Error: flight {number} not available on date {date}"

    def book_no_seats(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        number, date, _ = _available(d)
        db.writable("flights", number)["dates"][date]["available_seats"]["economy"] = 0
        return "book_reservation", _booking(d), f"Error: not enough seats on flight {number}"

    def book_unknown_payment(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        args = _booking(d, payment_methods=[{"payment_id": "credit_card_0", "amount": 1}])
        return "book_reservation", args, "Error: payment method credit_card_0 not found"

    def book_short_balance(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        args = _booking(d)
        pid = _add_method(db, args["user_id"], "gift_card", 0)
        args["payment_methods"] = [{"payment_id": pid, "amount": 10}]
        return "book_reservation", args, f"Error: not enough balance in payment method {pid}"

    def book_wrong_total(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        args = _booking(d)
        _, _, day = _available(d)
        pid = _add_method(db, args["user_id"], "credit_card")
        args["payment_methods"] = [{"payment_id": pid, "amount": 1}]
        price = day["prices"]["economy"]
        return (
            "book_reservation",
            args,
            f"Error: payment amount does not add up, total price is {price}, but paid 1",
        )

    def res_call(tool: str, expected: str, **kwargs: Any) -> Setup:
        def setup(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
            return tool, {"reservation_id": _reservation(d)["reservation_id"], **kwargs}, expected

        return setup

    def res_with_method(tool: str, source: str, expected: str, **kwargs: Any) -> Setup:
        def setup(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
            reservation = _reservation(d)
            pid = _add_method(db, reservation["user_id"], source, 0)
            args = {"reservation_id": reservation["reservation_id"], "payment_id": pid, **kwargs}
            if tool == "update_reservation_flights":
                args["flights"] = [
                    {"flight_number": f["flight_number"], "date": f["date"]} for f in reservation["flights"]
                ]
                args["cabin"] = "business" if reservation["cabin"] != "business" else "economy"
            return tool, args, expected

        return setup

    def certificate_limit(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        user_id = next(iter(d.tables["users"]))
        methods = db.writable("users", user_id)["payment_methods"]
        for n in (3221322, 3221323, 3221324):
            methods[f"certificate_{n}"] = {"source": "certificate", "amount": 1, "id": f"certificate_{n}"}
        return (
            "send_certificate",
            {"user_id": user_id, "amount": 50},
            "Error: the user already holds the maximum number of certificates",
        )

    def passengers_mismatch(d: Domain, db: TauDB) -> tuple[str, dict[str, Any], str]:
        reservation = _reservation(d)
        args = {"reservation_id": reservation["reservation_id"], "passengers": reservation["passengers"] * 2}
        return "update_reservation_passengers", args, "Error: number of passengers does not match"

    flights_arg = {"cabin": "economy", "flights": [{"flight_number": "HAT999", "date": "2024-05-20"}]}
    return {
        "book/unknown user": lambda d, db: (
            "book_reservation",
            _booking(d, user_id="nobody_1"),
            "Error: user not found",
        ),
        "book/unknown flight": lambda d, db: (
            "book_reservation",
            _booking(d, flights=[{"flight_number": "HAT999", "date": "2024-05-20"}]),
            "Error: flight HAT999 not found",
        ),
        "book/no such date": lambda d, db: (
            "book_reservation",
            _booking(d, flights=[{"flight_number": "HAT001", "date": "2030-01-01"}]),
            "Error: flight HAT001 not found on date 2030-01-01",
        ),
        "book/not available": book_unavailable,
        "book/no seats": book_no_seats,
        "book/unknown payment": book_unknown_payment,
        "book/short balance": book_short_balance,
        "book/wrong total": book_wrong_total,
        "cancel/unknown reservation": plain(
            "cancel_reservation", {"reservation_id": "ZZZZZZ"}, "Error: reservation not found"
        ),
        "reservation details/unknown": plain(
            "get_reservation_details", {"reservation_id": "ZZZZZZ"}, "Error: user not found"
        ),
        "user details/unknown": plain("get_user_details", {"user_id": "nobody_1"}, "Error: user not found"),
        "certificate/unknown user": plain(
            "send_certificate", {"user_id": "nobody_1", "amount": 50}, "Error: user not found"
        ),
        "certificate/limit reached": certificate_limit,
        "baggages/unknown reservation": plain(
            "update_reservation_baggages",
            {"reservation_id": "ZZZZZZ", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "x"},
            "Error: reservation not found",
        ),
        "baggages/unknown payment": res_call(
            "update_reservation_baggages",
            "Error: payment method not found",
            total_baggages=1,
            nonfree_baggages=0,
            payment_id="credit_card_0",
        ),
        "baggages/certificate": res_with_method(
            "update_reservation_baggages",
            "certificate",
            "Error: certificate cannot be used to update reservation",
            total_baggages=9,
            nonfree_baggages=9,
        ),
        "baggages/gift card short": res_with_method(
            "update_reservation_baggages",
            "gift_card",
            "Error: gift card balance is not enough",
            total_baggages=9,
            nonfree_baggages=9,
        ),
        "flights/unknown reservation": plain(
            "update_reservation_flights",
            {"reservation_id": "ZZZZZZ", "payment_id": "x", **flights_arg},
            "Error: reservation not found",
        ),
        "flights/unknown flight": res_call(
            "update_reservation_flights", "Error: flight HAT999 not found", payment_id="x", **flights_arg
        ),
        "flights/certificate": res_with_method(
            "update_reservation_flights",
            "certificate",
            "Error: certificate cannot be used to update reservation",
        ),
        "passengers/unknown reservation": plain(
            "update_reservation_passengers",
            {"reservation_id": "ZZZZZZ", "passengers": []},
            "Error: reservation not found",
        ),
        "passengers/count mismatch": passengers_mismatch,
        "calculate/invalid characters": plain(
            "calculate", {"expression": "2 ** x"}, "Error: invalid characters in expression"
        ),
        "search/missing argument": plain(
            "search_direct_flight",
            {"origin": "JFK"},
            "Error: SearchDirectFlight.invoke() missing 2 required positional "
            "arguments: 'destination' and 'date'",
        ),
    }


CASES = _cases()


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_path_returns_error_text_and_leaves_db_unchanged(airline: Domain, case: str) -> None:
    db = TauDB(airline.tables)
    name, args, expected = CASES[case](airline, db)
    before = changed_records(airline, db)
    result = invoke_tool(TOOLS, db, name, args)
    assert result.output == expected
    assert changed_records(airline, db) == before


def test_airline_has_fourteen_tools_with_openai_schemas() -> None:
    assert len(AIRLINE_TOOLS) == 14
    for tool in AIRLINE_TOOLS:
        schema = tool.schema()
        assert schema["type"] == "function"
        assert schema["function"]["name"] == tool.name
        assert schema["function"]["parameters"]["type"] == "object"


def test_booking_uses_hathat_then_hathau(airline: Domain) -> None:
    number, date, day = _available(airline)
    db = TauDB(airline.tables)
    args = _booking(airline)
    pid = _add_method(db, args["user_id"], "credit_card")
    args["payment_methods"] = [{"payment_id": pid, "amount": day["prices"]["economy"]}]
    first = json.loads(invoke_tool(TOOLS, db, "book_reservation", json.loads(json.dumps(args))).output)
    second = json.loads(invoke_tool(TOOLS, db, "book_reservation", json.loads(json.dumps(args))).output)
    assert (first["reservation_id"], second["reservation_id"]) == ("HATHAT", "HATHAU")
    assert db.get("users", args["user_id"])["reservations"][-2:] == ["HATHAT", "HATHAU"]
    assert "HATHAT" not in airline.tables["reservations"]


def test_cancel_appends_negative_refunds(airline: Domain) -> None:
    reservation = _reservation(airline)
    db = TauDB(airline.tables)
    out = json.loads(
        invoke_tool(TOOLS, db, "cancel_reservation", {"reservation_id": reservation["reservation_id"]}).output
    )
    assert out["status"] == "cancelled"
    paid = reservation["payment_history"]
    assert out["payment_history"][len(paid) :] == [
        {"payment_id": p["payment_id"], "amount": -p["amount"]} for p in paid
    ]


def test_unknown_reservation_detail_text_is_tau_bench_s(airline: Domain) -> None:
    out = invoke_tool(TOOLS, TauDB(airline.tables), "get_reservation_details", {"reservation_id": "nope"})
    assert out.output == "Error: user not found"

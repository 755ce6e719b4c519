"""The 14 tools of tau-bench's airline domain, reimplemented over :class:`TauDB`.

Semantics, check order and output strings follow tau-bench's airline tools
(sierra-research/tau-bench ``tau_bench/envs/airline/tools``), including their quirks, since
the reward compares final databases: new reservations get the ids HATHAT/HATHAU/HATHAV,
``get_reservation_details`` says "user not found" for an unknown reservation, flight changes
do not touch seat counts, gift-card amounts are not rounded, and the one-stop search reads
the second leg's fare data for the first leg's date.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from envhub.envs.tau.db import TauDB
from envhub.envs.tau.toolkit import CALCULATE_TOOL, THINK_TOOL, TRANSFER_TOOL, Param, ToolSpec

__all__ = [
    "AIRLINE_TOOLS",
    "AIRPORTS",
    "book_reservation",
    "cancel_reservation",
    "get_reservation_details",
    "get_user_details",
    "list_all_airports",
    "search_direct_flight",
    "search_onestop_flight",
    "send_certificate",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
]

#: tau-bench's airport list: IATA code -> city, in its order.
AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
    ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
    ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"),
    ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"),
    ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
)  # fmt: skip

_NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
_CERTIFICATE_NUMBERS = (3221322, 3221323, 3221324)
_CREATED_AT = "2024-05-15T15:00:00"


def get_user_details(db: TauDB, user_id: str) -> str:
    if db.has("users", user_id):
        return json.dumps(db.get("users", user_id))
    return "Error: user not found"


def get_reservation_details(db: TauDB, reservation_id: str) -> str:
    if db.has("reservations", reservation_id):
        return json.dumps(db.get("reservations", reservation_id))
    return "Error: user not found"  # sic: tau-bench's text for an unknown reservation


def list_all_airports(db: TauDB) -> str:
    return json.dumps(dict(AIRPORTS))


def _fare(flight: dict[str, Any], date: str) -> dict[str, Any]:
    """A flight's static fields merged with its data for one date."""
    out = {k: v for k, v in flight.items() if k != "dates"}
    out.update(flight["dates"][date])
    return out


def search_direct_flight(db: TauDB, origin: str, destination: str, date: str) -> str:
    results = []
    for flight in db.values("flights"):
        if (
            flight["origin"] == origin
            and flight["destination"] == destination
            and date in flight["dates"]
            and flight["dates"][date]["status"] == "available"
        ):
            results.append(_fare(flight, date))
    return json.dumps(results)


def search_onestop_flight(db: TauDB, origin: str, destination: str, date: str) -> str:
    results = []
    for first in db.values("flights"):
        if first["origin"] != origin:
            continue
        for second in db.values("flights"):
            if second["destination"] != destination or first["destination"] != second["origin"]:
                continue
            # tau-bench's next-day date is not zero-padded and assumes May 2024.
            date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first["scheduled_arrival_time_est"] else date
            if first["scheduled_arrival_time_est"] > second["scheduled_departure_time_est"]:
                continue
            if (
                date in first["dates"]
                and date2 in second["dates"]
                and first["dates"][date]["status"] == "available"
                and second["dates"][date2]["status"] == "available"
            ):
                leg1 = _fare(first, date)
                leg1["date"] = date
                leg2 = _fare(second, date)  # sic: tau-bench merges the second leg's data for `date`
                leg2["date"] = date2
                results.append([leg1, leg2])
    return json.dumps(results)


def _price_new_flights(db: TauDB, flights: list[dict[str, Any]], cabin: str, n_passengers: int) -> Any:
    """Fill price/origin/destination of each flight in place; the total price, or an error string."""
    total: Any = 0
    for flight in flights:
        number = flight["flight_number"]
        if not db.has("flights", number):
            return f"Error: flight {number} not found"
        data = db.get("flights", number)
        if flight["date"] not in data["dates"]:
            return f"Error: flight {number} not found on date {flight['date']}"
        on_date = data["dates"][flight["date"]]
        if on_date["status"] != "available":
            return f"Error: flight {number} not available on date {flight['date']}"
        if on_date["available_seats"][cabin] < n_passengers:
            return f"Error: not enough seats on flight {number}"
        flight["price"] = on_date["prices"][cabin]
        flight["origin"] = data["origin"]
        flight["destination"] = data["destination"]
        total += flight["price"] * n_passengers
    return total


def book_reservation(
    db: TauDB,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: str,
    cabin: str,
    flights: list[dict[str, Any]],
    passengers: list[dict[str, Any]],
    payment_methods: list[dict[str, Any]],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: str,
) -> str:
    if not db.has("users", user_id):
        return "Error: user not found"
    reservation_id = next(
        (r for r in _NEW_RESERVATION_IDS[:-1] if not db.has("reservations", r)), _NEW_RESERVATION_IDS[-1]
    )
    reservation: dict[str, Any] = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": copy.deepcopy(flights),
        "passengers": passengers,
        "payment_history": payment_methods,
        "created_at": _CREATED_AT,
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    total = _price_new_flights(db, reservation["flights"], cabin, len(passengers))
    if isinstance(total, str):
        return total
    if insurance == "yes":
        total += 30 * len(passengers)
    total += 50 * nonfree_baggages
    methods = db.get("users", user_id)["payment_methods"]
    for payment in payment_methods:
        payment_id, amount = payment["payment_id"], payment["amount"]
        if payment_id not in methods:
            return f"Error: payment method {payment_id} not found"
        if (
            methods[payment_id]["source"] in ("gift_card", "certificate")
            and methods[payment_id]["amount"] < amount
        ):
            return f"Error: not enough balance in payment method {payment_id}"
    paid = sum(payment["amount"] for payment in payment_methods)
    if paid != total:
        return f"Error: payment amount does not add up, total price is {total}, but paid {paid}"
    user = db.writable("users", user_id)
    for payment in payment_methods:
        payment_id = payment["payment_id"]
        if user["payment_methods"][payment_id]["source"] == "gift_card":
            user["payment_methods"][payment_id]["amount"] -= payment["amount"]
        elif user["payment_methods"][payment_id]["source"] == "certificate":
            del user["payment_methods"][payment_id]  # certificates are single use
    db.insert("reservations", reservation_id, reservation)
    user["reservations"].append(reservation_id)
    return json.dumps(reservation)


def cancel_reservation(db: TauDB, reservation_id: str) -> str:
    if not db.has("reservations", reservation_id):
        return "Error: reservation not found"
    reservation = db.writable("reservations", reservation_id)
    refunds = [
        {"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]
    ]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return json.dumps(reservation)


def send_certificate(db: TauDB, user_id: str, amount: int) -> str:
    if not db.has("users", user_id):
        return "Error: user not found"
    methods = db.get("users", user_id)["payment_methods"]
    for number in _CERTIFICATE_NUMBERS:
        payment_id = f"certificate_{number}"
        if payment_id not in methods:
            user = db.writable("users", user_id)
            user["payment_methods"][payment_id] = {
                "source": "certificate",
                "amount": amount,
                "id": payment_id,
            }
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    # tau-bench returns None here (and its env then fails); envhub says what happened instead.
    return "Error: the user already holds the maximum number of certificates"


def _charge(db: TauDB, user_id: str, payment_id: str, total: Any) -> str | None:
    """Check a payment method for a reservation update; an error string, or None if it can pay."""
    methods = db.get("users", user_id)["payment_methods"]
    if payment_id not in methods:
        return "Error: payment method not found"
    if methods[payment_id]["source"] == "certificate":
        return "Error: certificate cannot be used to update reservation"
    if methods[payment_id]["source"] == "gift_card" and methods[payment_id]["amount"] < total:
        return "Error: gift card balance is not enough"
    return None


def _pay(db: TauDB, reservation: dict[str, Any], payment_id: str, total: Any) -> None:
    if db.get("users", reservation["user_id"])["payment_methods"][payment_id]["source"] == "gift_card":
        db.writable("users", reservation["user_id"])["payment_methods"][payment_id]["amount"] -= total


def update_reservation_baggages(
    db: TauDB, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
) -> str:
    if not db.has("reservations", reservation_id):
        return "Error: reservation not found"
    current = db.get("reservations", reservation_id)
    total = 50 * max(0, nonfree_baggages - current["nonfree_baggages"])
    error = _charge(db, current["user_id"], payment_id, total)
    if error is not None:
        return error
    reservation = db.writable("reservations", reservation_id)
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    _pay(db, reservation, payment_id, total)
    if total != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total})
    return json.dumps(reservation)


def update_reservation_flights(
    db: TauDB, reservation_id: str, cabin: str, flights: list[dict[str, Any]], payment_id: str
) -> str:
    if not db.has("reservations", reservation_id):
        return "Error: reservation not found"
    current = db.get("reservations", reservation_id)
    n_passengers = len(current["passengers"])
    flights = copy.deepcopy(flights)
    total: Any = 0
    for flight in flights:
        # A segment kept as it is (same flight, date and cabin) keeps its booked price.
        kept = [
            f
            for f in current["flights"]
            if f["flight_number"] == flight["flight_number"]
            and f["date"] == flight["date"]
            and cabin == current["cabin"]
        ]
        if kept:
            total += kept[0]["price"] * n_passengers
            flight.update(
                price=kept[0]["price"], origin=kept[0]["origin"], destination=kept[0]["destination"]
            )
            continue
        priced = _price_new_flights(db, [flight], cabin, n_passengers)
        if isinstance(priced, str):
            return priced
        total += priced
    total -= sum(f["price"] for f in current["flights"]) * n_passengers
    error = _charge(db, current["user_id"], payment_id, total)
    if error is not None:
        return error
    reservation = db.writable("reservations", reservation_id)
    _pay(db, reservation, payment_id, total)
    reservation["flights"] = flights
    if total != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total})
    # Like tau-bench, seat counts in the flight table are not updated.
    return json.dumps(reservation)


def update_reservation_passengers(db: TauDB, reservation_id: str, passengers: list[dict[str, Any]]) -> str:
    if not db.has("reservations", reservation_id):
        return "Error: reservation not found"
    if len(passengers) != len(db.get("reservations", reservation_id)["passengers"]):
        return "Error: number of passengers does not match"
    reservation = db.writable("reservations", reservation_id)
    reservation["passengers"] = passengers
    return json.dumps(reservation)


_RESERVATION_ID = Param("reservation_id", "string", "The reservation id, e.g. 'ZFA04Y'.")
_USER_ID = Param("user_id", "string", "The user id, e.g. 'sara_doe_496'.")
_CABIN = Param("cabin", "string", "The cabin class.", enum=("basic_economy", "economy", "business"))
_PAYMENT_ID = Param(
    "payment_id",
    "string",
    "A payment id from the user's profile, e.g. 'credit_card_7815826' or 'gift_card_7815826'.",
)
_FLIGHT_ITEMS = {
    "type": "object",
    "properties": {
        "flight_number": {"type": "string", "description": "Flight number, e.g. 'HAT001'."},
        "date": {"type": "string", "description": "Flight date as 'YYYY-MM-DD', e.g. '2024-05-01'."},
    },
    "required": ["flight_number", "date"],
}
_PASSENGER_ITEMS = {
    "type": "object",
    "properties": {
        "first_name": {"type": "string", "description": "First name, e.g. 'Noah'."},
        "last_name": {"type": "string", "description": "Last name, e.g. 'Brown'."},
        "dob": {"type": "string", "description": "Date of birth as 'YYYY-MM-DD', e.g. '1990-01-01'."},
    },
    "required": ["first_name", "last_name", "dob"],
}
_PAYMENT_ITEMS = {
    "type": "object",
    "properties": {
        "payment_id": {"type": "string", "description": "A payment id from the user's profile."},
        "amount": {"type": "number", "description": "The amount charged to it."},
    },
    "required": ["payment_id", "amount"],
}
_SEARCH = (
    Param("origin", "string", "Origin airport code, e.g. 'JFK'."),
    Param("destination", "string", "Destination airport code, e.g. 'LAX'."),
    Param("date", "string", "Travel date as 'YYYY-MM-DD', e.g. '2024-05-01'."),
)

#: The airline tools, in tau-bench's order.
AIRLINE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "book_reservation",
        "Book a new reservation for a user and charge its payment methods.",
        book_reservation,
        (
            _USER_ID,
            Param("origin", "string", "Origin airport code, e.g. 'SFO'."),
            Param("destination", "string", "Destination airport code, e.g. 'JFK'."),
            Param("flight_type", "string", "Trip type.", enum=("one_way", "round_trip")),
            _CABIN,
            Param("flights", "array", "Every flight segment of the trip.", items=_FLIGHT_ITEMS),
            Param("passengers", "array", "Every passenger.", items=_PASSENGER_ITEMS),
            Param(
                "payment_methods",
                "array",
                "How the total is split over payment methods.",
                items=_PAYMENT_ITEMS,
            ),
            Param("total_baggages", "integer", "Checked bags in total."),
            Param("nonfree_baggages", "integer", "Checked bags that are paid for."),
            Param("insurance", "string", "Travel insurance.", enum=("yes", "no")),
        ),
        writes=True,
    ),
    CALCULATE_TOOL,
    ToolSpec(
        "cancel_reservation",
        "Cancel a whole reservation and refund every payment.",
        cancel_reservation,
        (_RESERVATION_ID,),
        writes=True,
    ),
    ToolSpec(
        "get_reservation_details",
        "Return the details of a reservation.",
        get_reservation_details,
        (_RESERVATION_ID,),
    ),
    ToolSpec(
        "get_user_details",
        "Return a user's details, including payment methods and reservations.",
        get_user_details,
        (_USER_ID,),
    ),
    ToolSpec(
        "list_all_airports", "List every airport as a map from IATA code to city.", list_all_airports, ()
    ),
    ToolSpec(
        "search_direct_flight",
        "Find direct flights between two airports on a date.",
        search_direct_flight,
        _SEARCH,
    ),
    ToolSpec(
        "search_onestop_flight",
        "Find one-stop connections between two airports on a date.",
        search_onestop_flight,
        _SEARCH,
    ),
    ToolSpec(
        "send_certificate",
        "Give a user a travel certificate (compensation). Use with care.",
        send_certificate,
        (_USER_ID, Param("amount", "number", "The certificate amount.")),
        writes=True,
    ),
    THINK_TOOL,
    TRANSFER_TOOL,
    ToolSpec(
        "update_reservation_baggages",
        "Change the checked-bag counts of a reservation, charging extra paid bags.",
        update_reservation_baggages,
        (
            _RESERVATION_ID,
            Param("total_baggages", "integer", "New total of checked bags."),
            Param("nonfree_baggages", "integer", "New number of paid checked bags."),
            _PAYMENT_ID,
        ),
        writes=True,
    ),
    ToolSpec(
        "update_reservation_flights",
        "Replace the flights (and possibly the cabin) of a reservation, charging or refunding the "
        "difference.",
        update_reservation_flights,
        (
            _RESERVATION_ID,
            _CABIN,
            Param(
                "flights",
                "array",
                "Every segment of the whole new itinerary, unchanged ones included.",
                items=_FLIGHT_ITEMS,
            ),
            _PAYMENT_ID,
        ),
        writes=True,
    ),
    ToolSpec(
        "update_reservation_passengers",
        "Replace the passenger details of a reservation (the number of passengers cannot change).",
        update_reservation_passengers,
        (_RESERVATION_ID, Param("passengers", "array", "Every passenger.", items=_PASSENGER_ITEMS)),
        writes=True,
    ),
)

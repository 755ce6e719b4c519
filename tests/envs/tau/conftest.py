"""Shared fixtures for the tau-bench env tests: the parsed domains and records picked from them."""

from __future__ import annotations

from typing import Any

import pytest

from envhub.envs.tau.data import Domain, load_domain


@pytest.fixture(scope="session")
def retail() -> Domain:
    return load_domain("retail")


@pytest.fixture(scope="session")
def airline() -> Domain:
    return load_domain("airline")


def first_order(domain: Domain, status: str) -> dict[str, Any]:
    """The first order with ``status`` (tests pick real records instead of hard-coding ids)."""
    return next(o for o in domain.tables["orders"].values() if o["status"] == status)


def payment_of_source(domain: Domain, user_id: str, source: str) -> str | None:
    """A payment method id of ``user_id`` with the given source, if the user has one."""
    methods = domain.tables["users"][user_id]["payment_methods"]
    return next((pid for pid, m in methods.items() if m["source"] == source), None)

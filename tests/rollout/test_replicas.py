"""expand_replicas: one URL per address of a name, everything else kept as given.

A name resolving to several addresses is exercised against Docker's real DNS for a scaled
compose service in tests/fleet/test_compose.py; here, the rules, with the DNS answers given.
"""

from __future__ import annotations

import socket

import pytest

from envhub.core.errors import ConfigurationError
from envhub.rollout.replicas import expand_replicas


def test_addresses_and_single_address_names_are_kept_in_order_without_duplicates() -> None:
    urls = ["http://10.0.0.2:8000", "http://127.0.0.1:8001", "http://10.0.0.2:8000", "http://[::1]:8002"]
    assert expand_replicas(urls) == ["http://10.0.0.2:8000", "http://127.0.0.1:8001", "http://[::1]:8002"]


def test_https_urls_are_not_expanded_because_the_certificate_names_the_host() -> None:
    assert expand_replicas(["https://envs.example.invalid"]) == ["https://envs.example.invalid"]


def test_a_name_that_does_not_resolve_is_a_configuration_error_naming_it() -> None:
    with pytest.raises(ConfigurationError, match=r"no-such-replica\.invalid"):
        expand_replicas(["http://no-such-replica.invalid:8000"])


def _dns(answers: dict[str, list[str]]):
    """A resolver that answers from ``answers`` (what Docker's DNS gives for a scaled service)."""
    real = socket.getaddrinfo

    def getaddrinfo(host: str, port: object, *args: object, **kwargs: object) -> list[tuple]:
        if host not in answers:
            return real(host, port, *args, **kwargs)  # type: ignore[arg-type]
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answers[host]
        ]

    return getaddrinfo


def test_a_name_with_several_addresses_becomes_one_url_per_address_in_address_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _dns({"sokoban": ["172.18.0.10", "172.18.0.9"]}))
    assert expand_replicas(["http://sokoban:8000", "http://172.18.0.9:8000"]) == [
        "http://172.18.0.9:8000",
        "http://172.18.0.10:8000",
    ]


def test_dual_stack_replicas_count_once_each_by_their_ipv4_address(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"sokoban": ["fd00::3", "10.0.0.3", "fd00::2", "10.0.0.2"], "v6only": ["fd00::2", "fd00::1"]}
    monkeypatch.setattr(socket, "getaddrinfo", _dns(answers))
    assert expand_replicas(["http://sokoban:8000"]) == ["http://10.0.0.2:8000", "http://10.0.0.3:8000"]
    assert expand_replicas(["http://v6only:8000"]) == ["http://[fd00::1]:8000", "http://[fd00::2]:8000"]

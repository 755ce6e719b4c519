"""expand_replicas: one URL per address of a name, everything else kept as given.

A name resolving to several addresses (Docker's DNS for a scaled compose service) is exercised
against a real engine in tests/fleet/test_compose.py; here, the cases that need no DNS setup.
"""

from __future__ import annotations

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

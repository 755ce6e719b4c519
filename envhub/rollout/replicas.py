"""Env server replicas behind one name: a compose service with replicas, a headless Service.

Docker's embedded DNS answers a compose service's name with the address of every replica
(``docker compose up --scale sokoban=2``), and so does Kubernetes for a headless Service
(``clusterIP: None``). A rollout that is given ``http://sokoban:8000`` and told to resolve
replicas treats each address as a replica of its own, so that the env pool places every group
on one of them and keeps the group's sessions there (sessions live in one server's memory).

Resolution happens once, when a job or a training run starts: replicas added later take groups
from the next job on. Addresses are sorted, so a resumed job sees the same replica numbering as
long as the set of replicas did not change.

A client that plays one episode (the framework adapters in ``envhub.integrations``) uses
:func:`pin_replica` instead: it picks one of the addresses for the episode's whole life, since a
later connection (after an idle keep-alive is closed, say while the model thinks) would resolve
the name again and could reach a replica that does not hold the session.
"""

from __future__ import annotations

import ipaddress
import random
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

from envhub.core.errors import ConfigurationError

__all__ = ["expand_replicas", "pin_replica"]


def expand_replicas(urls: Sequence[str]) -> list[str]:
    """One URL per address for each URL whose host name resolves to several addresses.

    A URL with an IP address, one whose name resolves to a single address, or an ``https`` URL
    (its certificate names the host, not the addresses) is kept as it is. Duplicates are dropped,
    first occurrence kept.

    Raises:
        ConfigurationError: a host name does not resolve.
    """
    expanded: list[str] = []
    for url in urls:
        expanded.extend(_expand_one(url))
    return list(dict.fromkeys(expanded))


def pin_replica(url: str, *, rng: random.Random | None = None) -> str:
    """The URL of one replica, when ``url``'s host name resolves to several addresses.

    The replica is drawn at random, so many episodes spread over the replicas while each stays
    on one. A URL with an address, a single-address name, an ``https`` URL (its certificate
    names the host: put a sticky proxy in front) and a name that does not resolve (the client
    then reports the connection error) come back unchanged.

    Args:
        url: an env server's base URL, e.g. ``http://sokoban:8000``.
        rng: the generator that draws the replica (default: the ``random`` module's).
    """
    try:
        replicas = _expand_one(url)
    except ConfigurationError:
        return url
    return replicas[0] if len(replicas) == 1 else (rng or random).choice(replicas)


def _expand_one(url: str) -> list[str]:
    parts = urlsplit(url)
    host = parts.hostname
    if host is None or parts.scheme != "http" or _is_address(host):
        return [url]
    port = parts.port or 80
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigurationError(
            f"Env server host {host!r} (in {url}) does not resolve: {exc}. Check the service name, "
            "or turn off replica resolution and list the replicas' URLs.",
            url=url,
        ) from exc
    addresses = _one_family({ipaddress.ip_address(str(info[4][0])) for info in infos})
    if len(addresses) < 2:
        return [url]
    userinfo = parts.netloc.rpartition("@")[0]
    prefix = f"{userinfo}@" if userinfo else ""
    return [
        urlunsplit(parts._replace(netloc=f"{prefix}{_host_literal(address)}:{port}")) for address in addresses
    ]


def _one_family(addresses: set[ipaddress.IPv4Address | ipaddress.IPv6Address]) -> list[str]:
    """The IPv4 addresses, sorted (else the IPv6 ones): a dual-stack replica has one of each,
    and counting it twice would put two replica slots on one server."""
    v4 = sorted(a for a in addresses if isinstance(a, ipaddress.IPv4Address))
    v6 = sorted(a for a in addresses if isinstance(a, ipaddress.IPv6Address))
    return [str(a) for a in (v4 or v6)]


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _host_literal(address: str) -> str:
    return f"[{address}]" if ":" in address else address

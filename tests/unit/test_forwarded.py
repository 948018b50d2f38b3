"""The client's address behind trusted proxies: never an X-Forwarded-For entry the client wrote."""

from __future__ import annotations

import pytest

from telemetria.forwarded import client_address, forwarded_scheme, parse_address, parse_trusted
from telemetria.settings import Settings

PROXY = parse_trusted("172.30.89.1")


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "expected"),
    [
        # The proxy appended the address it saw; what the client sent is to the left of it.
        ("172.30.89.1", "198.51.100.23", "198.51.100.23"),
        ("172.30.89.1", "10.0.0.1, 1.2.3.4, 198.51.100.23", "198.51.100.23"),
        # The client pretending to be the proxy, or a chain of it, changes nothing.
        ("172.30.89.1", "172.30.89.1, 198.51.100.23", "198.51.100.23"),
        # Not from the proxy: the header is not believed at all.
        ("203.0.113.9", "198.51.100.23", "203.0.113.9"),
        ("172.30.89.2", "198.51.100.23", "172.30.89.2"),
        # A dual-stack socket shows the proxy as an IPv4-mapped IPv6 address.
        ("::ffff:172.30.89.1", "198.51.100.23", "198.51.100.23"),
        # Ports and IPv6 as proxies write them.
        ("172.30.89.1", "198.51.100.23:5555", "198.51.100.23"),
        ("172.30.89.1", "[2001:db8::7]:443", "2001:db8::7"),
        ("172.30.89.1", "2001:db8::7", "2001:db8::7"),
        # What the trusted proxy wrote is not an address: it wrote nothing; stay with the proxy.
        ("172.30.89.1", "198.51.100.23, unknown", "172.30.89.1"),
        ("172.30.89.1", "", "172.30.89.1"),
        # Only trusted addresses in the chain: the client is one of them, the leftmost seen.
        ("172.30.89.1", "172.30.89.1", "172.30.89.1"),
    ],
)
def test_the_client_is_the_rightmost_address_a_trusted_proxy_did_not_write(
    peer: str, forwarded_for: str, expected: str
) -> None:
    assert client_address(peer, forwarded_for, PROXY) == expected


def test_a_chain_of_trusted_proxies_is_walked_past() -> None:
    proxies = parse_trusted("127.0.0.1, 10.1.0.0/16")
    assert client_address("127.0.0.1", "6.6.6.6, 198.51.100.23, 10.1.4.5", proxies) == "198.51.100.23"


def test_no_trusted_proxy_means_the_peer_always() -> None:
    assert client_address("127.0.0.1", "198.51.100.23", parse_trusted("")) == "127.0.0.1"


def test_star_and_malformed_proxies_are_refused_by_the_settings() -> None:
    with pytest.raises(ValueError, match="name the reverse proxy's address"):
        Settings(forwarded_allow_ips="*")
    with pytest.raises(ValueError, match=r"'proxy\.example' is not an IP address"):
        Settings(forwarded_allow_ips="127.0.0.1, proxy.example")
    assert Settings(forwarded_allow_ips="127.0.0.1, 10.0.0.0/8, ::1").trusted_proxies == parse_trusted(
        "127.0.0.1,10.0.0.0/8,::1"
    )


def test_addresses_and_schemes_parse_as_proxies_write_them() -> None:
    assert str(parse_address(" 1.2.3.4:80 ")) == "1.2.3.4"
    assert parse_address("[::1") is None and parse_address("") is None and parse_address(None) is None
    assert forwarded_scheme("https") == "https" and forwarded_scheme("http, HTTPS") == "https"
    assert forwarded_scheme("gopher") is None

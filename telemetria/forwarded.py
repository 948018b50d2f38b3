"""Which address and scheme a request came from, behind reverse proxies we trust.

A proxy appends the address it received the request from to `X-Forwarded-For`; everything to
the left of that came with the request and may be invented. So the client is found by walking
the list from the right, past the proxies we trust, to the first address that is not one of
them: the one a trusted proxy wrote. uvicorn's ProxyHeadersMiddleware (0.54) does this for a
list of proxies, but with `*` (trust every peer), or when every address in the list is trusted,
it takes the leftmost entry, which the client chose. This module is used instead of it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_trusted(value: str) -> tuple[Network, ...]:
    """Comma-separated addresses or networks (CIDR) of trusted proxies; ValueError naming a bad item."""
    networks = []
    for item in (i.strip() for i in value.split(",")):
        if not item:
            continue
        if item == "*":
            raise ValueError(
                "`*` would believe X-Forwarded-For from anyone who can connect, so a client could choose the "
                "address the login limits and the audit log see; name the reverse proxy's address"
            )
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not an IP address or network (CIDR)") from None
    return tuple(networks)


def parse_address(text: str | None) -> IPAddress | None:
    """An address as peers and proxies write it (`1.2.3.4`, `1.2.3.4:80`, `[::1]:80`, `::1`), else None."""
    if not text:
        return None
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:  # IPv4 with a port; IPv6 has two or more colons
        text = text.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(ip, "ipv4_mapped", None)  # a dual-stack socket shows IPv4 peers as ::ffff:a.b.c.d
    return mapped or ip


def _trusted(ip: IPAddress, trusted: Sequence[Network]) -> bool:
    return any(ip in net for net in trusted)


def client_address(peer: str | None, forwarded_for: str, trusted: Sequence[Network]) -> str | None:
    """The client's address: the peer's own unless it is a trusted proxy, then the rightmost untrusted entry.

    An entry that is not an address stops the walk at the last trusted hop: a proxy we trust always
    writes a real address, so such an entry was never written by one.
    """
    ip = parse_address(peer)
    if ip is None or not _trusted(ip, trusted):
        return peer
    for entry in reversed(forwarded_for.split(",")):
        hop = parse_address(entry)
        if hop is None:
            break
        ip = hop
        if not _trusted(ip, trusted):
            break
    return str(ip)


def forwarded_scheme(value: str) -> str | None:
    """The scheme the nearest proxy received the request over (the rightmost `X-Forwarded-Proto` item)."""
    scheme = value.rsplit(",", 1)[-1].strip().lower()
    return scheme if scheme in ("http", "https") else None


def from_proxy(scope: Scope, trusted: Sequence[Network]) -> Scope:
    """The request as its client sent it: a copy of `scope` with the client address and scheme a trusted proxy
    forwarded (X-Forwarded-For/-Proto), or `scope` itself when its peer is not a proxy we trust."""
    if not (trusted and scope.get("client")):
        return scope
    peer = scope["client"][0]
    ip = parse_address(peer)
    if ip is None or not _trusted(ip, trusted):
        return scope
    headers = [(k, v) for k, v in scope["headers"] if k in (b"x-forwarded-for", b"x-forwarded-proto")]
    forwarded_for = ",".join(v.decode("latin-1") for k, v in headers if k == b"x-forwarded-for")
    proto = [v.decode("latin-1") for k, v in headers if k == b"x-forwarded-proto"]
    scope = dict(scope)
    if forwarded_for:
        scope["client"] = (client_address(peer, forwarded_for, trusted), 0)
    if proto and (scheme := forwarded_scheme(proto[-1])):
        scope["scheme"] = scheme
    return scope


class ForwardedMiddleware:
    """Sets the request's client address and scheme from X-Forwarded-For/-Proto sent by a trusted proxy."""

    def __init__(self, app: ASGIApp, trusted: Sequence[Network]) -> None:
        self.app = app
        self.trusted = tuple(trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = from_proxy(scope, self.trusted)
        await self.app(scope, receive, send)

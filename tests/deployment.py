"""What the shipped deployment files say about the reverse proxy, read the way the tests need it.

docker-compose.yml publishes the service on the host's loopback for a reverse proxy on the host;
docs/operations.md's Deployment section gives the nginx lines. Tests that check the client address a
request is taken from use these, so they test what is shipped rather than a copy of it.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text()))


def compose_app_env() -> dict[str, str]:
    """The app container's TELEMETRIA_* settings, except the database (tests bring their own)."""
    env = compose()["services"]["app"]["environment"]
    return {k: str(v) for k, v in env.items() if k.startswith("TELEMETRIA_") and k != "TELEMETRIA_DATABASE_URL"}


def compose_gateway() -> str:
    """The address a reverse proxy on the host reaches the container from.

    The host reaches a published port through the bridge of the container's network (Docker's
    port proxy or its NAT rule for loopback connections), so inside the container the proxy's
    connections come from that network's gateway; the compose file pins it.
    """
    configs = compose().get("networks", {}).get("default", {}).get("ipam", {}).get("config", [])
    gateways = [c["gateway"] for c in configs if "gateway" in c]
    assert len(gateways) == 1, "docker-compose.yml must pin the default network's gateway (networks.default.ipam)"
    subnet = ipaddress.ip_network(configs[0]["subnet"])
    assert ipaddress.ip_address(gateways[0]) in subnet
    return str(gateways[0])


def nginx_forwarded_for_variable() -> str:
    """The nginx variable docs/operations.md's Deployment section puts in X-Forwarded-For."""
    guide = (ROOT / "docs" / "operations.md").read_text()
    found = re.findall(r"proxy_set_header\s+X-Forwarded-For\s+(\$\w+)\s*;", guide)
    assert len(set(found)) == 1, f"docs/operations.md should give one X-Forwarded-For line for nginx, found {found}"
    return str(found[0])


def nginx_forwarded_for(client_sent: str | None, remote_addr: str) -> str:
    """The X-Forwarded-For nginx sends upstream with the documented line, for a client at `remote_addr`."""
    variable = nginx_forwarded_for_variable()
    if variable == "$remote_addr":
        return remote_addr
    assert variable == "$proxy_add_x_forwarded_for", variable
    return f"{client_sent}, {remote_addr}" if client_sent else remote_addr

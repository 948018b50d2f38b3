"""A client that hangs up in the middle of its body is an everyday event (a tracker losing signal), not a fault:
the real server logs it as one plain line, never an ERROR with a traceback."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx

from tests.e2e.conftest import cli, serve


def hang_up_mid_body(port: int, path: str, headers: dict[str, str], partial: bytes) -> None:
    """Send the headers and part of a declared body, then close the connection."""
    head = f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Length: {len(partial) + 500}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(head.encode() + partial)
        time.sleep(0.3)  # let the server start reading the body before the connection goes


def test_a_client_that_disconnects_mid_body_is_one_plain_log_line(db_env: dict[str, str], tmp_path: Path) -> None:
    cli(db_env, "vehicle", "add", "--plate", "DSC1A00")
    token = json.loads(cli(db_env, "tracker", "add", "--unique-id", "dsc-0001", "--vehicle", "DSC1A00").stdout)["token"]
    log = tmp_path / "server.log"
    server = serve(db_env, log=log)
    port = int(next(server).rsplit(":", 1)[1])  # serve() waits for /readyz 200
    try:
        json_type = {"Content-Type": "application/json"}
        hang_up_mid_body(port, "/api/v1/fixes", {**json_type, "Authorization": f"Bearer {token}"}, b'{"fixes": [')
        hang_up_mid_body(port, "/osmand?id=dsc-0001", {"Content-Type": "application/x-www-form-urlencoded"}, b"lat=")
        hang_up_mid_body(port, "/api/v1/auth/login", json_type, b'{"username": "a')
        hang_up_mid_body(port, "/api/v1/vehicles", json_type, b'{"plate": "')
        time.sleep(0.5)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200  # still serving
    finally:
        server.close()  # stops the server: its whole log is written
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert not [line for line in lines if line["level"] in ("error", "critical") or "exc" in line], log.read_text()
    assert "Traceback" not in log.read_text()
    gone = [line for line in lines if "disconnected" in line["msg"]]
    assert len(gone) >= 2 and all(line["level"] == "info" for line in gone), lines
    assert {"/api/v1/fixes", "/osmand"} <= {line["msg"].split()[-1] for line in gone}

"""The webhook's signature: HMAC-SHA256 of the raw body, as a receiver checks it (docs/operations.md)."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from pathlib import Path
from typing import Any

import pytest

from telemetria.occurrences.notify import webhook


def test_signature_is_hmac_sha256_of_the_raw_body_in_hex() -> None:
    # RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?"
    expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    assert webhook.sign("Jefe", b"what do ya want for nothing?") == f"sha256={expected}"
    assert webhook.sign(b"Jefe", b"what do ya want for nothing?") == f"sha256={expected}"


def test_verify_accepts_the_signature_and_refuses_any_change() -> None:
    body = webhook.body({"event": "occurrence", "occurrence": {"id": 7, "plate": "ABC1D23"}, "timestamp": 1})
    header = webhook.sign("s3cret", body)
    assert header == "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert webhook.verify("s3cret", body, header)
    assert webhook.verify("s3cret", body, f" {header} ")
    assert not webhook.verify("other", body, header)
    assert not webhook.verify("s3cret", body.replace(b"ABC1D23", b"ABC1D24"), header)
    assert not webhook.verify("s3cret", body, header.upper())
    assert not webhook.verify("s3cret", body, None)
    assert not webhook.verify("s3cret", body, "")


def test_body_is_compact_json_utf8() -> None:
    raw = webhook.body({"place": "Rua São João", "n": 1})
    assert raw == '{"place":"Rua São João","n":1}'.encode()


def test_the_receiver_example_in_the_operations_guide_verifies_our_requests() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    [example] = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def verified(" in b]
    namespace: dict[str, Any] = {}
    exec(example, namespace)
    now = int(time.time())
    raw = webhook.body({"event": "occurrence", "occurrence": {"id": 7}, "timestamp": now, "delivery_id": 3})
    headers = {"X-Telemetria-Signature": webhook.sign("s3cret", raw), "X-Telemetria-Timestamp": str(now)}
    assert namespace["verified"](b"s3cret", raw, headers)["delivery_id"] == 3
    with pytest.raises(ValueError, match="bad signature"):
        namespace["verified"](b"wrong", raw, headers)
    old = webhook.body({"event": "occurrence", "timestamp": now - 3600})
    stale = {"X-Telemetria-Signature": webhook.sign("s3cret", old), "X-Telemetria-Timestamp": str(now - 3600)}
    with pytest.raises(ValueError, match="stale"):
        namespace["verified"](b"s3cret", old, stale)

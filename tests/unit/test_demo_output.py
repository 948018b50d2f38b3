"""What `./dev run` tells a first-time user: where to go, with which user and password, in local time."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from telemetria.sim.demo import banner, demo_password, status_line


def test_the_banner_gives_user_and_password_local_time_and_explains_store_and_forward() -> None:
    at = datetime(2026, 11, 23, 11, 15, 2, tzinfo=UTC)  # 07:15:02 in Porto Velho
    text = banner("http://127.0.0.1:8000", ("admin", "s3cret"), Path(".data/demo-admin.txt"), 5, 1.0, at)
    assert "user 'admin' and password 's3cret'" in text
    assert "started 07:15:02 (local time, America/Porto_Velho)" in text and "UTC" not in text
    assert "store-and-forward" in text and "Nunca transmitiu" in text
    line = status_line(120, 5, at)
    assert line.endswith("latest fix 07:15:02 (local time, America/Porto_Velho)")
    assert status_line(0, 0, None).endswith("latest fix -")


def test_the_admin_file_names_the_user_and_old_files_still_read() -> None:
    assert demo_password("# Telemetria demo\nuser: admin\npassword: abc def\n") == "abc def"
    assert demo_password("only-the-password\n") == "only-the-password"

"""A verification's private folder (seals/upload.py): what a process killed mid-way left is swept at the next
start, and nothing else is touched."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from telemetria.seals import upload


def test_only_verifications_folders_older_than_a_day_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    now = 1_000_000.0
    old, fresh = Path(upload.new_folder()), Path(upload.new_folder())
    upload.spool(str(old), [b"a", b"b"])
    assert (old / upload.BODY).read_bytes() == b"ab" and oct(old.stat().st_mode & 0o777) == "0o700"
    os.utime(old, (now - upload.STALE_S - 1, now - upload.STALE_S - 1))
    os.utime(fresh, (now - 60, now - 60))
    other = tmp_path / "someone-else"
    other.mkdir()
    os.utime(other, (0, 0))
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / f"{upload.PREFIX}link").symlink_to(target)  # a link by that name: not followed, not removed
    (tmp_path / f"{upload.PREFIX}file").write_bytes(b"")  # a file by that name: not a folder, not removed
    for stale in (target, tmp_path / f"{upload.PREFIX}link", tmp_path / f"{upload.PREFIX}file"):
        os.utime(stale, (0, 0), follow_symlinks=False)  # as old as can be: only what they are keeps them
    assert upload.sweep(now) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [fresh.name, "someone-else", "elsewhere", f"{upload.PREFIX}link", f"{upload.PREFIX}file"]
    )

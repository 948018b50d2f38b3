"""The seals' canonical lines, digests and Merkle root: the definition auditors recompute by hand."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from telemetria import formats
from telemetria.seals import canonical as c

T = datetime(2026, 3, 2, 10, 15, 30, 900_000, tzinfo=UTC)


def test_a_line_is_utc_to_the_second_with_the_exports_digits() -> None:
    assert c.line(T, -10.4375121, -62.46683, 41.04) == "2026-03-02T10:15:30Z;-10.437512;-62.466830;41.0\n"
    local = T.astimezone(timezone(timedelta(hours=-4)))
    assert c.line(local, -10.4375121, -62.46683, None) == "2026-03-02T10:15:30Z;-10.437512;-62.466830;\n"
    assert c.line(T.timestamp(), 0.0, -0.0000001, float("nan")) == "2026-03-02T10:15:30Z;0.000000;0.000000;\n"
    with pytest.raises(ValueError, match="naive"):
        c.line(T.replace(tzinfo=None), 0, 0, 0)


@pytest.mark.parametrize("lat", [-10.4375125, 1.0000005, -62.0000015, 3.1415926535])
def test_the_line_shows_exactly_what_the_csv_shows(lat: float) -> None:
    shown = formats.number(lat, 6).replace(",", ".")
    assert c.line(T, lat, lat, round(41.25, 1)).split(";")[1:3] == [shown, shown]


def test_a_speed_is_rounded_as_the_track_rows_round_it() -> None:
    # the track's row holds round(speed, 1) (half to even on the exact value), then the CSV writes that
    for speed in (41.25, 41.35, 0.05, 99.95):
        assert c.line(T, 0, 0, speed).rstrip("\n").split(";")[3] == formats.number(round(speed, 1), 1).replace(",", ".")


def test_digest_is_sha256_of_the_concatenated_lines() -> None:
    lines = [c.line(T + timedelta(seconds=30 * i), -10.4, -62.4, 40.0) for i in range(3)]
    assert c.digest(lines) == hashlib.sha256("".join(lines).encode()).hexdigest()
    assert c.digest([]) == c.EMPTY_SHA256


def test_leaf_covers_every_stated_field() -> None:
    base = c.leaf(7, date(2026, 3, 2), 1, 10, "a" * 64, None)
    assert base == hashlib.sha256(f"7;2026-03-02;1;10;{'a' * 64};".encode()).hexdigest()
    assert (
        len(
            {
                base,
                c.leaf(7, date(2026, 3, 2), 2, 10, "a" * 64, None),
                c.leaf(7, date(2026, 3, 2), 1, 10, "a" * 64, "b" * 64),
            }
        )
        == 3
    )


def _up(leaf: str, path: list[tuple[str, str]]) -> str:
    node = bytes.fromhex(leaf)
    for side, sibling in path:
        pair = bytes.fromhex(sibling) + node if side == "L" else node + bytes.fromhex(sibling)
        node = hashlib.sha256(pair).digest()
    return node.hex()


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 13])
def test_every_leaf_proves_its_way_to_the_root(n: int) -> None:
    leaves = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(n)]
    root = c.merkle_root(leaves)
    for i, leaf in enumerate(leaves):
        assert _up(leaf, c.merkle_path(leaves, i)) == root
    if n > 1:
        changed = [*leaves[:-1], c.EMPTY_SHA256]
        assert c.merkle_root(changed) != root


def test_root_of_two_and_of_nothing() -> None:
    a, b = (hashlib.sha256(x).hexdigest() for x in (b"a", b"b"))
    assert c.merkle_root([a, b]) == hashlib.sha256(bytes.fromhex(a) + bytes.fromhex(b)).hexdigest()
    assert c.merkle_root([a]) == a
    assert c.merkle_root([]) == c.EMPTY_SHA256

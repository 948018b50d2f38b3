"""Each client address has its share of the public area (issue 33: ten anonymous clients fetching back to back kept
the service busy): beyond a burst and a rate, 429 with Retry-After, before anything is read."""

from __future__ import annotations

import pytest

from telemetria.publication import store
from tests.conftest import ScratchDb
from tests.db.simcontract import app_client


@pytest.mark.usefixtures("clean")
async def test_an_address_beyond_its_share_gets_429_naming_when_to_try_again(
    test_db: ScratchDb, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = []
    version = store.data_version

    async def counted(*a: object) -> tuple[str, int]:
        reads.append(1)
        return await version(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "data_version", counted)
    async with app_client(test_db, public_enabled=True, public_requests_per_s=0.001, public_burst=3) as c:
        first = [await c.get("/public/itineraries") for _ in range(3)]
        assert [r.status_code for r in first] == [200, 200, 200], first[0].text
        r = await c.get("/public/itineraries")
        assert r.status_code == 429, r.text
        wait = int(r.headers["retry-after"])  # a token a 1,000 s: about that long, less the seconds gone by
        assert 900 < wait <= 1000 and f"tente novamente em {wait} s" in r.json()["detail"]
        assert len(reads) == 3  # refused before reading anything
    async with app_client(test_db, public_enabled=False, public_requests_per_s=0.001, public_burst=1) as c:
        assert {(await c.get("/public/itineraries")).status_code for _ in range(3)} == {404}  # off: as if absent

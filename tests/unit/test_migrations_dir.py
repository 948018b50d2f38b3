"""The migrations ship inside the package, so neither a wheel nor the working directory changes what is applied."""

from __future__ import annotations

from pathlib import Path

import telemetria
from telemetria.db import MIGRATIONS_DIR, list_migrations


def test_migrations_are_found_from_the_package_itself() -> None:
    assert MIGRATIONS_DIR == Path(telemetria.__file__).resolve().parent / "migrations"
    versions = [m.version for m in list_migrations()]
    assert versions[0] == 1 and versions == list(range(1, len(versions) + 1))


def test_no_migration_is_left_at_the_old_place() -> None:
    # A file added to the clone's top-level migrations/ (where they lived before) would never be applied.
    old = Path(telemetria.__file__).resolve().parent.parent / "migrations"
    assert not list(old.glob("*.sql")), f"move {old}/*.sql to {MIGRATIONS_DIR}"

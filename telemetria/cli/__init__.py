"""`telemetria` command line: local database, migrations, service, registry, roads, simulator, demo."""

from __future__ import annotations

import argparse
import sys

from pydantic import ValidationError

from telemetria.cli import (
    access,
    database,
    gateway,
    operations,
    registry,
    roads,
    service,
    sete,
    simulation,
    verify,
)
from telemetria.cli.common import CliError
from telemetria.settings import Settings, SettingsError

# In the order `telemetria --help` lists them.
GROUPS = (database, service, operations, registry, gateway, sete, roads, access, simulation, verify)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="telemetria", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as e:
        bad = "; ".join(
            f"TELEMETRIA_{'_'.join(str(x) for x in err['loc']).upper()}: {err['msg']}" for err in e.errors()
        )
        print(f"telemetria: invalid settings: {bad}", file=sys.stderr)
        sys.exit(2)
    except SettingsError as e:
        print(f"telemetria: invalid settings: {e}", file=sys.stderr)
        sys.exit(2)
    try:
        args.func(settings, args)
    except KeyboardInterrupt:
        pass
    except CliError as e:
        print(f"telemetria: {e}", file=sys.stderr)
        sys.exit(1)
    except Exception as e:
        from telemetria.http import FieldError
        from telemetria.ops.backup import BackupError
        from telemetria.ops.localdb import LocalDbError
        from telemetria.ops.retention import RetentionError
        from telemetria.roads.errors import RoadsError

        if isinstance(e, FieldError | LocalDbError | BackupError | RetentionError | RoadsError):
            print(f"telemetria: {e}", file=sys.stderr)
            sys.exit(1)
        raise

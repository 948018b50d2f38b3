"""The project-local PostgreSQL 15 + TimescaleDB cluster: `telemetria db start|stop|status|url`."""

from __future__ import annotations

import os
import pwd
import subprocess
from dataclasses import dataclass
from pathlib import Path

from telemetria.settings import Settings

DEFAULT_PG_BIN = Path("/usr/lib/postgresql/15/bin")


def pg_bin() -> Path:
    """PostgreSQL's programs: $TELEMETRIA_PG_BIN, read when a program is run, else Debian's PostgreSQL 15."""
    return Path(os.environ.get("TELEMETRIA_PG_BIN") or DEFAULT_PG_BIN)


SUPERUSER = "telemetria"

# Written anew at every start so a change here reaches existing clusters. Durability stays on:
# a 2xx to a tracker means its fixes are committed, so fsync and synchronous_commit are not touched.
SERVER_CONF = """\
# managed by telemetria (ops/localdb.py): rewritten at every `telemetria db start`
listen_addresses = ''
unix_socket_directories = '{socket_dir}'
unix_socket_permissions = 0700
port = {port}
shared_preload_libraries = 'timescaledb'
timescaledb.telemetry_level = off
max_connections = 200
shared_buffers = '1GB'
work_mem = '32MB'
maintenance_work_mem = '256MB'
wal_level = replica
max_wal_size = '4GB'
checkpoint_timeout = '15min'
wal_compression = on
log_min_messages = warning
log_min_error_statement = error
"""


class LocalDbError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class LocalDb:
    data_dir: Path
    port: int

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalDb:
        return cls(settings.cluster_dir, settings.db_port)

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pg"

    @property
    def logfile(self) -> Path:
        return self.data_dir / "postgres.log"

    def url(self, dbname: str = "telemetria") -> str:
        return f"postgresql:///{dbname}?host={self.data_dir}&port={self.port}&user={SUPERUSER}"

    # PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` system user.
    def _run_as(self) -> list[str]:
        if os.geteuid() != 0:
            return []
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise LocalDbError(
                "running as root needs the 'postgres' system user (apt-get install postgresql-15)"
            ) from None
        return ["runuser", "-u", "postgres", "--"]

    def _pg(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        exe = pg_bin() / tool
        if not exe.exists():
            raise LocalDbError(f"{exe} not found: install postgresql-15 (the README's set-up does)")
        proc = subprocess.run([*self._run_as(), str(exe), *args], capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise LocalDbError(f"{tool} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}")
        return proc

    def _prepare_dir(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            pg = pwd.getpwnam("postgres")
            os.chown(self.data_dir, pg.pw_uid, pg.pw_gid)
        os.chmod(self.data_dir, 0o700)

    def initialized(self) -> bool:
        return (self.pgdata / "PG_VERSION").is_file()

    def running(self) -> bool:
        if not self.initialized():
            return False
        return self._pg("pg_ctl", "status", "-D", str(self.pgdata), check=False).returncode == 0

    def init(self) -> None:
        self._prepare_dir()
        if self.initialized():
            return
        self._pg(
            "initdb",
            "-D",
            str(self.pgdata),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "--data-checksums",
        )

    def init_standby_of(self, primary: LocalDb) -> None:
        """Make this cluster a hot standby of `primary` (pg_basebackup -R); start it with `start()`.

        The copy keeps streaming from the primary's socket; `start()` gives it its own port and
        socket directory. Used to try reports on a replica locally (TELEMETRIA_REPORTS_DATABASE_URL).
        """
        self._prepare_dir()
        if self.initialized():
            raise LocalDbError(f"{self.pgdata} already holds a cluster")
        conninfo = f"host={primary.data_dir} port={primary.port} user={SUPERUSER}"
        self._pg("pg_basebackup", "-D", str(self.pgdata), "-R", "-X", "stream", "-c", "fast", "-d", conninfo)

    def write_conf(self) -> None:
        conf = self.pgdata / "telemetria.conf"
        text = SERVER_CONF.format(socket_dir=self.data_dir, port=self.port)
        conf.write_text(text)
        main = self.pgdata / "postgresql.conf"
        if "include_if_exists = 'telemetria.conf'" not in main.read_text():
            with main.open("a") as f:
                f.write("\ninclude_if_exists = 'telemetria.conf'\n")
        if os.geteuid() == 0:
            pg = pwd.getpwnam("postgres")
            os.chown(conf, pg.pw_uid, pg.pw_gid)

    def start(self) -> bool:
        """Initialise if needed and start; False when it was already running."""
        self.init()
        if self.running():
            return False
        self.write_conf()
        # A crash can leave a stale socket lock behind; pg_ctl handles the pid file itself.
        self._pg("pg_ctl", "start", "-D", str(self.pgdata), "-l", str(self.logfile), "-w", "-t", "60")
        self._ensure_database("telemetria")
        return True

    def stop(self, mode: str = "fast") -> bool:
        if not self.running():
            return False
        self._pg("pg_ctl", "stop", "-D", str(self.pgdata), "-m", mode, "-w", "-t", "60")
        return True

    def _ensure_database(self, name: str) -> None:
        psql = [
            *self._run_as(),
            str(pg_bin() / "psql"),
            "-h",
            str(self.data_dir),
            "-p",
            str(self.port),
            "-U",
            SUPERUSER,
            "-d",
            "postgres",
            "-tAc",
        ]
        exists = subprocess.run(
            [*psql, f"SELECT 1 FROM pg_database WHERE datname = '{name}'"], capture_output=True, text=True, check=True
        ).stdout.strip()
        if not exists:
            subprocess.run([*psql, f'CREATE DATABASE "{name}"'], capture_output=True, text=True, check=True)

    def status(self) -> dict[str, object]:
        return {
            "data_dir": str(self.data_dir),
            "port": self.port,
            "initialized": self.initialized(),
            "running": self.running(),
            "url": self.url(),
        }

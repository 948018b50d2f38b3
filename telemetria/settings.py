"""The only settings class: built once at start-up from TELEMETRIA_* variables and passed down."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

from dotenv import dotenv_values
from pydantic import BaseModel, Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from telemetria.forwarded import Network, parse_trusted

# Lei 3.588/2023 (Jaru/RO), Art. 15 §6: records kept for no less than 2 years.
MIN_RETENTION_DAYS = 730
# An optional file of TELEMETRIA_*=value lines; variables set in the environment win over it.
ENV_FILE_VAR = "TELEMETRIA_ENV_FILE"
ENV_PREFIX = "TELEMETRIA_"


class SettingsError(ValueError):
    """The settings file is missing or names a setting that does not exist."""


def project_root() -> Path:
    """The clone this package runs from (editable install), else the working directory."""
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def reachable_dir(path: Path) -> Path:
    """`path`, unless we are root and the `postgres` user cannot reach it; then a stable stand-in.

    PostgreSQL refuses to run as root, so as root the local cluster runs as `postgres`, which
    must be able to search every parent directory (a clone under /root or in a 0700 temporary
    directory is not reachable). The stand-in is under /var/lib/telemetria, one per clone.
    """
    if os.geteuid() != 0 or all(os.stat(p).st_mode & 0o001 for p in path.parents if p.exists()):
        return path
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    return Path("/var/lib/telemetria") / f"{path.parent.name or 'root'}-{digest}"


class MapLayer(BaseModel):
    """A base layer of the web map: its name in the layer menu, tile URL templates and attribution."""

    name: str = Field(min_length=1, max_length=60)
    tiles: list[str] = Field(min_length=1, max_length=4)
    attribution: str = Field(default="", max_length=300)
    max_zoom: int = Field(default=19, ge=1, le=24)

    @field_validator("tiles")
    @classmethod
    def _tile_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            if not url.startswith(("https://", "http://", "/")) or "{z}" not in url:
                raise ValueError(f"{url!r}: a tile URL starts with https://, http:// or / and has {{z}}, {{x}}, {{y}}")
        return urls


ESRI = "https://server.arcgisonline.com/ArcGIS/rest/services"
DEFAULT_MAP_LAYERS = (
    MapLayer(
        name="Mapa de ruas",
        tiles=["https://tile.openstreetmap.org/{z}/{x}/{y}.png"],
        attribution="© colaboradores do OpenStreetMap",
    ),
    MapLayer(
        name="Satélite",
        tiles=[f"{ESRI}/World_Imagery/MapServer/tile/{{z}}/{{y}}/{{x}}"],
        attribution="Imagens © Esri, Maxar, Earthstar Geographics",
    ),
    MapLayer(
        name="Híbrido",
        tiles=[
            f"{ESRI}/World_Imagery/MapServer/tile/{{z}}/{{y}}/{{x}}",
            f"{ESRI}/Reference/World_Transportation/MapServer/tile/{{z}}/{{y}}/{{x}}",
            f"{ESRI}/Reference/World_Boundaries_and_Places/MapServer/tile/{{z}}/{{y}}/{{x}}",
        ],
        attribution="Imagens e rótulos © Esri, Maxar, Earthstar Geographics",
    ),
)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=None, extra="ignore")

    # Database: an existing server (production), else the project-local cluster below.
    database_url: str | None = None
    # Optional read-only server for reports (a streaming replica); unset: reports use the primary.
    reports_database_url: str | None = None
    data_dir: Path = Field(default_factory=lambda: project_root() / ".data")
    db_port: int = Field(default=55432, ge=1024, le=65535)
    db_name: str = "telemetria"
    db_pool_min: int = Field(default=2, ge=1)
    db_pool_max: int = Field(default=8, ge=1)
    db_command_timeout_s: float = Field(default=30.0, gt=0)

    # HTTP service.
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    workers: int = Field(default=1, ge=1)
    access_log: bool = False
    # Behind a reverse proxy: the addresses or networks (comma-separated) of the proxies whose
    # X-Forwarded-For/-Proto are believed; "" for none. See telemetria/forwarded.py.
    forwarded_allow_ips: str = "127.0.0.1"
    log_format: Literal["json", "text"] = "json"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # When set, GET /metrics requires `Authorization: Bearer <token>`. /metrics names every vehicle
    # with the age of its last fix, so the shipped image (Dockerfile) also sets `metrics_require_token`:
    # there, without a token, /metrics is closed rather than open.
    metrics_token: SecretStr | None = None
    metrics_require_token: bool = False

    # Request bodies, on every route: at most this large, and received within `body_timeout_s` of the
    # headers plus 1 s per `body_min_bytes_per_s` bytes received (a stalled or dripping client gets 408).
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    body_timeout_s: float = Field(default=20.0, gt=0)
    body_min_bytes_per_s: float = Field(default=500.0, ge=0)
    # OsmAnd bodies are read before the device is known, so they are small: Traccar's own OsmAnd server
    # takes at most 16 KiB (HttpObjectAggregator(16384)), and one position is under 1 KiB.
    osmand_max_body_bytes: int = Field(default=16 * 1024, ge=1024)
    # In-flight budget, per process: ingest requests being read, decoded or written at once, and the
    # body bytes they hold (decoded, a body takes a few times its size). Only an identified tracker
    # claims, at most its share (bytes: None = one largest body); a request that does not fit is
    # answered 503 + Retry-After before its body is read, so memory stays bounded under overload.
    ingest_max_inflight_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    ingest_max_inflight_requests: int = Field(default=1024, ge=1)
    ingest_max_inflight_bytes_per_tracker: int | None = Field(default=None, ge=1024)
    ingest_max_inflight_requests_per_tracker: int = Field(default=8, ge=1)
    max_batch_fixes: int = Field(default=10_000, ge=1)
    max_future_s: float = Field(default=300.0, ge=0)
    max_speed_kmh: float = Field(default=300.0, gt=0)
    # One fix's `attributes` as JSON: a larger object rejects its fix (trackers send a few small values).
    max_attributes_bytes: int = Field(default=4096, ge=256, le=1024 * 1024)
    # The zone of an OsmAnd `timestamp` sent without an offset (devices do; Traccar reads it in its
    # server's zone). Our JSON API refuses such a time instead.
    osmand_timezone: ZoneInfo = ZoneInfo("UTC")
    retention_days: int = 731
    # How often the service recomputes report rollups that late fixes made stale (0: never; reports
    # stay right either way, computing stale days from the fixes).
    rollup_interval_s: float = Field(default=60.0, ge=0)
    # How often the service drops chunks older than the retention window; 0: never (use cron).
    retention_interval_s: float = Field(default=86_400.0, ge=0)

    # Group commit: how many fixes one transaction takes, how many transactions run at once,
    # and how many fixes may wait before new requests are turned away with 503.
    writer_max_rows: int = Field(default=5_000, ge=1)
    writer_connections: int = Field(default=2, ge=1)
    writer_max_pending_rows: int = Field(default=200_000, ge=1)
    auth_cache_ttl_s: float = Field(default=30.0, ge=0)

    # Users: browser sessions end after `session_idle_s` without use and `session_max_s` after login;
    # `login_max_failures` failed logins of an account from one address within `login_lockout_s`
    # lock that address out of that account; one address may try `login_attempts_per_min` logins a
    # minute (auth/limits.py). Cookies get `Secure` on https ("auto"; behind a TLS proxy that
    # forwards the scheme), always, or never.
    session_idle_s: float = Field(default=30 * 60, gt=0)
    session_max_s: float = Field(default=12 * 3600, gt=0)
    login_max_failures: int = Field(default=5, ge=1)
    login_lockout_s: float = Field(default=15 * 60, ge=0)
    login_attempts_per_min: int = Field(default=30, ge=1)
    cookie_secure: Literal["auto", "always", "never"] = "auto"

    # Web map. The base layers offered (street, satellite, hybrid: Art. 15 §4 "mapa cartográfico,
    # fotográfico ou híbrido"); each is one or more tile URLs drawn in order, so a hybrid is imagery
    # plus a labels layer. A municipality that may not use some provider sets its own as JSON in
    # TELEMETRIA_MAP_LAYERS. "Sem mapa de fundo" is always offered: the pages work with no tiles.
    map_layers: list[MapLayer] = Field(default_factory=lambda: list(DEFAULT_MAP_LAYERS))
    # Live map: a vehicle is "online" while its newest fix is at most `live_online_s` old (§2: a fix
    # every 30 s, plus upload time), "late" up to `live_offline_s`, then "offline".
    live_online_s: float = Field(default=60.0, gt=0)
    live_offline_s: float = Field(default=600.0, gt=0)
    live_poll_s: float = Field(default=5.0, ge=0.5, le=300)  # how often the live map asks for news

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Read at every Settings(), not at import: TELEMETRIA_ENV_FILE names the optional file.
        path = os.environ.get(ENV_FILE_VAR)
        if not path:
            return init_settings, env_settings, file_secret_settings
        env_file = settings_file(Path(path), set(settings_cls.model_fields))
        return init_settings, env_settings, DotEnvSettingsSource(settings_cls, env_file=env_file), file_secret_settings

    @field_validator("metrics_token")
    @classmethod
    def _blank_token_is_none(cls, v: SecretStr | None) -> SecretStr | None:
        # An empty value (`TELEMETRIA_METRICS_TOKEN=` from an unset compose variable) would match a request
        # that sends no token at all: it means "no token", never "an empty one".
        return v if v is not None and v.get_secret_value().strip() else None

    @field_validator("ingest_max_inflight_bytes")
    @classmethod
    def _one_body_fits(cls, v: int, info: ValidationInfo) -> int:
        body = info.data.get("max_body_bytes")
        if body is not None and v < body:
            raise ValueError(f"must be at least TELEMETRIA_MAX_BODY_BYTES ({body}): a largest body would never fit")
        return v

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _proxy_addresses(cls, v: str) -> str:
        parse_trusted(v)
        return v

    @field_validator("ingest_max_inflight_bytes_per_tracker")
    @classmethod
    def _share_fits_a_body(cls, v: int | None, info: ValidationInfo) -> int | None:
        body = info.data.get("max_body_bytes")
        if v is not None and body is not None and v < body:
            raise ValueError(f"must be at least TELEMETRIA_MAX_BODY_BYTES ({body}): a largest body would never fit")
        return v

    @property
    def osmand_body_limit(self) -> int:
        """Largest OsmAnd body in bytes (never more than any body may be)."""
        return min(self.osmand_max_body_bytes, self.max_body_bytes)

    @property
    def tracker_share_bytes(self) -> int:
        """Body bytes one tracker may hold in flight: the setting, else one largest body; within the budget."""
        return min(self.ingest_max_inflight_bytes_per_tracker or self.max_body_bytes, self.ingest_max_inflight_bytes)

    @property
    def tracker_share_requests(self) -> int:
        """Ingest requests one tracker may have in flight, within the process's cap."""
        return min(self.ingest_max_inflight_requests_per_tracker, self.ingest_max_inflight_requests)

    @field_validator("retention_days")
    @classmethod
    def _at_least_two_years(cls, v: int) -> int:
        if v < MIN_RETENTION_DAYS:
            raise ValueError(
                f"must be at least {MIN_RETENTION_DAYS} days: Lei 3.588/2023 Art. 15 §6 requires "
                "records to be kept for no less than 2 years"
            )
        return v

    @property
    def trusted_proxies(self) -> tuple[Network, ...]:
        return parse_trusted(self.forwarded_allow_ips)

    @property
    def cluster_dir(self) -> Path:
        """Where the local cluster really lives (its data, socket and log); see `reachable_dir`."""
        return reachable_dir(self.data_dir.resolve())

    def reports_dsn(self) -> str:
        """The database reports read from: the replica when configured, else the main one."""
        return self.reports_database_url or self.dsn()

    def dsn(self) -> str:
        """The database the service and CLI use."""
        if self.database_url:
            return self.database_url
        return f"postgresql:///{self.db_name}?host={self.cluster_dir}&port={self.db_port}&user=telemetria"


def settings_file(path: Path, fields: set[str]) -> Path:
    """`path` if it is a readable settings file whose TELEMETRIA_* names all exist; else SettingsError."""
    if not path.is_file():
        raise SettingsError(f"{ENV_FILE_VAR}: {path} is not a file")
    try:
        names = dotenv_values(path).keys()
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"{ENV_FILE_VAR}: cannot read {path}: {e}") from None
    unknown = sorted(
        n for n in names if n.upper().startswith(ENV_PREFIX) and n[len(ENV_PREFIX) :].lower() not in fields
    )
    if unknown:  # most likely a typo, which would otherwise silently leave the default in force
        raise SettingsError(f"{ENV_FILE_VAR}: {path} sets unknown settings: {', '.join(unknown)}")
    return path

"""The only settings class: built once at start-up from TELEMETRIA_* variables and passed down."""

from __future__ import annotations

import hashlib
import os
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

from dotenv import dotenv_values
from pydantic import BaseModel, Field, SecretStr, ValidationInfo, field_validator, model_validator
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


def parse_upfm_values(text: str) -> dict[int, Decimal]:
    """`"2025=4.52,2026=4.71"` → {2025: Decimal("4.52"), 2026: Decimal("4.71")}; ValueError naming a bad item."""
    values: dict[int, Decimal] = {}
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        year, sep, value = item.partition("=")
        try:
            y = int(year.strip())
            v = Decimal(value.strip())
        except (ValueError, InvalidOperation):
            raise ValueError(f"{item!r} is not YEAR=VALUE (e.g. 2026=4.71)") from None
        if not sep or not (1900 <= y <= 2200) or not v.is_finite() or v <= 0:
            raise ValueError(f"{item!r} is not YEAR=VALUE with a positive value (e.g. 2026=4.71)")
        if y in values:
            raise ValueError(f"{y} is given twice")
        values[y] = v
    return values


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
    # Each field's docstring is its description: docs/operations.md's table of settings is generated from them
    # (python -m telemetria.settings_doc).
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_file=None, extra="ignore", use_attribute_docstrings=True
    )

    # Database: an existing server (production), else the project-local cluster below.
    database_url: str | None = None
    """an existing PostgreSQL 15 + TimescaleDB server (production); unset: the project-local cluster"""
    # Optional read-only server for reports (a streaming replica); unset: reports use the primary.
    reports_database_url: str | None = None
    """a read-only server (a streaming replica) that reports read from; unset: reports read the main database"""
    data_dir: Path = Field(default_factory=lambda: project_root() / ".data")
    """the local cluster's data, socket and log; as root, when the `postgres` user cannot reach it (a clone under
    `/root` or in a 0700 directory), the cluster lives in `/var/lib/telemetria/<dir>-<hash>` instead (`telemetria db
    status` shows where)"""
    db_port: int = Field(default=55432, ge=1024, le=65535)
    """the local cluster's port (it listens on a unix socket only, no TCP)"""
    db_name: str = "telemetria"
    """the database the service uses in the local cluster (`telemetria db start` creates `telemetria`); not used with
    `TELEMETRIA_DATABASE_URL`"""
    db_pool_min: int = Field(default=2, ge=1)
    """connections a pool keeps open when the code that creates it does not choose (the service's own pools start empty
    and open connections as needed)"""
    db_pool_max: int = Field(default=8, ge=1)
    """connections one process's pool may open (a second pool as large reads reports from a replica when one is
    configured); the group-commit writer's `TELEMETRIA_WRITER_CONNECTIONS` come on top"""
    db_command_timeout_s: float = Field(default=30.0, gt=0)
    """seconds one database statement may take before it is cancelled (every connection: pools and the writer's)"""

    # HTTP service.
    host: str = "127.0.0.1"
    """the address the service listens on"""
    port: int = Field(default=8000, ge=1, le=65535)
    """the port the service listens on (`./dev run --port`, `telemetria serve --port` set it too)"""
    workers: int = Field(default=1, ge=1)
    """service processes (`telemetria serve --workers`), each with its own SO_REUSEPORT socket"""
    access_log: bool = False
    """a per-request access log line: method, path, status, duration, request id (costs ~25 % of ingest throughput)"""
    # Behind a reverse proxy: the addresses or networks (comma-separated) of the proxies whose
    # X-Forwarded-For/-Proto are believed; "" for none. See telemetria/forwarded.py.
    forwarded_allow_ips: str = "127.0.0.1"
    """the reverse proxies (addresses or CIDR networks, comma-separated; empty: none) whose `X-Forwarded-For`/`-Proto`
    are believed; the client is the rightmost `X-Forwarded-For` entry that is not one of them; `*` is refused"""
    log_format: Literal["json", "text"] = "json"
    """`json` (one object per line) or `text` (for people)"""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """the lowest level logged"""
    # When set, GET /metrics requires `Authorization: Bearer <token>`. /metrics names every vehicle
    # with the age of its last fix, so the shipped image (Dockerfile) also sets `metrics_require_token`:
    # there, without a token, /metrics is closed rather than open.
    metrics_token: SecretStr | None = None
    """when set, `GET /metrics` needs `Authorization: Bearer <token>` (an empty value counts as unset)"""
    metrics_require_token: bool = False
    """when true and no token is set, `GET /metrics` is closed (403) instead of open; the Docker image sets it to
    `true`"""

    # Request bodies, on every route: at most this large, and received within `body_timeout_s` of the
    # headers plus 1 s per `body_min_bytes_per_s` bytes received (a stalled or dripping client gets 408).
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    """the largest request body on any route; a larger one gets 413 before it is parsed"""
    body_timeout_s: float = Field(default=20.0, gt=0)
    """every request body must arrive within this many seconds of its headers, plus 1 s per
    `TELEMETRIA_BODY_MIN_BYTES_PER_S` bytes received (Apache's `mod_reqtimeout` rule); a client that stalls or drips
    gets 408 and its connection closed"""
    body_min_bytes_per_s: float = Field(default=500.0, ge=0)
    """the bytes received that earn a body 1 s more (see `TELEMETRIA_BODY_TIMEOUT_S`), so a slow but steady upload is
    never cut off; `0`: a fixed deadline"""
    # OsmAnd bodies are read before the device is known, so they are small: Traccar's own OsmAnd server
    # takes at most 16 KiB (HttpObjectAggregator(16384)), and one position is under 1 KiB.
    osmand_max_body_bytes: int = Field(default=16 * 1024, ge=1024)
    """the largest `/osmand` body (413 beyond): it is read before the device is known; Traccar's own OsmAnd server
    takes at most 16 KiB"""
    # In-flight budget, per process: ingest requests being read, decoded or written at once, and the
    # body bytes they hold (decoded, a body takes a few times its size). Only an identified tracker
    # claims, at most its share (bytes: None = one largest body); a request that does not fit is
    # answered 503 + Retry-After before its body is read, so memory stays bounded under overload.
    ingest_max_inflight_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    """per process: ingest body bytes in progress at once (the declared `Content-Length`, or as they arrive), claimed
    only by identified trackers; a request that does not fit gets 503 + `Retry-After` before its body is read; at
    least `TELEMETRIA_MAX_BODY_BYTES`"""
    ingest_max_inflight_requests: int = Field(default=1024, ge=1)
    """per process: ingest requests in progress at once; one that does not fit gets 503 + `Retry-After` before its body
    is read"""
    ingest_max_inflight_bytes_per_tracker: int | None = Field(default=None, ge=1024)
    """the bytes of that budget one tracker may hold; unset: one largest body (`TELEMETRIA_MAX_BODY_BYTES`); beyond its
    share a tracker's uploads get 503 + `Retry-After` while the others still fit"""
    ingest_max_inflight_requests_per_tracker: int = Field(default=8, ge=1)
    """the ingest requests one tracker may have in progress at once; beyond, its uploads get 503 + `Retry-After`"""
    max_batch_fixes: int = Field(default=10_000, ge=1)
    """the most fixes in one request; more get 413"""
    max_future_s: float = Field(default=300.0, ge=0)
    """a fix more than this many seconds in the future is rejected"""
    max_speed_kmh: float = Field(default=300.0, gt=0)
    """a fix reporting a higher speed is rejected"""
    # One fix's `attributes` as JSON: a larger object rejects its fix (trackers send a few small values).
    max_attributes_bytes: int = Field(default=4096, ge=256, le=1024 * 1024)
    """one fix's `attributes` as JSON; a larger object rejects its fix"""
    # The zone of an OsmAnd `timestamp` sent without an offset (devices do; Traccar reads it in its
    # server's zone). Our JSON API refuses such a time instead.
    osmand_timezone: ZoneInfo = ZoneInfo("UTC")
    """the zone of an OsmAnd `timestamp` sent without an offset (Traccar reads it in its server's zone); our JSON API
    refuses such times"""
    retention_days: int = 731
    """how long fixes and the audit log are kept; under 730 is refused (Lei 3.588/2023 Art. 15 §6: at least 2 years);
    ingest rejects fixes older than this"""
    # How often the service recomputes report rollups that late fixes made stale (0: never; reports
    # stay right either way, computing stale days from the fixes).
    rollup_interval_s: float = Field(default=60.0, ge=0)
    """how often the service recomputes the report rollups that late fixes made stale; `0`: never (reports stay right,
    computing stale days from the fixes)"""
    # How often the occurrence detector looks at the fixes that changed (issue 18; 0: never).
    detector_interval_s: float = Field(default=10.0, ge=0)
    """how often each detector process turns the fixes that changed into occurrences (counted from a round's start; a
    longer round is followed after 1 s); an occurrence is stored within about one round's time of the fix that
    completes it (one that arrives just after its vehicle was recomputed waits for the next round); `0`: never"""
    detector_processes: int = Field(default=2, ge=1, le=8)
    """how many processes the detector's work is split among (by vehicle): one core each at most; every service
    process starts that many (those of several services take turns by vehicle slice)"""
    detector_nice: int = Field(default=10, ge=0, le=19)
    """how much lower than the service's the detector process's CPU priority is (Linux nice): under contention ingest
    gets the CPU first and the detector's lag grows instead; `0`: the same priority"""
    detector_keep_fixes: int = Field(default=8_000_000, ge=0)
    """how many fixes of its vehicles' days each detector process keeps with their analysis' per-fix values (~170
    bytes each: 8,000,000 ≈ 1.4 GB, the days of 5,000 vehicles reporting every 30 s for 13 h), so that a window
    reads and analyses again only what changed; past it, days of earlier dates go first, then new days are read and
    analysed whole every round (at 10,000 vehicles that is slower than the fixes arrive); `0`: keep none"""
    detector_yield_pct: float = Field(default=50.0, ge=0)
    """while the service process uses more than this share of one core (in %: saturated ingest), the detector
    pauses between windows (2 s at most in a row), so ingest and its database work get the CPU first and the
    detector's lag grows instead; `0`: never pause"""
    # How often the service drops chunks older than the retention window; 0: never (use cron).
    retention_interval_s: float = Field(default=86_400.0, ge=0)
    """how often the service runs retention (one process at a time, counted from the last recorded run); `0`: never
    (run `telemetria retention run` from cron)"""

    # Group commit: how many fixes one transaction takes, how many transactions run at once,
    # and how many fixes may wait before new requests are turned away with 503.
    writer_max_rows: int = Field(default=5_000, ge=1)
    """fixes per group-commit transaction (bounds how long a single fix waits behind batches)"""
    writer_connections: int = Field(default=2, ge=1)
    """group-commit transactions in flight at once, each on its own connection"""
    writer_max_pending_rows: int = Field(default=200_000, ge=1)
    """fixes that may wait for the database; beyond, new requests get 503 + `Retry-After`"""
    auth_cache_ttl_s: float = Field(default=30.0, ge=0)
    """how long a credential → tracker lookup is cached (deactivation still takes effect at once; a rotated token stops
    within about a second)"""

    # Users: browser sessions end after `session_idle_s` without use and `session_max_s` after login;
    # `login_max_failures` failed logins of an account from one address within `login_lockout_s`
    # lock that address out of that account; one address may try `login_attempts_per_min` logins a
    # minute (auth/limits.py). Cookies get `Secure` on https ("auto"; behind a TLS proxy that
    # forwards the scheme), always, or never.
    session_idle_s: float = Field(default=30 * 60, gt=0)
    """a browser session ends after this long unused"""
    session_max_s: float = Field(default=12 * 3600, gt=0)
    """a browser session ends this long after login"""
    login_max_failures: int = Field(default=5, ge=1)
    """failed logins of one account from one address within `TELEMETRIA_LOGIN_LOCKOUT_S` that lock that address out of
    that account"""
    login_lockout_s: float = Field(default=15 * 60, ge=0)
    """the window of those failures, and how long the lockout lasts after the oldest of them; `0`: no lockout"""
    login_attempts_per_min: int = Field(default=30, ge=1)
    """logins one client address may try per minute, all service processes together (counted in the audit log)"""
    cookie_secure: Literal["auto", "always", "never"] = "auto"
    """`auto`: `Secure` cookies when the request came over https (behind a proxy, the forwarded scheme); `always`;
    `never`"""

    # Web map. The base layers offered (street, satellite, hybrid: Art. 15 §4 "mapa cartográfico,
    # fotográfico ou híbrido"); each is one or more tile URLs drawn in order, so a hybrid is imagery
    # plus a labels layer. A municipality that may not use some provider sets its own as JSON in
    # TELEMETRIA_MAP_LAYERS. "Sem mapa de fundo" is always offered: the pages work with no tiles.
    map_layers: list[MapLayer] = Field(default_factory=lambda: list(DEFAULT_MAP_LAYERS))
    """the web map's base layers, as JSON: `[{"name", "tiles": [URL templates with {z}, {x}, {y}, drawn in order],
    "attribution", "max_zoom"}]`; by default OpenStreetMap's streets, and Esri's imagery alone and with labels"""
    # Live map: a vehicle is "online" while its newest fix is at most `live_online_s` old (§2: a fix
    # every 30 s, plus upload time), "late" up to `live_offline_s`, then "offline".
    live_online_s: float = Field(default=60.0, gt=0)
    """the live map shows a vehicle online while its newest fix is at most this old (§2: a fix every 30 s + upload)"""
    live_offline_s: float = Field(default=600.0, gt=0)
    """then late (atrasado) while its newest fix is at most this old, then offline (sem sinal)"""
    live_poll_s: float = Field(default=5.0, ge=0.5, le=300)  # how often the live map asks for news
    """how often the live map asks for news"""

    # Boletim (issue 31): a month closed before this many days after its end needs `confirm_early`, since fixes kept
    # by a tracker out of signal (store-and-forward, §2) may still arrive for its last days.
    measurement_close_grace_days: int = Field(default=5, ge=0, le=60)
    """closing a month's boletim before this many days after the month's end needs `{"confirm_early": true}` (a
    tracker out of signal may still send fixes of its last days)"""

    # Fiscalização (issue 18): the Termo de Comunicação's header, and new occurrences of chosen kinds announced by
    # e-mail and by a signed webhook (occurrences/notify/outbox.py: an outbox in the database, retried until delivered).
    municipality_name: str = Field(default="Prefeitura Municipal de Jaru", min_length=1, max_length=200)
    """the name in the header of the Termo de Comunicação"""
    coat_of_arms_path: Path | None = None
    """a PNG or JPEG image of the municipality's coat of arms for that header; unset: the name alone"""
    public_url: str | None = None
    """the address people open the service at (e.g. `https://telemetria.prefeitura.gov.br`), for the link to the
    occurrence in e-mails and webhooks; unset: the link is a path only"""
    notify_kinds: str = ""
    """the kinds of new occurrence announced by e-mail and webhook, comma-separated (e.g.
    `speeding,run_not_made,tracker_silent`), or `all`; empty: none; an unknown kind stops the service at start"""
    notify_interval_s: float = Field(default=15.0, ge=0)
    """how often the service sends pending notifications (a failed one is retried after 1, 2, 4… min, at most
    hourly, until it goes through); `0`: notifications off"""
    smtp_host: str | None = None
    """the SMTP server that sends the e-mails; unset: no e-mail"""
    smtp_port: int | None = Field(default=None, ge=1, le=65535)
    """its port; unset: 587 with `starttls`, 465 with `ssl`, 25 with `none`"""
    smtp_tls: Literal["none", "starttls", "ssl"] = "starttls"
    """`starttls` (upgrade the connection, port 587), `ssl` (TLS from the start, port 465) or `none` (a relay on the
    same host or network); certificates are verified against the system's CAs"""
    smtp_user: str | None = None
    """the SMTP login, when the server asks for one"""
    smtp_password: SecretStr | None = None
    """its password"""
    smtp_from: str | None = None
    """the sender address of the e-mails (needed when e-mail is on)"""
    notify_email_to: str = ""
    """the addresses that receive the e-mails, comma-separated; empty: no e-mail"""
    webhook_url: str | None = None
    """an http(s) URL that receives each new occurrence as JSON, signed (`X-Telemetria-Signature`); unset: no
    webhook"""
    webhook_secret: SecretStr | None = None
    """the key of that signature, HMAC-SHA256 over the raw body (needed with `TELEMETRIA_WEBHOOK_URL`)"""
    # Fiscalização (issue 18): the value of the UPFM in R$ per year, which turns a fine in UPFM into money (the
    # municipality publishes it each year), and the contractor's defence term after the Termo.
    upfm_brl: str = ""
    """the value of one UPFM in R$ per year, as `YEAR=VALUE` pairs, e.g. `2025=4.52,2026=4.71`; a fine decided for an
    occurrence of a year not listed is refused (409 naming the year)"""
    unauthorized_stop_min_s: float = Field(default=60.0, ge=60.0, le=3600.0)
    """the shortest stop, off the authorized places during a run with pupils on board, that is an unauthorized stop
    (Art. 38 IX: stopping for boarding or alighting): about what a boarding takes; not below the reports' shortest
    stop (60 s)"""
    defense_days: int = Field(default=15, ge=1, le=60)
    """the contractor's defence term (Lei 14.133/2021 Art. 157: 15 business days): business days after the
    notificação para defesa prévia (weekends, national, Rondônia and municipal holidays skipped), ending 23:59:59
    local"""

    # Dates in a plausible range (issue 33): a registry edit dated years ahead would lock its item (a later edit
    # may not start before it) until someone edits the database by hand.
    registry_max_ahead_days: int = Field(default=365, ge=0, le=3660)
    """a registry edit's `effective_from` (routes, stops, speed zones, vehicles' speed limits, route assignments)
    may be at most this many days after today in the municipality; a later date is refused (422 naming
    `effective_from`)"""

    # Expensive work (issue 33, telemetria/jobs.py): file verification, PDF and XLSX exports, the public itineraries.
    heavy_jobs_workers: int = Field(default=1, ge=1, le=64)
    """expensive jobs run at once (verifying an uploaded file, rendering a PDF or XLSX, computing the public
    itineraries); the pure CPU part of them runs in as many worker processes"""
    heavy_jobs_queue: int = Field(default=8, ge=0, le=1000)
    """expensive jobs that may wait for a turn; one more is answered 429 with `Retry-After`"""
    heavy_jobs_per_user: int = Field(default=1, ge=1, le=64)
    """expensive jobs one user (or the public area's anonymous callers together) may have running or waiting;
    one more is answered 429 ("tente novamente em N s")"""

    # Records (issue 19): the public area, off by default (docs/publication.md).
    public_enabled: bool = False
    """publish, without login, the school year's itineraries (Art. 13), each route's monthly service figures and
    the daily seal roots under `/publico` and `/public/...`; off: those addresses answer 404"""
    public_boarding_precision_m: int = Field(default=100, ge=0, le=5000)
    """boarding places are published rounded to a grid of this many metres, since a boarding point near a home
    identifies a child (LGPD Art. 14); `0`: as registered"""
    public_requests_per_s: float = Field(default=5.0, gt=0, le=1000)
    """anonymous requests to the public area each client address may make per second, on average (a burst of
    `public_burst` at once); beyond it the answer is 429 with `Retry-After`, so no one client can keep the service
    busy (issue 33)"""
    public_burst: int = Field(default=20, ge=1, le=10000)
    """requests one client address may make at once to the public area before `public_requests_per_s` applies"""
    public_refusal_hold_s: float = Field(default=1.0, ge=0, le=10)
    """seconds a refusal (429) of the public area is held before it is sent, at most the wait it names, so a client
    that asks again at once gets one refusal per connection per this many seconds instead of hundreds (at most
    1,000 held at once, then sent at once); `0`: sent at once"""

    # The SETE import (issue 35, docs/sete.md): the page imports only from this address, so a form cannot make
    # the service call any address it is given; the command line takes any `--url`.
    sete_url: str = Field(default="", max_length=500, pattern=r"^(https?://[^\s]+)?$")
    """the municipality's SETE API address (the `BASE_URL` of its SETE clients), the one the registry page imports
    from; empty: the page's import is off (`telemetria sete import --url` still works)"""

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

    @field_validator("notify_email_to")
    @classmethod
    def _addresses(cls, v: str) -> str:
        bad = [a for a in _names(v) if "@" not in a or any(c.isspace() for c in a)]
        if bad:
            raise ValueError(f"not e-mail addresses: {', '.join(bad)}")
        return v

    @field_validator("coat_of_arms_path")
    @classmethod
    def _image_file(cls, v: Path | None) -> Path | None:
        if v is not None and not v.is_file():
            raise ValueError(f"{v} is not a file")
        return v

    @field_validator("webhook_url", "public_url")
    @classmethod
    def _http_url(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            return None
        if v is not None and not v.startswith(("https://", "http://")):
            raise ValueError(f"{v!r}: an address starts with https:// or http://")
        return v

    @model_validator(mode="after")
    def _notification_parts(self) -> Settings:
        if self.webhook_url and not (self.webhook_secret and self.webhook_secret.get_secret_value()):
            raise ValueError("TELEMETRIA_WEBHOOK_URL needs TELEMETRIA_WEBHOOK_SECRET: webhook bodies are signed")
        if self.smtp_host and self.notify_email_to and not self.smtp_from:
            raise ValueError("TELEMETRIA_SMTP_HOST with TELEMETRIA_NOTIFY_EMAIL_TO needs TELEMETRIA_SMTP_FROM")
        return self

    @property
    def notify_recipients(self) -> list[str]:
        """The addresses of `notify_email_to`."""
        return _names(self.notify_email_to)

    @property
    def notify_kind_names(self) -> list[str]:
        """The names in `notify_kinds` (checked against the kinds by occurrences/notify/outbox.py, which knows them)."""
        return _names(self.notify_kinds)

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

    @field_validator("upfm_brl")
    @classmethod
    def _upfm_values(cls, v: str) -> str:
        parse_upfm_values(v)
        return v

    @property
    def upfm_values(self) -> dict[int, Decimal]:
        """The UPFM's value in R$ by year (from `upfm_brl`)."""
        return parse_upfm_values(self.upfm_brl)

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


def _names(text: str) -> list[str]:
    """The non-empty, stripped items of a comma-separated setting."""
    return [n.strip() for n in text.split(",") if n.strip()]


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

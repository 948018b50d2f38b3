# Production image of the service. The database is external (TELEMETRIA_DATABASE_URL), a
# PostgreSQL 15 server with the TimescaleDB extension available (docker-compose.yml runs one).
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY telemetria ./telemetria
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
# pg_dump/pg_restore 15 for `telemetria backup` and `telemetria restore` (Debian 12's own package,
# installed at /usr/lib/postgresql/15/bin like on the development machines).
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client-15 \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --home-dir /app telemetria \
 && mkdir -p /backups && chown telemetria /backups
WORKDIR /app
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER telemetria
# /metrics names every vehicle with the age of its last fix: in this image it needs
# TELEMETRIA_METRICS_TOKEN, and without one it is closed (403), whatever address it listens on.
ENV TELEMETRIA_HOST=0.0.0.0 TELEMETRIA_PORT=8000 TELEMETRIA_METRICS_REQUIRE_TOKEN=true PYTHONUNBUFFERED=1
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"
# Migrations first (idempotent, serialized by an advisory lock), then the service.
CMD ["sh", "-c", "telemetria migrate && exec telemetria serve"]

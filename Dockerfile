# Production image of the service. The database is external (TELEMETRIA_DATABASE_URL), a
# PostgreSQL 15 server with the TimescaleDB extension available.
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY telemetria ./telemetria
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
RUN useradd --system --uid 10001 --home-dir /app telemetria
WORKDIR /app
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
COPY migrations ./migrations
USER telemetria
ENV TELEMETRIA_HOST=0.0.0.0 TELEMETRIA_PORT=8000 PYTHONUNBUFFERED=1
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"
# Migrations first (idempotent, serialized by an advisory lock), then the service.
CMD ["sh", "-c", "telemetria migrate && exec telemetria serve"]

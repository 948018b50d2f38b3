#!/usr/bin/env bash
# Build and install TimescaleDB (Apache-2 edition) for PostgreSQL 15 from Debian 13's source package.
# Debian 12 ships no TimescaleDB; trixie's source builds cleanly against bookworm's server headers.
# The mirror is taken from this machine's own apt configuration; the system's apt state is untouched.
set -euo pipefail

PG_MAJOR=${PG_MAJOR:-15}
PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
LIBDIR=/usr/lib/postgresql/$PG_MAJOR/lib

if [ -f "$LIBDIR/timescaledb.so" ]; then
  exit 0
fi

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

# The first Debian archive URI this machine already uses (deb822 .sources or one-line .list files).
mirror_uri() {
  local uri=""
  shopt -s nullglob
  for f in /etc/apt/sources.list.d/*.sources; do
    uri=$(awk '
      /^URIs:/ { u=$2 }
      /^Suites:/ { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+$/ && $i !~ /security/) s=1 }
      /^$/ { if (u != "" && s && u !~ /security/) { print u; exit } u=""; s=0 }
      END { if (u != "" && s && u !~ /security/) print u }' "$f" | head -n 1)
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri=$(awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i ~ /^(https?|ftp|file):/) { if ($i !~ /security/ && $(i+1) !~ /security/) { print $i; exit } } }' "$f")
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
}

URI=$(mirror_uri)
if [ -z "$URI" ]; then
  echo "install-timescaledb: no Debian mirror found in /etc/apt; cannot fetch the timescaledb source" >&2
  exit 1
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/src"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb-src [signed-by=$KEYRING] $URI trixie main" > "$WORK/sources.list"
APT_OPTS=(-o "Dir::Etc::SourceList=$WORK/sources.list" -o "Dir::Etc::SourceParts=$WORK/none"
          -o "Dir::State::Lists=$WORK/lists" -o "Dir::Cache=$WORK/cache"
          -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
echo "install-timescaledb: fetching the trixie source package"
apt-get "${APT_OPTS[@]}" -qq update
(cd "$WORK/src" && apt-get "${APT_OPTS[@]}" -qq source --download-only timescaledb)
(cd "$WORK/src" && dpkg-source -x --no-check ./*.dsc tsdb >/dev/null)

echo "install-timescaledb: building (Apache-2 edition)"
cd "$WORK/src/tsdb"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DAPACHE_ONLY=1 -DREGRESS_CHECKS=OFF -DTAP_CHECKS=OFF \
  -DUSE_TELEMETRY=OFF -DSEND_TELEMETRY_DEFAULT=OFF -DWARNINGS_AS_ERRORS=OFF -DPG_CONFIG="$PG_CONFIG" >/dev/null 2> >(grep -v "not a git repository" >&2)
make -C build -j"$(nproc)" >/dev/null 2> >(grep -v "not a git repository" >&2)
$SUDO make -C build install >/dev/null
echo "install-timescaledb: installed $(ls "$LIBDIR"/timescaledb*.so | tr '\n' ' ')"

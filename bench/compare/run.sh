#!/usr/bin/env bash
# make bench-compare: Quarry and Parse Server side by side on this machine,
# with the same data, the same indexes and the same workloads, and a
# trivial fasthttp server as the ceiling. Installs what is missing (Parse
# Server from the pinned npm project beside this script, PostgreSQL and
# PostGIS from apt), runs the three targets one after the other on
# 127.0.0.1, writes bench/RESULTS.md, and stops every process it started by
# its PID.
#
# Settings (environment): DURATION (5s), WARMUP (1s), CONCURRENCY (16),
# SIZE (10000), WORKLOADS (all), QUARRY_PORT (18337), PARSE_PORT (18338),
# PGHOST (127.0.0.1), PGPORT (5432), PGUSER (postgres), OUT (bench/RESULTS.md),
# QUARRY_BIN (a prebuilt quarry to measure instead of building this tree),
# STORE (embedded, the default: buntdb in a temporary directory; or postgres:
# Quarry on a fresh database of the same PostgreSQL server Parse Server uses,
# created for the run and dropped at its end).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
START=$(date +%s)

DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
CONCURRENCY=${CONCURRENCY:-16}
SIZE=${SIZE:-10000}
WORKLOADS=${WORKLOADS:-all}
QUARRY_PORT=${QUARRY_PORT:-18337}
PARSE_PORT=${PARSE_PORT:-18338}
OUT=${OUT:-bench/RESULTS.md}
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
STORE=${STORE:-embedded}
case "$STORE" in embedded|postgres) ;; *) echo "STORE must be embedded or postgres, not $STORE" >&2; exit 2;; esac
PARSE_DB=quarry_bench_parse
QUARRY_DB=quarry_bench_quarry_$$ # with STORE=postgres; per run, so runs never share one
APP_ID=quarry-bench
MASTER_KEY=quarry-bench-master
PARSE_DIR=$ROOT/bench/compare/parse-server

WORK=$(mktemp -d /tmp/quarry-bench-compare.XXXXXX)
chmod 755 "$WORK"
PIDS=()    # every process started here, stopped by PID on exit
PG_PID=    # a private PostgreSQL, when none was running
DB_MADE=
QUARRY_DB_MADE=

log() { printf '\n== %s (%ss)\n' "$*" "$(($(date +%s) - START))" >&2; }

stop_pid() { # stop one started process by its PID and wait for it
  local pid=$1 keep=()
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  for p in "${PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
  PIDS=("${keep[@]+"${keep[@]}"}")
}

cleanup() {
  local status=$?
  set +e
  for pid in "${PIDS[@]+"${PIDS[@]}"}"; do stop_pid "$pid"; done
  if [ -n "$DB_MADE" ]; then psql_admin -c "DROP DATABASE IF EXISTS $PARSE_DB" >/dev/null 2>&1; fi
  if [ -n "$QUARRY_DB_MADE" ]; then psql_admin -c "DROP DATABASE IF EXISTS $QUARRY_DB WITH (FORCE)" >/dev/null 2>&1; fi
  if [ -n "$PG_PID" ]; then
    kill -INT "$PG_PID" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$PG_PID" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ "$status" -ne 0 ]; then
    for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- tail of $(basename "$f")"; tail -20 "$f"; }; done >&2
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
APT_UPDATED=
apt_install() {
  [ -n "$APT_UPDATED" ] || { as_root apt-get update -q >&2; APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q "$@" >&2
}
psql_admin() { psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

# --- Tools -----------------------------------------------------------------
log "tools"
command -v go >/dev/null || { echo "Go toolchain missing" >&2; exit 1; }
need=()
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if ((${#need[@]})); then apt_install "${need[@]}"; fi
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||a===20&&b>=18?0:1)' || {
  echo "Parse Server 8 needs Node.js >= 20.18; found $(node --version)" >&2; exit 1; }

# --- PostgreSQL with PostGIS -------------------------------------------------
log "PostgreSQL at $PGHOST:$PGPORT"
if ! command -v psql >/dev/null || ! psql_admin -c 'select 1' >/dev/null 2>&1; then
  # Nothing answers: run a private, throwaway cluster on that port.
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || apt_install postgresql
  bin=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
  mkdir "$WORK/pg"
  owner=()
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$WORK/pg"; owner=(runuser -u postgres --); fi
  "${owner[@]}" "$bin/initdb" -D "$WORK/pg" -A trust -U "$PGUSER" >"$WORK/initdb.log" 2>&1
  "${owner[@]}" "$bin/pg_ctl" -D "$WORK/pg" -l "$WORK/pg/server.log" -w \
    -o "-p $PGPORT -k $WORK/pg -c listen_addresses=$PGHOST" start >&2
  PG_PID=$(head -1 "$WORK/pg/postmaster.pid")
fi
if [ -z "$(psql_admin -tAc "select 1 from pg_available_extensions where name = 'postgis'")" ]; then
  major=$(( $(psql_admin -tAc 'show server_version_num') / 10000 ))
  apt_install "postgresql-$major-postgis-3"
fi
psql_admin -c "DROP DATABASE IF EXISTS $PARSE_DB" >/dev/null
psql_admin -c "CREATE DATABASE $PARSE_DB" >/dev/null
DB_MADE=1
psql -X -q -v ON_ERROR_STOP=1 -d "$PARSE_DB" -c 'CREATE EXTENSION postgis' >/dev/null
PG_VERSION=$(psql_admin -tAc 'show server_version' | cut -d' ' -f1)
POSTGIS_VERSION=$(psql -X -d "$PARSE_DB" -tAc 'select postgis_lib_version()')

# --- Parse Server (pinned) ---------------------------------------------------
log "Parse Server npm project"
if ! [ -d "$PARSE_DIR/node_modules" ] || ! [ "$PARSE_DIR/node_modules/.package-lock.json" -nt "$PARSE_DIR/package-lock.json" ]; then
  (cd "$PARSE_DIR" && npm ci --no-audit --no-fund >&2)
fi

# --- Build -------------------------------------------------------------------
log "build"
QUARRY=${QUARRY_BIN:-$WORK/quarry}
[ -n "${QUARRY_BIN:-}" ] || go build -o "$QUARRY" ./cmd/quarry
go build -o "$WORK/load" ./bench/load
LOAD=$WORK/load
setup=$("$LOAD" setup)
INDEXES=$(sed -n 's/^indexes=//p' <<<"$setup")
LIVEQUERY=$(sed -n 's/^liveQuery=//p' <<<"$setup")
COMMON=(-app-id "$APP_ID" -master-key "$MASTER_KEY" -concurrency "$CONCURRENCY"
  -duration "$DURATION" -warmup "$WARMUP" -size "$SIZE")

# run_load NAME ARGS...: a load run; exit 3 (wrong replies) is reported, not fatal.
run_load() {
  local name=$1 rc=0
  shift
  "$LOAD" "${COMMON[@]}" "$@" -json "$WORK/$name.json" 2>"$WORK/load-$name.log" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    echo "load run against $name failed:" >&2; tail -20 "$WORK/load-$name.log" >&2; exit 1
  fi
}

# --- Ceiling -------------------------------------------------------------------
log "ceiling"
"$LOAD" ceiling-server -listen 127.0.0.1:0 >"$WORK/ceiling.url" 2>"$WORK/ceiling.log" &
CEILING_PID=$!
PIDS+=("$CEILING_PID")
for _ in $(seq 50); do [ -s "$WORK/ceiling.url" ] && break; sleep 0.1; done
run_load ceiling -url "$(head -1 "$WORK/ceiling.url")" -workloads ceiling -label ceiling
stop_pid "$CEILING_PID"

# --- Quarry ------------------------------------------------------------------
COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
SUBJECT=$(git log -1 --format=%s 2>/dev/null || true)
CHANGED=$(git status --porcelain 2>/dev/null | wc -l)
COMMIT_LINE="\`$COMMIT\` ($SUBJECT)"
[ "$CHANGED" -eq 0 ] || COMMIT_LINE="$COMMIT_LINE plus uncommitted changes in $CHANGED files"
[ -z "${QUARRY_BIN:-}" ] || COMMIT_LINE="the prebuilt binary $QUARRY_BIN (the work tree was at $COMMIT_LINE)"
log "Quarry $COMMIT on the $STORE store"
QUARRY_URI=$WORK/quarry-data/quarry.db
QUARRY_STORE_INFO="embedded buntdb store (every write fsynced, group commit)"
if [ "$STORE" = postgres ]; then
  psql_admin -c "CREATE DATABASE $QUARRY_DB" >/dev/null
  QUARRY_DB_MADE=1
  QUARRY_URI="postgres://$PGUSER@$PGHOST:$PGPORT/$QUARRY_DB?sslmode=disable"
  QUARRY_STORE_INFO="PostgreSQL store (database $QUARRY_DB on the same server as Parse Server's, made for the run and dropped after it; every object also in memory; files as large objects)"
fi
"$QUARRY" --appId "$APP_ID" --masterKey "$MASTER_KEY" --host 127.0.0.1 --port "$QUARRY_PORT" \
  --databaseURI "$QUARRY_URI" --indexes "$INDEXES" --liveQuery "$LIVEQUERY" \
  --logLevel error >"$WORK/quarry.log" 2>&1 &
QUARRY_PID=$!
PIDS+=("$QUARRY_PID")
"$LOAD" wait -url "http://127.0.0.1:$QUARRY_PORT/parse" -timeout 60s -pid "$QUARRY_PID"
run_load quarry -url "http://127.0.0.1:$QUARRY_PORT/parse" -workloads "$WORKLOADS" -label "Quarry $COMMIT ($STORE)"
stop_pid "$QUARRY_PID"
if [ -n "$QUARRY_DB_MADE" ]; then
  psql_admin -c "DROP DATABASE IF EXISTS $QUARRY_DB WITH (FORCE)" >/dev/null
  QUARRY_DB_MADE=
fi

# --- Parse Server --------------------------------------------------------------
log "Parse Server"
cat >"$WORK/parse-config.json" <<EOF
{
  "appId": "$APP_ID",
  "masterKey": "$MASTER_KEY",
  "databaseURI": "postgres://$PGUSER@$PGHOST:$PGPORT/$PARSE_DB",
  "host": "127.0.0.1",
  "port": $PARSE_PORT,
  "mountPath": "/parse",
  "serverURL": "http://127.0.0.1:$PARSE_PORT/parse",
  "logLevel": "error",
  "logsFolder": "$WORK/parse-logs",
  "startLiveQueryServer": true,
  "liveQuery": $LIVEQUERY
}
EOF
cd "$WORK"
node "$PARSE_DIR/node_modules/parse-server/bin/parse-server" "$WORK/parse-config.json" >"$WORK/parse.log" 2>&1 &
PARSE_PID=$!
PIDS+=("$PARSE_PID")
cd "$ROOT"
"$LOAD" wait -url "http://127.0.0.1:$PARSE_PORT/parse" -timeout 120s -pid "$PARSE_PID"
run_load parse -url "http://127.0.0.1:$PARSE_PORT/parse" -workloads "$WORKLOADS"
stop_pid "$PARSE_PID"

# --- Report --------------------------------------------------------------------
log "report"
PARSE_VERSION=$(node -p "require('$PARSE_DIR/node_modules/parse-server/package.json').version")
"$LOAD" compare -out "$OUT" -ceiling "$WORK/ceiling.json" -since "$START" \
  -commit "$COMMIT_LINE" \
  -info "Quarry: built from that commit, $QUARRY_STORE_INFO, started with \`--indexes $INDEXES --liveQuery '$LIVEQUERY'\`" \
  -info "Parse Server $PARSE_VERSION (npm, pinned in bench/compare/parse-server) on Node $(node --version), PostgreSQL $PG_VERSION with PostGIS $POSTGIS_VERSION (synchronous_commit $(psql_admin -tAc 'show synchronous_commit')); the same indexes made through its schema API" \
  "$WORK/quarry.json" "$WORK/parse.json"
log "done: $OUT"

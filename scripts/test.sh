#!/usr/bin/env bash
# `make test`: lint, format check and the whole pytest suite, on both backends.
# Database: DATABASE_URL if set; else a local PostgreSQL on 127.0.0.1:5432 when one answers;
# else SQLite. On PostgreSQL, a second pass runs the suite on the embedded SQLite default at the
# same time (money must be exact on both); MAKE_TEST_ONE_BACKEND=1 skips it. Redis for the
# end-to-end queue tests: TEST_REDIS_URL, default 127.0.0.1:6379/15 (the SQLite pass beside
# it: TEST_REDIS_URL_SQLITE, default 127.0.0.1:6379/8).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

if [ -z "${DATABASE_URL:-}" ]; then
  if $PY - <<'PYCODE' 2>/dev/null
import psycopg
psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=2).close()
PYCODE
  then
    export DATABASE_URL="postgres://postgres@127.0.0.1:5432/test"
  fi
fi
if [ -n "${DATABASE_URL:-}" ]; then
  echo "make test: database ${DATABASE_URL%%:*} ($(echo "$DATABASE_URL" | sed -E 's#//[^@]*@#//#'))"
else
  echo "make test: database SQLite (no PostgreSQL answered on 127.0.0.1:5432)"
fi
# The checkout browser test drives Debian's Chromium; install it when we can.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "make test: installing chromium for the browser test"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "make test: chromium could not be installed; the browser test will be skipped"
fi
export TEST_REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/15}"

.venv/bin/ruff check .
.venv/bin/ruff format --check .
status=0
if [[ "${DATABASE_URL:-}" == postgres* ]] && [ -z "${MAKE_TEST_ONE_BACKEND:-}" ]; then
  # The SQLite pass runs beside the PostgreSQL one (the suite spends much of its time waiting
  # on databases and processes), with a var/ of its own (its database file, the filesystem
  # broker) and its own Redis database; its output follows the first pass's.
  sqlite_var="$PWD/var/test-sqlite-pass"
  sqlite_log="$(mktemp)"
  trap 'rm -f "$sqlite_log"' EXIT
  mkdir -p "$sqlite_var"
  env -u DATABASE_URL -u REQUIRE_POSTGRES VAR_DIR="$sqlite_var" \
    TEST_REDIS_URL="${TEST_REDIS_URL_SQLITE:-redis://127.0.0.1:6379/8}" \
    $PY -m pytest "$@" >"$sqlite_log" 2>&1 &
  sqlite_pid=$!
  echo "make test: PostgreSQL pass (the SQLite pass runs beside it)"
  $PY -m pytest "$@" || status=$?
  sqlite_status=0
  wait "$sqlite_pid" || sqlite_status=$?
  echo "make test: the pass on the embedded default, SQLite (exit $sqlite_status)"
  cat "$sqlite_log"
  [ "$sqlite_status" -eq 0 ] || status=$sqlite_status
else
  $PY -m pytest "$@" || status=$?
fi
exit $status

#!/usr/bin/env bash
# `make test`: lint, format check and the whole pytest suite, on both backends.
# Database: DATABASE_URL if set; else a local PostgreSQL on 127.0.0.1:5432 when one answers;
# else SQLite. When the first pass ran on PostgreSQL, a second pass runs the suite again on the
# embedded SQLite default (money must be exact on both); MAKE_TEST_ONE_BACKEND=1 skips it.
# Redis for the end-to-end queue tests: TEST_REDIS_URL, default 127.0.0.1:6379/15.
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
$PY -m pytest "$@" || status=$?
if [[ "${DATABASE_URL:-}" == postgres* ]] && [ -z "${MAKE_TEST_ONE_BACKEND:-}" ]; then
  echo "make test: second pass on the embedded default, SQLite"
  env -u DATABASE_URL -u REQUIRE_POSTGRES $PY -m pytest "$@" || status=$?
fi
exit $status

#!/usr/bin/env bash
# `make test`: lint, format check, type check and the whole pytest suite on PostgreSQL.
# With arguments (`make test-fast`), one pytest run with those arguments.
# Database: DATABASE_URL if set; else a local PostgreSQL on 127.0.0.1:5432 when one answers;
# else the one in .env; else the embedded server of `make run` (scripts/embedded_db.py),
# started under var/test-postgres and stopped at exit. Redis for the end-to-end queue tests: TEST_REDIS_URL,
# default 127.0.0.1:6379/15.
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
  elif ! grep -qsE '^[[:space:]]*DATABASE_URL=' .env; then
    test_var="$PWD/var/test-postgres"
    DATABASE_URL=$($PY scripts/embedded_db.py start "$test_var") || exit 1
    export DATABASE_URL
    trap '$PY scripts/embedded_db.py stop "$test_var"' EXIT
    echo "make test: no PostgreSQL answered on 127.0.0.1:5432; started the embedded one"
  fi
fi
echo "make test: database $(echo "${DATABASE_URL:-from .env}" | sed -E 's#//[^@]*@#//#')"
# The checkout browser test drives Debian's Chromium; install it when we can.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "make test: installing chromium for the browser test"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "make test: chromium could not be installed; the browser test will be skipped"
fi
# tests/pgbouncer run the concurrency tests through a private PgBouncer (scripts/pgbouncer.py):
# install Debian's package when we can (its own service is never started).
$PY scripts/pgbouncer.py install >/dev/null \
  || echo "make test: pgbouncer could not be installed; the PgBouncer tests will be skipped"
export TEST_REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/15}"
# Python keeps its bytecode caches (__pycache__/, ignored by git) even where the environment
# turns them off: the suite starts hundreds of interpreters (probes, workers, web servers,
# `make run`), each of which would otherwise compile every module of the project again, and
# pytest keeps its rewritten test modules there too.
unset PYTHONDONTWRITEBYTECODE

.venv/bin/ruff check .
.venv/bin/ruff format --check .
# Types of the production code ([tool.mypy] in pyproject.toml; cache in var/mypy).
.venv/bin/mypy
if [ "$#" -gt 0 ]; then
  exec $PY -m pytest "$@"
fi
# `make test`, in two lanes, each lane's failures reported even when the other fails:
# every test that runs in this process alone, and the probes (fresh interpreters that share
# nothing), side by side in one pytest-xdist worker per core (each worker on a test database of
# its own); then the tests that start workers, web servers or `make run`, or drive Chromium, one
# at a time, since their timings assume the machine is theirs. Each lane ends with its slowest
# tests, where the suite's time goes.
status=0
$PY -m pytest -m "probe or not (multiprocess or browser)" -n auto --durations=15 || status=$?
$PY -m pytest -m "(multiprocess or browser) and not probe" --durations=15 || status=$?
exit $status

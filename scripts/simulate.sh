#!/usr/bin/env bash
# `make simulate SEED=… STEPS=…`: the money-core simulator with a long budget, once, on
# PostgreSQL: DATABASE_URL, else 127.0.0.1:5432 when one answers, else the embedded server
# (scripts/embedded_db.py) under var/test-postgres, stopped at exit.
# STEPS is the total number of steps, in sequences of STEPS_PER_SEQUENCE (50).
# A failure prints the shortened failing sequence; the same SEED and STEPS run it again.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
SEED="${SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
STEPS="${STEPS:-10000}"
PER="${STEPS_PER_SEQUENCE:-50}"
EXAMPLES=$(( (STEPS + PER - 1) / PER ))
echo "make simulate: SEED=$SEED STEPS=$STEPS ($EXAMPLES sequences of up to $PER steps)"

if [ -z "${DATABASE_URL:-}" ] && $PY - <<'PYCODE' 2>/dev/null
import psycopg
psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=2).close()
PYCODE
then
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/test"
elif [ -z "${DATABASE_URL:-}" ]; then
  test_var="$PWD/var/test-postgres"
  DATABASE_URL=$($PY scripts/embedded_db.py start "$test_var") || exit 1
  export DATABASE_URL
  trap '$PY scripts/embedded_db.py stop "$test_var"' EXIT
fi

started=$SECONDS
SIM_SEED="$SEED" SIM_EXAMPLES="$EXAMPLES" SIM_STEPS="$PER" \
  $PY -m pytest tests/simulation -p no:randomly -x -q --hypothesis-seed="$SEED" \
  || { echo "make simulate: FAILED — run again with: make simulate SEED=$SEED STEPS=$STEPS"; exit 1; }
echo "make simulate: passed in $(( SECONDS - started )) s"

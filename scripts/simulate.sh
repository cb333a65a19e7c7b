#!/usr/bin/env bash
# `make simulate SEED=… STEPS=…`: the money-core simulator with a long budget, on PostgreSQL
# (when one answers on 127.0.0.1:5432, or DATABASE_URL) and on the embedded SQLite default.
# STEPS is the total number of steps per backend, in sequences of STEPS_PER_SEQUENCE (50).
# A failure prints the shortened failing sequence; the same SEED and STEPS run it again.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
SEED="${SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
STEPS="${STEPS:-10000}"
PER="${STEPS_PER_SEQUENCE:-50}"
EXAMPLES=$(( (STEPS + PER - 1) / PER ))
echo "make simulate: SEED=$SEED STEPS=$STEPS ($EXAMPLES sequences of up to $PER steps per backend)"

if [ -z "${DATABASE_URL:-}" ] && $PY - <<'PYCODE' 2>/dev/null
import psycopg
psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=2).close()
PYCODE
then
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/test"
fi

run() {
  local name="$1"; shift
  local started=$SECONDS
  echo "make simulate: $name"
  env "$@" SIM_SEED="$SEED" SIM_EXAMPLES="$EXAMPLES" SIM_STEPS="$PER" \
    $PY -m pytest tests/simulation -p no:randomly -x -q --hypothesis-seed="$SEED" \
    || { echo "make simulate: FAILED on $name — run again with: make simulate SEED=$SEED STEPS=$STEPS"; exit 1; }
  echo "make simulate: $name passed in $(( SECONDS - started )) s"
}
if [[ "${DATABASE_URL:-}" == postgres* ]]; then
  run PostgreSQL DATABASE_URL="$DATABASE_URL"
fi
run SQLite -u DATABASE_URL

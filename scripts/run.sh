#!/usr/bin/env bash
# `make run`: migrate, seed a demo merchant on the first start, then web + worker + beat.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export PATH="$PWD/.venv/bin:$PATH"
export PORT="${PORT:-8000}"
export CHECKOUT_BASE_URL="${CHECKOUT_BASE_URL:-http://127.0.0.1:${PORT}}"
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-config.settings.local}"
VAR_DIR="${VAR_DIR:-var}"
export VAR_DIR
mkdir -p "$VAR_DIR"

$PY manage.py migrate --noinput -v0
$PY manage.py collectstatic --noinput -v0

CREDENTIALS="$VAR_DIR/demo_credentials.json"
if [ ! -s "$CREDENTIALS" ]; then
  $PY manage.py seed_demo --json > "$CREDENTIALS.tmp"
  mv "$CREDENTIALS.tmp" "$CREDENTIALS"
  chmod 600 "$CREDENTIALS"
  echo "Seeded a demo merchant (credentials kept in $CREDENTIALS)."
fi
TEST_KEY=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["secret_key"])' "$CREDENTIALS")
cat <<MSG

  Service:   http://127.0.0.1:${PORT}   (API docs: http://127.0.0.1:${PORT}/api/docs/)
  Test key:  ${TEST_KEY}
  Try:       curl -H "Authorization: Bearer ${TEST_KEY}" http://127.0.0.1:${PORT}/api/v1/transactions/bank

MSG
# Counters of the previous run's processes start again from zero (prometheus-client keeps them
# in files, one per process, summed by /metrics).
rm -rf "${METRICS_MULTIPROC_DIR:-$VAR_DIR/prometheus}"
exec .venv/bin/honcho start -f Procfile -p "$PORT"

#!/usr/bin/env bash
# `make run`: migrate, seed a demo merchant and staff users on the first start, then web, the
# money and webhook workers and beat (the Procfile).
# Database: DATABASE_URL if set (here or in .env); else a private PostgreSQL server
# (scripts/embedded_db.py) with its data under $VAR_DIR/postgres, started here and stopped
# when the service stops.
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

# (A DATABASE_URL in .env counts as set: the settings read it.)
if [ -z "${DATABASE_URL:-}" ] && ! grep -qsE '^[[:space:]]*DATABASE_URL=' .env; then
  DATABASE_URL=$($PY scripts/embedded_db.py start "$VAR_DIR") || exit 1
  export DATABASE_URL
  trap '$PY scripts/embedded_db.py stop "$VAR_DIR"' EXIT
  echo "Database: embedded PostgreSQL under $VAR_DIR/postgres (stops with the service)."
fi

$PY manage.py migrate --noinput -v0
$PY manage.py collectstatic --noinput -v0

CREDENTIALS="$VAR_DIR/demo_credentials.json"
if [ ! -s "$CREDENTIALS" ]; then
  $PY manage.py seed_demo --json > "$CREDENTIALS.tmp"
  mv "$CREDENTIALS.tmp" "$CREDENTIALS"
  chmod 600 "$CREDENTIALS"
  echo "Seeded a demo merchant (credentials kept in $CREDENTIALS)."
fi
# Development staff users, one per back-office role (seed_staff refuses with DEBUG off).
STAFF_CREDENTIALS="$VAR_DIR/staff_credentials.json"
if [ ! -s "$STAFF_CREDENTIALS" ]; then
  if $PY manage.py seed_staff --dev --json > "$STAFF_CREDENTIALS.tmp"; then
    chmod 600 "$STAFF_CREDENTIALS.tmp"
    mv "$STAFF_CREDENTIALS.tmp" "$STAFF_CREDENTIALS"
    echo "Created development staff users (passwords kept in $STAFF_CREDENTIALS)."
  else
    rm -f "$STAFF_CREDENTIALS.tmp"
  fi
fi
STAFF_SIGN_IN=""
if [ -s "$STAFF_CREDENTIALS" ]; then
  STAFF_SIGN_IN=$($PY -c 'import json,sys
for user in json.load(open(sys.argv[1]))["users"]:
    print("             %-8s %s   (%s)" % (user["username"], user["password"], user["role"]))' "$STAFF_CREDENTIALS")
fi
TEST_KEY=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["secret_key"])' "$CREDENTIALS")
cat <<MSG

  Service:   http://127.0.0.1:${PORT}   (API docs: http://127.0.0.1:${PORT}/api/docs/)
  Test key:  ${TEST_KEY}
  Try:       curl -H "Authorization: Bearer ${TEST_KEY}" http://127.0.0.1:${PORT}/api/v1/transactions/bank
  Back office: http://127.0.0.1:${PORT}/admin/   sign in as one of (username, password, role):
${STAFF_SIGN_IN:-             (none created here: DEBUG is off, or they exist from an earlier start; set a password with manage.py changepassword amaka, or manage.py createsuperuser)}

MSG
# Counters of the previous run's processes start again from zero (prometheus-client keeps them
# in files, one per process, summed by /metrics).
rm -rf "${METRICS_MULTIPROC_DIR:-$VAR_DIR/prometheus}"
# honcho runs in the background so that a signal to this script alone (not only Ctrl-C to the
# whole process group) stops it too; the EXIT trap then stops the embedded database.
.venv/bin/honcho start -f Procfile -p "$PORT" &
honcho_pid=$!
trap 'kill -TERM "$honcho_pid" 2>/dev/null || true' INT TERM
status=0
while kill -0 "$honcho_pid" 2>/dev/null; do
  wait "$honcho_pid" || status=$?
done
exit "$status"

#!/usr/bin/env bash
# `make bench`: installs what the benchmark needs, then runs benchmarks/bench.py (see its
# docstring for the steps and the environment it reads). Exits non-zero when the gate fails.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
command -v pgbench >/dev/null || need_apt+=(postgresql-client)
command -v psql >/dev/null || need_apt+=(postgresql-client)
# PgBouncer for the pair of runs through it (benchmarks/harness/pgbouncer.py; /usr/sbin is not
# always on PATH). Its package's own service is never started.
if [ "${BENCH_PGBOUNCER:-}" != "0" ] && ! .venv/bin/python scripts/pgbouncer.py install >/dev/null 2>&1; then
  echo "make bench: pgbouncer could not be installed; the PgBouncer pair will be skipped" >&2
fi
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "make bench: installing ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "make bench: please install ${need_apt[*]} (Debian: apt-get install ${need_apt[*]})" >&2
    exit 2
  fi
fi
# py-spy profiles the create path; it comes with the dev dependencies.
test -x .venv/bin/py-spy || .venv/bin/python -m pip install -q "py-spy>=0.3.14,<1" || true

exec .venv/bin/python -m benchmarks.bench "$@"

#!/usr/bin/env bash
# `make bench`: installs what the benchmark needs, then runs benchmarks/bench.py (see its
# docstring for the steps and the environment it reads). Exits non-zero when the gate fails.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
command -v pgbench >/dev/null || need_apt+=(postgresql-client)
command -v psql >/dev/null || need_apt+=(postgresql-client)
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

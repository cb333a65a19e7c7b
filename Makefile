# Two commands do everything on a fresh machine with Python 3.11: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8000

.PHONY: install run test test-fast lint format bench simulate migrate clean lock

# requirements.lock pins every dependency (pip constraints) to the versions the tests pass with.
$(STAMP): pyproject.toml requirements.lock
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -c requirements.lock -e ".[dev]"
	@touch $(STAMP)

# Re-pin after changing pyproject.toml's dependencies: resolve afresh, then record the versions.
lock:
	$(PY) -m pip install -q --disable-pip-version-check --upgrade -e ".[dev]"
	@{ sed -n '1,3p' requirements.lock; $(PY) -m pip freeze --exclude-editable; } > requirements.lock.new
	@mv requirements.lock.new requirements.lock

install: $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

run: install
	@PORT=$(PORT) bash scripts/run.sh

test: install
	@bash scripts/test.sh

# The lane to run while working (a couple of minutes): ruff, then every test not marked slow,
# browser, multiprocess or simulation, with Hypothesis's `fast` profile, in one
# pytest-xdist worker per core (each with a fresh test database: the data migrations' rows, such
# as the staff roles, do not survive a kept database's flushes).
FAST_TESTS := not slow and not browser and not multiprocess and not simulation
test-fast: install
	@bash scripts/test.sh -m "$(FAST_TESTS)" --hypothesis-profile=fast -n auto

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: install
	@bash benchmarks/run.sh

# The money-core simulator with a long budget: make simulate SEED=123 STEPS=100000
simulate: install
	@SEED="$(SEED)" STEPS="$(STEPS)" bash scripts/simulate.sh

clean:
	rm -rf var/broker var/staticfiles var/celerybeat-schedule*

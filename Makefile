# Two commands do everything on a fresh machine with Python 3.11: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8000

.PHONY: install run test lint format bench simulate migrate clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

run: install
	@PORT=$(PORT) bash scripts/run.sh

test: install
	@bash scripts/test.sh

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

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

"""``make bench``'s modules: each imports, says what it owns and stays small; the report writer
renders the recorded run (``benchmarks/results/latest.json``) exactly as that run wrote
``latest.md``, and computes the same figures; ``--help`` prints the steps and starts nothing; the
workers the bench starts consume every queue the service publishes to."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import shlex
import subprocess
from pathlib import Path

import pytest

import benchmarks.harness
from benchmarks import bench
from benchmarks.harness.config import RESULTS_DIR, Config
from benchmarks.harness.metrics import metrics
from benchmarks.harness.report import markdown
from benchmarks.harness.services import worker_commands, worker_env
from tests.celery_worker import project_queues

MODULES = [
    "benchmarks.bench",
    "benchmarks.harness",
    *(
        f"benchmarks.harness.{info.name}"
        for info in pkgutil.iter_modules(benchmarks.harness.__path__)
    ),
]


@pytest.mark.parametrize("name", MODULES)
def test_module_imports_with_an_opening_docstring_and_under_500_lines(name: str) -> None:
    module = importlib.import_module(name)
    source = Path(module.__file__).read_text()

    assert ast.get_docstring(ast.parse(source))
    assert len(source.splitlines()) <= 500


def test_markdown_of_the_recorded_run_is_the_recorded_report() -> None:
    results = json.loads((RESULTS_DIR / "latest.json").read_text())

    assert markdown(results) == (RESULTS_DIR / "latest.md").read_text()


def test_metrics_of_the_recorded_run_are_the_recorded_figures() -> None:
    results = json.loads((RESULTS_DIR / "latest.json").read_text())

    assert metrics(results) == results["metrics"]


def test_help_prints_the_steps_and_runs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--help"]) == 0

    assert "`make bench`" in capsys.readouterr().out


@pytest.mark.multiprocess
def test_the_bench_workers_consume_every_queue_of_the_service() -> None:
    env = worker_env(Config())
    consumed: set[str] = set()
    for command in worker_commands().values():
        # The command as the bench's shell expands it, from the environment the bench gives it.
        shell, flag, line = command
        words = shlex.split(
            subprocess.run(
                [shell, flag, line.replace("exec ", "echo ", 1)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        assert "-Q" in words, line
        consumed.update(words[words.index("-Q") + 1].split(","))

    assert set(project_queues()) <= consumed

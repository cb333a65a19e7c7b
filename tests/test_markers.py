"""Test modules that start processes or drive Chromium carry the marker that keeps them out of
`make test-fast`: `multiprocess` or `browser`, on the module (`pytestmark`), on the tests that do
it, or on their whole directory (``DIRECTORY_MARKERS`` in tests/conftest.py). Read from the
source, so a new module that forgets its marker fails here rather than slowing the fast lane."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import DIRECTORY_MARKERS, TESTS

STARTS_PROCESSES = re.compile(
    r"subprocess\.(run|Popen|call|check_call|check_output)\("
    r"|celery_worker_(running|start)\(|procfile_workers_running\(|\bprocess_start\("
    r"|service_running\("
    r"|processes\.(web|worker|manage|start)\("
    r"|\bstack: Stack\b"
)
DRIVES_CHROMIUM = re.compile(r"chromium_context\(")
# What a `probe` module may not do: make test runs probes side by side with other tests, so
# they start no worker, service, server or browser and touch no socket, Redis or clock.
SHARES_OR_TIMES = re.compile(
    r"celery_worker_(running|start)\(|procfile_workers_running\(|service_running\("
    r"|processes\.(web|worker|start)\(|\bprocess_start\(|\bstack: Stack\b|subprocess\.Popen\("
    r"|free_port\(|\bsocket\.|\bredis\.|chromium_context\(|time\.(sleep|monotonic)\("
)


def _unmarked(starts: re.Pattern[str], marker: str) -> list[str]:
    unmarked = []
    for module in sorted(TESTS.rglob("test_*.py")):
        if module == Path(__file__):
            continue
        source = module.read_text()
        directory = module.relative_to(TESTS).parts[0]
        marked = f"pytest.mark.{marker}" in source or marker in DIRECTORY_MARKERS.get(directory, ())
        if starts.search(source) and not marked:
            unmarked.append(str(module.relative_to(TESTS.parent)))
    return unmarked


def test_modules_that_start_processes_are_marked_multiprocess() -> None:
    assert _unmarked(STARTS_PROCESSES, "multiprocess") == []


def test_modules_that_drive_chromium_are_marked_browser() -> None:
    assert _unmarked(DRIVES_CHROMIUM, "browser") == []


def test_probes_are_multiprocess_and_share_nothing() -> None:
    """A probe stays out of `make test-fast` (it is multiprocess too) and, since `make test`
    runs it beside other tests, starts nothing that listens, queues or is timed."""
    offending = []
    for module in sorted(TESTS.rglob("test_*.py")):
        source = module.read_text()
        if module == Path(__file__) or "pytest.mark.probe" not in source:
            continue
        name = str(module.relative_to(TESTS.parent))
        if source.count("pytest.mark.probe") > source.count("pytest.mark.multiprocess"):
            offending.append(f"{name}: a probe not marked multiprocess")
        if found := SHARES_OR_TIMES.search(source):
            offending.append(f"{name}: {found.group(0)}")
    assert offending == []


def test_the_patterns_recognise_what_they_look_for() -> None:
    assert STARTS_PROCESSES.search("result = subprocess.run([sys.executable])")
    assert STARTS_PROCESSES.search("with celery_worker_running(tmp_path, queue=queue):")
    assert STARTS_PROCESSES.search("with procfile_workers_running(tmp_path, broker_url=url):")
    assert STARTS_PROCESSES.search("web, base_url = processes.web('web-1')")
    assert DRIVES_CHROMIUM.search("with chromium_context(tmp_path, what='checkout') as context:")
    assert not STARTS_PROCESSES.search("from tests.celery_worker import celery_client_reset")
    assert SHARES_OR_TIMES.search("port = free_port()")
    assert SHARES_OR_TIMES.search("with service_running(tmp_path) as service:")
    assert SHARES_OR_TIMES.search("client = redis.Redis.from_url(url)")
    assert not SHARES_OR_TIMES.search("result = subprocess.run([sys.executable, '-c', script])")

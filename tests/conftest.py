"""Fixtures shared by every test module."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from merchants.models import Mode
from merchants.services import MerchantCreated, merchant_create
from tests.service_process import RunningService, service_running

TESTS = Path(__file__).resolve().parent

# --- The fast lane -------------------------------------------------------------------------------
# `make test-fast` deselects the tests marked slow, browser, multiprocess or simulation (markers
# registered in pyproject.toml) and runs Hypothesis under the `fast` profile. Modules carry their
# markers in `pytestmark` (or on single tests); whole directories are marked here.
DIRECTORY_MARKERS: dict[str, tuple[str, ...]] = {
    # Real provider timeouts, killed database backends, killed workers, a broker that is down.
    "faults": ("slow", "multiprocess"),
    # Schemathesis against every operation of the schema: a few minutes.
    "fuzz": ("slow",),
    # The money-core simulator: 100 sequences of 50 steps.
    "simulation": ("simulation", "slow"),
}

# Hypothesis profiles: `default` is Hypothesis's own (what `make test` runs); `fast` generates
# fewer cases, so invariants still get generated cases in the fast lane. Chosen with
# `--hypothesis-profile=fast` or HYPOTHESIS_PROFILE=fast.
FAST_PROFILE = "fast"
FAST_MAX_EXAMPLES = 10
hypothesis_settings.register_profile(FAST_PROFILE, max_examples=FAST_MAX_EXAMPLES)
if os.environ.get("HYPOTHESIS_PROFILE"):
    hypothesis_settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])


def _fast_profile_loaded(config: pytest.Config) -> bool:
    chosen = config.getoption("hypothesis_profile", None) or os.environ.get("HYPOTHESIS_PROFILE")
    return chosen == FAST_PROFILE


def _examples_capped(item: pytest.Item, cap: int) -> None:
    """A test whose own ``@settings`` asks for more examples than ``cap`` runs ``cap`` of them.

    Hypothesis gives a test's explicit settings precedence over the loaded profile, and a test may
    be decorated with ``@settings`` only once, so the cap replaces the settings ``@given`` reads
    when the test runs (the attribute it keeps them in)."""
    function = getattr(item, "function", None)
    if not getattr(function, "is_hypothesis_test", False):
        return
    current = function._hypothesis_internal_use_settings  # type: ignore[union-attr]
    if current.max_examples > cap:
        function._hypothesis_internal_use_settings = hypothesis_settings(  # type: ignore[union-attr]
            current, max_examples=cap
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    fast = _fast_profile_loaded(config)
    for item in items:
        path = item.path.resolve()
        if TESTS in path.parents:
            for name in DIRECTORY_MARKERS.get(path.relative_to(TESTS).parts[0], ()):
                item.add_marker(getattr(pytest.mark, name))
        if fast:
            _examples_capped(item, FAST_MAX_EXAMPLES)
    items.sort(key=_make_run_order)


def _make_run_order(item: pytest.Item) -> int:
    """The tests on the shared `make run` (``make_run_service``) run last, in their collection
    order, and the one that stops it (``make_run_service_to_stop``) after all of them, so the
    service runs only while its tests do (the sort is stable: every other test keeps its place)."""
    names = getattr(item, "fixturenames", ())
    if "make_run_service_to_stop" in names:
        return 2
    return 1 if "make_run_service" in names else 0


@pytest.fixture(scope="session")
def make_run_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    """One `make run` start (``scripts/run.sh`` on the embedded defaults: an initdb and every
    migration) shared by the tests that call the service as a user would: the smoke checks, the
    README and docs examples, the slow clients. Stopped at the end of the session if no test
    stopped it."""
    with service_running(tmp_path_factory.mktemp("make-run")) as service:
        yield service


@pytest.fixture
def make_run_service_to_stop(make_run_service: RunningService) -> RunningService:
    """The shared `make run`, for the test that stops it: ordered after every other test on it."""
    return make_run_service


@pytest.fixture(autouse=True)
def _clear_cache() -> None:
    """Each test starts with an empty cache and empty per-process memos: no stale bank list or
    fee tiers from rolled-back rows, no rate-limit counters, no dispatch wake interval left
    open by an earlier test."""
    from django.core.cache import cache

    from core.memo import local_memos_clear
    from payouts.tasks import dispatch_wake

    cache.clear()
    local_memos_clear()
    dispatch_wake.reset()


@pytest.fixture(params=["redis", "rabbitmq"])
def celery_broker(request: pytest.FixtureRequest) -> str:
    """The broker an end-to-end queue test runs on: each such test runs once on Redis and once
    on RabbitMQ (``tests.celery_worker.BROKERS``, ``broker_url_for``)."""
    return str(request.param)


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def merchant_account(db: None) -> MerchantCreated:
    """A merchant created through the service: test and live keys, wallets per mode."""
    return merchant_create(name="Ade Stores", email="ade@example.com")


@pytest.fixture
def client_for() -> Callable[[str], APIClient]:
    def build(plaintext_key: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext_key}")
        return client

    return build


@pytest.fixture
def test_client(merchant_account: MerchantCreated, client_for) -> APIClient:
    """An API client authenticated with the merchant's test key."""
    return client_for(merchant_account.test_key.plaintext)


@pytest.fixture
def live_client(merchant_account: MerchantCreated, client_for) -> APIClient:
    return client_for(merchant_account.live_key.plaintext)


@pytest.fixture
def test_mode() -> str:
    return Mode.TEST

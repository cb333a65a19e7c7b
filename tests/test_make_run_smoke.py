"""Boots the service the way `make run` does, on embedded defaults (its own PostgreSQL server on a
Unix socket under ``var/``, the filesystem broker, gunicorn + a real Celery worker + beat under
honcho), calls it, runs every example of the README and the docs on it
(tests/doc_examples.py), and stops it with Ctrl-C: the database server stops with it.
One start serves every check here and the slow-client tests (``make_run_service`` in
tests/conftest.py: each start costs an initdb and every migration); the Ctrl-C check runs after
all of them."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import psycopg
import pytest
import requests

from tests.doc_examples import examples_run
from tests.service_process import RunningService, wait_for

pytestmark = [pytest.mark.multiprocess]


def wait_for_text(url: str, text: str, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in requests.get(url, timeout=10).text:
        assert time.monotonic() < deadline, f"{text} not in {url} after {timeout}s"
        time.sleep(0.5)


@pytest.fixture
def running_service(make_run_service: RunningService) -> RunningService:
    """The session's one `make run` start (tests/conftest.py), shared with the slow-client
    tests; the checks here run first on it, while it is fresh."""
    return make_run_service


def _admin_sign_in(base: str, username: str, password: str) -> None:
    session = requests.Session()
    form = session.get(f"{base}/admin/login/?next=/admin/", timeout=5)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    assert token is not None, form.text[:500]
    signed_in = session.post(
        f"{base}/admin/login/?next=/admin/",
        data={
            "csrfmiddlewaretoken": token.group(1),
            "username": username,
            "password": password,
            "next": "/admin/",
        },
        headers={"Referer": f"{base}/admin/login/"},
        timeout=10,
    )
    assert signed_in.url.rstrip("/").endswith("/admin"), signed_in.text[:500]
    assert 'href="/api/docs/"' in signed_in.text  # "View site" leads to the API docs


def test_make_run_serves_on_embedded_defaults(running_service: RunningService) -> None:
    base = running_service.base_url
    health = wait_for(f"{base}/healthz", timeout=90)
    assert health.status_code == 200, running_service.log.read_text()

    credentials = json.loads((running_service.var / "demo_credentials.json").read_text())
    output = running_service.log.read_text()
    assert credentials["secret_key"] in output  # the test key is printed for the user
    assert (running_service.var / "postgres" / "data" / "PG_VERSION").exists()

    # One development staff user per role, kept private and printed; the printed password
    # signs in to the back office.
    staff_file = running_service.var / "staff_credentials.json"
    assert staff_file.stat().st_mode & 0o777 == 0o600
    staff = {user["username"]: user for user in json.loads(staff_file.read_text())["users"]}
    assert staff["amaka"]["role"] == "finance_operator"
    assert all(user["password"] in output for user in staff.values())
    assert f"{base}/admin/" in output
    _admin_sign_in(base, "amaka", staff["amaka"]["password"])

    # Ready once the worker pools and beat have beaten (core.heartbeats, files under VAR_DIR).
    deadline = time.monotonic() + 60
    ready = requests.get(f"{base}/readyz", timeout=5)
    while not all((ready.json()["data"] or {"-": False}).values()):
        assert time.monotonic() < deadline, ready.text
        time.sleep(0.5)
        ready = requests.get(f"{base}/readyz", timeout=5)
    assert ready.json()["data"] == {
        "database": True,
        "broker": True,
        "worker": True,
        "beat": True,
        "webhooks_worker": True,
    }, ready.text
    assert "payouts_pending" in requests.get(f"{base}/metrics", timeout=10).text

    headers = {"Authorization": f"Bearer {credentials['secret_key']}"}
    wallet_url = f"{base}/api/v1/transactions/in/merchant-wallet"
    before = requests.get(wallet_url, headers=headers, timeout=5).json()["data"]
    assert before["available_balance"] == "1000000.00"  # the demo wallet's funding
    banks = requests.get(f"{base}/api/v1/transactions/bank", headers=headers, timeout=5)
    assert banks.status_code == 200
    assert banks.json()["status"] is True
    assert len(banks.json()["data"]) >= 20

    refused = requests.get(f"{base}/api/v1/transactions/bank", timeout=5)
    assert refused.status_code == 401

    # The real worker on the filesystem broker takes a payout from reserved to successful.
    created = requests.post(
        f"{base}/api/v1/transactions/in/merchant-wallet/payouts",
        headers=headers,
        json={
            "account_number": "0123456789",
            "bank_code": "058",
            "amount": "1500.00",
            "idempotency_key": "smoke-payout-1",
        },
        timeout=10,
    )
    assert created.status_code == 202, created.text
    payout_id = created.json()["data"]["payout"]["id"]
    deadline = time.monotonic() + 60
    status = created.json()["data"]["payout"]["status"]
    while status != "successful" and time.monotonic() < deadline:
        time.sleep(0.5)
        details = requests.get(
            f"{base}/api/v1/transactions/in/merchant-wallet/payouts/{payout_id}",
            headers=headers,
            timeout=5,
        )
        status = details.json()["data"]["status"]
    assert status == "successful", running_service.log.read_text()[-3000:]
    wallet = requests.get(wallet_url, headers=headers, timeout=5).json()["data"]
    assert wallet["available_balance"] == "998490.00"  # 1,000,000 - 1,500 - 10 fee
    assert wallet["reserved_balance"] == "0.00"
    # The webhook pool runs beside the money worker, on its own queue.
    log = running_service.log.read_text()
    assert "webhooks@" in log and "ready." in log, log[-3000:]
    # Idle routine runs (beat's sends, empty dispatch rounds) stay out of the INFO log; the
    # round that dispatched the payout is in it. Once the worker has run an empty round (its
    # counter reaches the web's /metrics through the shared multiprocess directory):
    wait_for_text(f"{base}/metrics", 'payout_dispatch_rounds_total{result="empty"}', timeout=20)
    log = running_service.log.read_text()
    assert "Scheduler: Sending due task" not in log, log[-3000:]
    assert "dispatch_round: 0 payout(s) claimed" not in log, log[-3000:]
    assert "dispatch_round: 1 payout(s) claimed" in log, log[-3000:]

    _ledger_rewrite_refused(running_service)


def test_the_readme_and_docs_examples_run_as_written(
    running_service: RunningService, tmp_path: Path
) -> None:
    problems = examples_run(running_service, tmp_path)
    assert not problems, "\n\n".join(problems)


def test_ctrl_c_stops_the_service_and_its_database(
    make_run_service_to_stop: RunningService,
) -> None:
    running_service = make_run_service_to_stop
    base = running_service.base_url
    assert wait_for(f"{base}/healthz", timeout=90).status_code == 200
    process = running_service.process
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(timeout=30) is not None
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{base}/healthz", timeout=2)
    # The embedded server stopped too: no postmaster, no socket left to connect to.
    assert not (running_service.var / "postgres" / "data" / "postmaster.pid").exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(_socket_dsn(running_service), connect_timeout=2).close()


def _socket_dsn(service: RunningService) -> str:
    return f"postgresql://postgres@/merchant_payments?host={service.var / 'postgres'}"


def _ledger_rewrite_refused(service: RunningService) -> None:
    """The database `make run` starts is PostgreSQL with the ledger's append-only trigger: an
    UPDATE of a ledger entry through a plain connection to its socket is refused."""
    with psycopg.connect(_socket_dsn(service), autocommit=True) as database:
        version = database.execute("SHOW server_version_num").fetchone()[0]
        entry_id, amount = database.execute(
            "SELECT id, amount FROM wallets_ledgerentry ORDER BY id LIMIT 1"
        ).fetchone()  # the demo wallet's funding
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
            database.execute(
                "UPDATE wallets_ledgerentry SET amount = amount + 1 WHERE id = %s", [entry_id]
            )
        after = database.execute(
            "SELECT amount FROM wallets_ledgerentry WHERE id = %s", [entry_id]
        ).fetchone()[0]
    assert int(version) >= 150000
    assert after == amount

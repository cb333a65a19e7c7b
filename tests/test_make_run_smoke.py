"""Boots the service the way `make run` does, on embedded defaults (SQLite + filesystem broker,
gunicorn + a real Celery worker + beat under honcho), calls it, and stops it with Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.service_process import RunningService, service_running, wait_for

pytestmark = [pytest.mark.multiprocess]


@pytest.fixture
def running_service(tmp_path: Path) -> Iterator[RunningService]:
    with service_running(tmp_path) as service:
        yield service


def test_make_run_serves_on_embedded_defaults(running_service: RunningService) -> None:
    base = running_service.base_url
    health = wait_for(f"{base}/healthz", timeout=90)
    assert health.status_code == 200, running_service.log.read_text()

    credentials = json.loads((running_service.var / "demo_credentials.json").read_text())
    output = running_service.log.read_text()
    assert credentials["secret_key"] in output  # the test key is printed for the user
    assert (running_service.var / "db.sqlite3").exists()

    ready = requests.get(f"{base}/readyz", timeout=5)
    assert ready.json()["data"] == {"database": True, "broker": True}

    headers = {"Authorization": f"Bearer {credentials['secret_key']}"}
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
    wallet = requests.get(
        f"{base}/api/v1/transactions/in/merchant-wallet", headers=headers, timeout=5
    ).json()["data"]
    assert wallet["available_balance"] == "998490.00"  # 1,000,000 - 1,500 - 10 fee
    assert wallet["reserved_balance"] == "0.00"

    process = running_service.process
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(timeout=30) is not None
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{base}/healthz", timeout=2)

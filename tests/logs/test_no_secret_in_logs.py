"""No secret reaches any log of the running stack.

gunicorn (``-c config/gunicorn.py``) and a real Celery worker run as separate processes with
their output captured to files, under ``make run``'s settings (``config.settings.local``, DEBUG
on) and under production settings. Keys and webhook secrets are sent in query strings, in the
``Authorization``, ``User-Agent``, ``Referer`` and ``X-Forwarded-For`` headers and in paths
(a known route and unknown ones); tasks run in the worker, one with a key among its arguments
and one unregistered (the worker logs its whole message). Then every log file is searched: no
secret appears, the merchant's own keys and the configured provider secrets included.

Redis: ``LOGS_REDIS_URL`` (default ``redis://127.0.0.1:6379/10``), whose default ``celery``
queue the web process publishes to; emptied before and after. PostgreSQL only: the worker and
the web process share the test database.
"""

from __future__ import annotations

import base64
import os
import secrets
import socket
import sys
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from cryptography.fernet import Fernet

from config.celery_app import app as celery_app
from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts import tasks as payout_tasks
from payouts.models import Payout, PayoutStatus
from tests.celery_worker import (
    Process,
    celery_publishing_to,
    celery_worker_start,
    process_start,
    redis_queue_remove,
    redis_require,
    unavailable_for,
    wait_for,
    worker_environment,
)
from wallets.selectors import wallet_get
from wallets.services import wallet_fund

pytestmark = [pytest.mark.multiprocess]

REDIS_URL = os.environ.get("LOGS_REDIS_URL", "redis://127.0.0.1:6379/10")
DEFAULT_QUEUE = "celery"
PAYOUTS_PATH = "/api/v1/transactions/in/merchant-wallet/payouts"
SEARCH_PATH = "/api/v1/transactions/in/search-transaction"
WAIT_SECONDS = 45

unavailable = unavailable_for("the log secrecy test")


def _key(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)  # 43 url-safe characters, as issued


PROBE_LIVE = _key("sk_live_")
PROBE_TEST = _key("sk_test_")
PROBE_WHSEC = _key("whsec_")
PAYSTACK_SECRET_KEY = _key("sk_live_")
FUNDING_WEBHOOK_SECRET = _key("whsec_")
PROBES = (PROBE_LIVE, PROBE_TEST, PROBE_WHSEC)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SETTINGS = {
    "make-run": {"DJANGO_SETTINGS_MODULE": "config.settings.local", "DEBUG": "1"},
    "production": {
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
    },
}


@pytest.fixture
def stack_processes(tmp_path: Path) -> Iterator[list[Process]]:
    started: list[Process] = []
    try:
        yield started
    finally:
        for process in reversed(started):
            process.stop()


def _web_start(env: dict[str, str], tmp_path: Path, started: list[Process]) -> tuple[Process, str]:
    port = _free_port()
    web = process_start(
        "web",
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "-c",
            "config/gunicorn.py",
        ],
        env={**env, "PORT": str(port), "BIND_ADDRESS": "127.0.0.1", "WEB_CONCURRENCY": "1"},
        log_dir=tmp_path,
    )
    started.append(web)
    base_url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert web.alive(), f"web exited:\n{web.output()[-3000:]}"
        try:
            return requests.get(f"{base_url}/healthz", timeout=2).status_code == 200
        except (requests.ConnectionError, requests.Timeout):
            # Not listening yet, or listening while its worker still boots: ask again.
            return False

    wait_for(healthy, timeout=WAIT_SECONDS, what="gunicorn to answer")
    return web, base_url


def _requests_with_secrets(base_url: str, merchant_key: str) -> list[int]:
    """Each request carries secrets somewhere a log could pick them up."""
    https = {"X-Forwarded-Proto": "https"}  # behind the TLS proxy: no redirect in production
    carriers = {
        **https,
        "User-Agent": f"shop-client/1.0 {PROBE_LIVE}",
        "Referer": f"https://shop.example.com/orders?key={PROBE_WHSEC}",
        "X-Forwarded-For": PROBE_TEST,
    }
    basic = base64.b64encode(f"{PROBE_LIVE}:{PROBE_WHSEC}".encode()).decode()
    session = requests.Session()
    answers = [
        session.get(
            f"{base_url}/api/v1/transactions/bank",
            params={"secret_key": PROBE_LIVE, "webhook_secret": PROBE_WHSEC},
            headers={**carriers, "Authorization": f"Bearer {merchant_key}"},
            timeout=10,
        ),
        session.get(
            f"{base_url}{SEARCH_PATH}/{PROBE_LIVE}",
            headers={**carriers, "Authorization": f"Bearer {PROBE_TEST}"},
            timeout=10,
        ),
        session.get(
            f"{base_url}{SEARCH_PATH}/{PROBE_TEST}",
            headers={**carriers, "Authorization": f"Bearer {merchant_key}"},
            timeout=10,
        ),
        session.get(
            f"{base_url}/api/{PROBE_LIVE}/unknown",
            params={"k": PROBE_TEST},
            headers=carriers,
            timeout=10,
        ),
        session.get(f"{base_url}/{PROBE_WHSEC}/page", headers=carriers, timeout=10),
        session.get(
            f"{base_url}/api/v1/transactions/bank",
            headers={**carriers, "Authorization": f"Basic {basic}"},
            timeout=10,
        ),
        session.post(
            f"{base_url}{PAYOUTS_PATH}",
            json={
                "account_number": "0123456789",
                "bank_code": "058",
                "amount": "1000.00",
                "narration": "log secrecy",
                "idempotency_key": f"logs-{uuid.uuid4().hex}",
            },
            headers={**carriers, "Authorization": f"Bearer {merchant_key}"},
            timeout=10,
        ),
    ]
    return [answer.status_code for answer in answers]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("settings_name", list(SETTINGS))
def test_no_secret_reaches_any_log(
    settings_name: str,
    merchant_account: MerchantCreated,
    tmp_path: Path,
    stack_processes: list[Process],
) -> None:
    redis_require(REDIS_URL, unavailable=unavailable)
    redis_queue_remove(REDIS_URL, DEFAULT_QUEUE)
    wallet = wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)
    wallet_fund(wallet_id=wallet.pk, amount=Decimal("50000.00"), reference=f"LOGS-{uuid.uuid4()}")
    merchant_keys = (merchant_account.test_key.plaintext, merchant_account.live_key.plaintext)
    env = worker_environment(
        tmp_path,
        CELERY_BROKER_URL=REDIS_URL,
        PAYSTACK_SECRET_KEY=PAYSTACK_SECRET_KEY,
        FUNDING_WEBHOOK_SECRET=FUNDING_WEBHOOK_SECRET,
        LOG_LEVEL="INFO",
        **SETTINGS[settings_name],
    )

    with celery_publishing_to(
        REDIS_URL, queue=DEFAULT_QUEUE, task_patterns=["payouts.tasks.*", "logs.*"]
    ):
        worker = celery_worker_start("worker", queue=DEFAULT_QUEUE, env=env, log_dir=tmp_path)
        stack_processes.append(worker)
        web, base_url = _web_start(env, tmp_path, stack_processes)

        statuses = _requests_with_secrets(base_url, merchant_account.test_key.plaintext)
        assert statuses == [200, 403, 404, 404, 404, 401, 202], web.output()[-3000:]
        payout = wait_for(
            lambda: Payout.objects.filter(
                merchant=merchant_account.merchant, status=PayoutStatus.SUCCESSFUL
            ).first(),
            timeout=WAIT_SECONDS,
            what=f"the worker to dispatch the payout; worker log:\n{worker.output()[-3000:]}",
        )
        # A task that fails on its key-shaped argument, and one the worker does not know (it
        # logs the whole message body).
        payout_tasks.payout_requery_task.delay(PROBE_LIVE)
        celery_app.send_task("logs.unregistered_probe", args=[PROBE_WHSEC, PROBE_TEST])
        wait_for(
            lambda: "unregistered" in worker.output() and "ValueError" in worker.output(),
            timeout=WAIT_SECONDS,
            what=f"the worker to log both tasks; worker log:\n{worker.output()[-3000:]}",
        )
        web.stop()
        worker.stop()

    logs = {process.name: process.output() for process in (web, worker)}
    web_log, worker_log = logs["web"], logs["worker"]
    for name, text in logs.items():
        for secret in (*PROBES, *merchant_keys, PAYSTACK_SECRET_KEY, FUNDING_WEBHOOK_SECRET):
            assert secret not in text, f"{secret[:12]}… in the {name} log:\n{text[-4000:]}"
        assert "shop-client" not in text, f"User-Agent in the {name} log"
        assert "shop.example.com" not in text, f"Referer in the {name} log"
        assert "secret_key=" not in text, f"query string in the {name} log"
        assert "webhook_secret=" not in text, f"query string in the {name} log"
    # The logs are there and say what happened, with the secrets taken out.
    assert '"GET /api/v1/transactions/bank HTTP/1.1" 200' in web_log
    assert f'"GET {SEARCH_PATH}/[REDACTED] HTTP/1.1" 403' in web_log
    assert '"GET /api/[REDACTED]/unknown HTTP/1.1" 404' in web_log
    assert f'"POST {PAYOUTS_PATH} HTTP/1.1" 202' in web_log
    assert "Not Found: /api/[REDACTED]/unknown" in web_log
    assert payout.internal_reference in worker_log or "payout_dispatch_task" in worker_log
    assert "[REDACTED]" in worker_log

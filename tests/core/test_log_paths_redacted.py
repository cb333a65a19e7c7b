"""Every log path of the three processes redacts secrets: Django's request logging with DEBUG on
(``make run``), Celery's worker logging, and gunicorn's access and error logs as configured by
``config/gunicorn.py``. Each runs in a fresh interpreter, so this process's logging is untouched;
``tests/logs`` checks the same against the real running stack."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.logging import REDACTED, redact_secrets

ROOT = Path(__file__).resolve().parents[2]


def _key(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)  # 43 url-safe characters, as issued


LIVE_KEY = _key("sk_live_")
TEST_KEY = _key("sk_test_")
WEBHOOK_SECRET = _key("whsec_")
SECRETS = (LIVE_KEY, TEST_KEY, WEBHOOK_SECRET)


def _python(script: str, tmp_path: Path, **env_overrides: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DJANGO_SETTINGS_MODULE"}}
    env.update(
        {
            "VAR_DIR": str(tmp_path / "var"),
            "DATABASE_URL": "postgres://postgres@127.0.0.1:1/unreachable",  # never connected to
            "LIVE_KEY": LIVE_KEY,
            "TEST_KEY": TEST_KEY,
            "WEBHOOK_SECRET": WEBHOOK_SECRET,
            "PYTHONUNBUFFERED": "1",
            **env_overrides,
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout
    return result.stdout


def _assert_no_secret(output: str) -> None:
    for secret in SECRETS:
        assert secret not in output, output
    assert REDACTED in output, output


@pytest.mark.parametrize(
    "text",
    [
        f"/api/v1/transactions/in/search-transaction/{LIVE_KEY}",
        f"/api/x{LIVE_KEY}",
        f"token_{TEST_KEY}",
        f"secret=abc{WEBHOOK_SECRET}",
    ],
    ids=["path-segment", "glued-to-a-letter", "glued-to-an-underscore", "glued-to-a-digit"],
)
def test_keys_are_redacted_wherever_they_start(text: str) -> None:
    redacted = redact_secrets(text)
    for secret in SECRETS:
        assert secret not in redacted
    assert REDACTED in redacted


@pytest.mark.multiprocess
@pytest.mark.probe
def test_django_request_logging_with_debug_on_is_redacted(tmp_path: Path) -> None:
    output = _python(
        """
        import logging, os, django
        django.setup()
        from django.conf import settings
        from django.test import Client
        assert settings.DEBUG
        live, test = os.environ["LIVE_KEY"], os.environ["TEST_KEY"]
        whsec = os.environ["WEBHOOK_SECRET"]
        client = Client()
        client.get(f"/{live}/page", {"key": test})
        client.get(f"/api/{live}/unknown", {"secret": whsec})
        client.get(f"/api/v1/{test}", HTTP_AUTHORIZATION=f"Bearer {live}")
        logging.getLogger("django.request").warning("Not Found: /x/%s", whsec)
        logging.getLogger("django.server").info('"GET /?k=%s HTTP/1.1" 404 0', live)
        logging.getLogger("django.security.DisallowedHost").error("Invalid host %s", test)
        try:
            raise ValueError(f"bad key {live}")
        except ValueError:
            logging.getLogger("django").exception("failure")
        """,
        tmp_path,
        DJANGO_SETTINGS_MODULE="config.settings.local",
    )
    assert "Not Found: /api/" in output
    assert "ValueError" in output
    _assert_no_secret(output)


@pytest.mark.multiprocess
@pytest.mark.probe
def test_celery_worker_logging_is_redacted(tmp_path: Path) -> None:
    output = _python(
        """
        import logging, os
        from celery.utils.log import get_task_logger
        from config.celery_app import app
        live, test = os.environ["LIVE_KEY"], os.environ["TEST_KEY"]
        whsec = os.environ["WEBHOOK_SECRET"]
        # What `celery worker` and `celery beat` do first.
        app.log.setup(loglevel="INFO")
        get_task_logger("payouts.tasks").warning("task saw %s", live)
        logging.getLogger("celery.worker.strategy").info("Received task with args [%r]", test)
        logging.getLogger("celery.app.trace").error("Task raised: %s", whsec)
        logging.getLogger().warning("root saw %s", test)
        """,
        tmp_path,
        DJANGO_SETTINGS_MODULE="config.settings.test",
    )
    assert "task saw" in output
    _assert_no_secret(output)


@pytest.mark.multiprocess
@pytest.mark.probe
def test_gunicorn_access_and_error_logs_are_redacted(tmp_path: Path) -> None:
    output = _python(
        """
        import base64, os, runpy
        from datetime import timedelta
        from types import SimpleNamespace
        from gunicorn.config import Config
        from gunicorn.glogging import Logger
        live, test = os.environ["LIVE_KEY"], os.environ["TEST_KEY"]
        whsec = os.environ["WEBHOOK_SECRET"]
        cfg = Config()
        for name, value in runpy.run_path("config/gunicorn.py").items():
            if name in cfg.settings:
                cfg.set(name, value)
        log = Logger(cfg)
        basic = base64.b64encode(f"{test}:x".encode()).decode()
        headers = [
            ("AUTHORIZATION", f"Bearer {live}"),
            ("USER-AGENT", f"agent {test}"),
            ("REFERER", f"https://shop.example.com/?k={whsec}"),
            ("X-FORWARDED-FOR", live),
        ]
        environ = {
            "REQUEST_METHOD": "GET",
            "RAW_URI": f"/api/v1/transactions/in/search-transaction/{live}?key={test}",
            "PATH_INFO": f"/api/v1/transactions/in/search-transaction/{live}",
            "QUERY_STRING": f"key={test}&whsec={whsec}",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_AUTHORIZATION": f"Basic {basic}",
            "HTTP_USER_AGENT": f"agent {test}",
            "HTTP_REFERER": f"https://shop.example.com/?k={whsec}",
            "HTTP_X_FORWARDED_FOR": live,
        }
        response = SimpleNamespace(status="403 Forbidden", sent=42, headers=[])
        log.access(response, SimpleNamespace(headers=headers), environ, timedelta(milliseconds=7))
        log.error("Invalid request from ip=127.0.0.1: GET /%s?k=%s", live, whsec)
        try:
            raise RuntimeError(f"worker failed on {test}")
        except RuntimeError:
            log.exception("Error handling request /%s", live)
        """,
        tmp_path,
        DJANGO_SETTINGS_MODULE="config.settings.test",
    )
    assert '"GET /api/v1/transactions/in/search-transaction/' in output
    assert " 403 " in output
    assert "agent" not in output  # no User-Agent
    assert "shop.example.com" not in output  # no Referer
    assert "key=" not in output  # no query string
    assert "RuntimeError" in output
    _assert_no_secret(output)

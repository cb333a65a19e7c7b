"""Secret keys and Authorization headers never reach a log line."""

from __future__ import annotations

import io
import logging

import pytest
from rest_framework.test import APIClient

from core.logging import SecretRedactingFilter, redact_secrets

KEY = "sk_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdefg"


def _log_through_filter(message: str, *args: object, exc: Exception | None = None) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SecretRedactingFilter())
    logger = logging.getLogger("tests.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        if exc is not None:
            try:
                raise exc
            except Exception:
                logger.exception(message, *args)
        else:
            logger.warning(message, *args)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_key_in_arguments_is_redacted() -> None:
    output = _log_through_filter("calling with %s", KEY)
    assert KEY not in output
    assert "[REDACTED]" in output


def test_authorization_header_is_redacted() -> None:
    output = _log_through_filter("headers %s", {"Authorization": f"Bearer {KEY}"})
    assert KEY not in output
    assert "Bearer" not in output or "[REDACTED]" in output


def test_key_in_exception_text_is_redacted() -> None:
    output = _log_through_filter("failed", exc=ValueError(f"bad key {KEY}"))
    assert KEY not in output
    assert "ValueError" in output


def test_webhook_secret_is_redacted() -> None:
    assert "whsec_abc123" not in redact_secrets("secret=whsec_abc123")


def test_every_configured_handler_redacts() -> None:
    handlers = [h for h in logging.getLogger().handlers if h.get_name() == "console"]
    assert handlers
    for handler in handlers:
        assert any(isinstance(f, SecretRedactingFilter) for f in handler.filters)


@pytest.mark.django_db
@pytest.mark.urls("tests.core.urls")
def test_a_failing_request_logs_no_key(caplog: pytest.LogCaptureFixture, client_for) -> None:
    from merchants.services import merchant_create

    created = merchant_create(name="Log Test", email="log@example.com")
    client: APIClient = client_for(created.test_key.plaintext)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SecretRedactingFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        client.get("/t/broken", HTTP_X_DEBUG_KEY=created.test_key.plaintext)
        logging.getLogger("django.request").error(
            "request headers %s", {"HTTP_AUTHORIZATION": f"Bearer {created.test_key.plaintext}"}
        )
    finally:
        root.removeHandler(handler)
    output = stream.getvalue()
    assert "Unhandled error" in output
    assert created.test_key.plaintext not in output


def test_a_standard_base64_webhook_secret_is_redacted_whole() -> None:
    secret = "whsec_ab+/cdEFgh+ijKLmn/opQRst+uvWXyz0123456789AB="
    redacted = redact_secrets(f"secret={secret} next")
    assert redacted == "secret=[REDACTED] next"

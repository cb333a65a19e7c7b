"""The base of every Paystack adapter (payouts, collections, refunds, name enquiry): one
``PaystackClient`` built from the adapter's arguments or the settings, and ``_call``, one request
whose "nothing came back" is logged under the adapter's own module. An adapter maps the answers
onto its own results; one that must stop when nothing came back overrides ``_unanswered``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import requests
from django.conf import settings

from integrations.paystack.client import PaystackAnswer, PaystackClient


class PaystackAdapter:
    name = "paystack"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        secret_key: str | None = None,
        timeout_seconds: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        timeout_seconds = timeout_seconds or self.default_timeout_seconds()
        self.client = PaystackClient(
            base_url=base_url,
            secret_key=secret_key,
            timeout_seconds=timeout_seconds,
            connect_timeout_seconds=self.connect_timeout_seconds(timeout_seconds),
            session=session,
        )

    def default_timeout_seconds(self) -> float:
        """The read timeout when the caller names none."""
        return settings.PAYSTACK_TIMEOUT_SECONDS

    def connect_timeout_seconds(self, timeout_seconds: float) -> float | None:
        """A shorter connect timeout, or ``None`` for the read timeout."""
        return None

    def _call(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        payload: dict[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> PaystackAnswer:
        answer = self.client.request(
            method, path, operation=operation, payload=payload, params=params
        )
        if answer.http_status is None:
            self._unanswered(answer, operation=operation)
        return answer

    def _unanswered(self, answer: PaystackAnswer, *, operation: str) -> None:
        """Nothing came back (not configured, or no HTTP answer): logged."""
        logging.getLogger(type(self).__module__).warning(
            "paystack %s failed: %s", operation, answer.exchange.error
        )

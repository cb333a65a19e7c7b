"""The base of every Flutterwave adapter (payouts, name enquiry, the bank list): one
``FlutterwaveClient`` built from the adapter's arguments or the settings, and ``_call``, one
request whose "nothing came back" is logged under the adapter's own module. An adapter maps the
answers onto its own results.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import requests
from django.conf import settings

from integrations.flutterwave.client import FlutterwaveAnswer, FlutterwaveClient


class FlutterwaveAdapter:
    name = "flutterwave"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        secret_key: str | None = None,
        timeout_seconds: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        timeout_seconds = timeout_seconds or self.default_timeout_seconds()
        self.client = FlutterwaveClient(
            base_url=base_url,
            secret_key=secret_key,
            timeout_seconds=timeout_seconds,
            connect_timeout_seconds=self.connect_timeout_seconds(timeout_seconds),
            session=session,
        )

    def default_timeout_seconds(self) -> float:
        """The read timeout when the caller names none."""
        return settings.FLUTTERWAVE_TIMEOUT_SECONDS

    def connect_timeout_seconds(self, timeout_seconds: float) -> float | None:
        """A shorter connect timeout, or ``None`` for the read timeout."""
        return None

    def _call(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        payload: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> FlutterwaveAnswer:
        answer = self.client.request(
            method, path, operation=operation, payload=payload, params=params
        )
        if answer.http_status is None:
            logging.getLogger(type(self).__module__).warning(
                "flutterwave %s failed: %s", operation, answer.exchange.error
            )
        return answer

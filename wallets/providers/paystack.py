"""Live-mode name enquiry over HTTP, modelled on Paystack's resolve-account API:
``GET {PAYSTACK_BASE_URL}/bank/resolve?account_number=...&bank_code=...`` with
``Authorization: Bearer {PAYSTACK_SECRET_KEY}``.

Outcomes: 200 with ``status: true`` resolves; any other 4xx (or ``status: false``) is a
definitive "not resolved"; timeouts, connection errors, 5xx, 429, 401/403 (our credentials)
and unreadable bodies mean the provider is unavailable.
"""

from __future__ import annotations

import logging
from typing import Any

import requests
from django.conf import settings

from wallets.providers.base import (
    AccountNotResolvedError,
    AccountResolution,
    NameEnquiryUnavailableError,
)

logger = logging.getLogger(__name__)

UNAVAILABLE_STATUSES = frozenset({401, 403, 408, 429})


class PaystackNameEnquiryProvider:
    name = "paystack"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        secret_key: str | None = None,
        timeout_seconds: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        self.base_url = (base_url or settings.PAYSTACK_BASE_URL).rstrip("/")
        self.secret_key = settings.PAYSTACK_SECRET_KEY if secret_key is None else secret_key
        self.timeout_seconds = timeout_seconds or settings.PAYSTACK_TIMEOUT_SECONDS
        self.session = session or requests.Session()

    def resolve_account(
        self, *, account_number: str, bank_code: str, reference: str
    ) -> AccountResolution:
        if not self.secret_key:
            logger.error("name enquiry %s: PAYSTACK_SECRET_KEY is not configured", reference)
            raise NameEnquiryUnavailableError("provider credentials are not configured")
        try:
            response = self.session.get(
                f"{self.base_url}/bank/resolve",
                params={"account_number": account_number, "bank_code": bank_code},
                headers={
                    "Authorization": f"Bearer {self.secret_key}",
                    "Accept": "application/json",
                    "X-Request-Reference": reference,
                },
                timeout=(min(self.timeout_seconds, 3.0), self.timeout_seconds),
            )
        except requests.Timeout as error:
            logger.warning("name enquiry %s: provider timed out", reference)
            raise NameEnquiryUnavailableError("provider timed out") from error
        except requests.RequestException as error:
            logger.warning("name enquiry %s: provider unreachable (%s)", reference, type(error))
            raise NameEnquiryUnavailableError("provider unreachable") from error

        body = self._json(response)
        status_code = response.status_code
        if status_code >= 500 or status_code in UNAVAILABLE_STATUSES:
            logger.warning("name enquiry %s: provider answered HTTP %s", reference, status_code)
            raise NameEnquiryUnavailableError(f"provider HTTP {status_code}", raw_response=body)
        if status_code >= 400 or body.get("status") is not True:
            raise AccountNotResolvedError(
                str(body.get("message") or f"provider HTTP {status_code}"), raw_response=body
            )
        data = body.get("data")
        account_name = data.get("account_name") if isinstance(data, dict) else None
        if not isinstance(account_name, str) or not account_name.strip():
            raise AccountNotResolvedError("provider returned no account name", raw_response=body)
        return AccountResolution(
            account_name=account_name.strip(),
            account_number=str(data.get("account_number") or account_number),
            bank_code=bank_code,
            provider=self.name,
            raw_response=body,
        )

    @staticmethod
    def _json(response: requests.Response) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            return body
        if response.status_code < 400:
            raise NameEnquiryUnavailableError("unreadable provider response")
        return {}

"""Live-mode name enquiry, modelled on Paystack's resolve-account API:
``GET /bank/resolve?account_number=...&bank_code=...``. The HTTP (URL, key, timeouts, the raw
exchange, what "try again later" means) lives in ``integrations.paystack``; this adapter maps
its answers onto ``AccountResolution`` and the name-enquiry errors.

Outcomes: 200 with ``status: true`` resolves; any other 4xx (or ``status: false``) is a
definitive "not resolved"; timeouts, connection errors, 5xx, 429, 401/403 (our credentials)
and unreadable bodies mean the provider is unavailable.
"""

from __future__ import annotations

import logging

from integrations.paystack import PaystackAdapter, RetryLater
from wallets.providers.base import (
    AccountNotResolvedError,
    AccountResolution,
    NameEnquiryUnavailableError,
)

logger = logging.getLogger(__name__)

OPERATION = "paystack.resolve_account"
CONNECT_TIMEOUT_MAX_SECONDS = 3.0


class PaystackNameEnquiryProvider(PaystackAdapter):
    def connect_timeout_seconds(self, timeout_seconds: float) -> float | None:
        return min(timeout_seconds, CONNECT_TIMEOUT_MAX_SECONDS)

    def resolve_account(
        self, *, account_number: str, bank_code: str, reference: str
    ) -> AccountResolution:
        answer = self.client.request(
            "GET",
            "/bank/resolve",
            operation=OPERATION,
            params={"account_number": account_number, "bank_code": bank_code},
            headers={"X-Request-Reference": reference},
        )
        exchange = answer.exchange
        body = answer.body
        status_code = answer.http_status
        retry_later = answer.retry_later
        if retry_later == RetryLater.NOT_CONFIGURED:
            logger.error("name enquiry %s: PAYSTACK_SECRET_KEY is not configured", reference)
            raise NameEnquiryUnavailableError(
                "provider credentials are not configured", exchange=exchange
            )
        if status_code is None:
            if retry_later is not None and retry_later.timed_out:
                logger.warning("name enquiry %s: provider timed out", reference)
                raise NameEnquiryUnavailableError(
                    "provider timed out", exchange=exchange
                ) from answer.error
            logger.warning(
                "name enquiry %s: provider unreachable (%s)", reference, type(answer.error)
            )
            raise NameEnquiryUnavailableError(
                "provider unreachable", exchange=exchange
            ) from answer.error
        if retry_later == RetryLater.UNREADABLE:
            raise NameEnquiryUnavailableError("unreadable provider response", exchange=exchange)
        if retry_later is not None:
            logger.warning("name enquiry %s: provider answered HTTP %s", reference, status_code)
            raise NameEnquiryUnavailableError(
                f"provider HTTP {status_code}", raw_response=body, exchange=exchange
            )
        if status_code >= 400 or body.get("status") is not True:
            raise AccountNotResolvedError(
                str(body.get("message") or f"provider HTTP {status_code}"),
                raw_response=body,
                exchange=exchange,
            )
        account_name = answer.data.get("account_name")
        if not isinstance(account_name, str) or not account_name.strip():
            raise AccountNotResolvedError(
                "provider returned no account name", raw_response=body, exchange=exchange
            )
        return AccountResolution(
            account_name=account_name.strip(),
            account_number=str(answer.data.get("account_number") or account_number),
            bank_code=bank_code,
            provider=self.name,
            raw_response=body,
            exchange=exchange,
        )

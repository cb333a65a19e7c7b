"""Live-mode name enquiry, modelled on Paystack's resolve-account API:
``GET /bank/resolve?account_number=...&bank_code=...``. The HTTP (URL, key, timeouts, the raw
exchange, what "try again later" means) lives in ``integrations.paystack``; this adapter maps
its answers onto ``AccountResolution`` and the name-enquiry errors.

Outcomes: 200 with ``status: true`` resolves; any other 4xx (or ``status: false``) is a
definitive "not resolved"; timeouts, connection errors, 5xx, 429, 401/403 (our credentials)
and unreadable bodies mean the provider is unavailable.
"""

from __future__ import annotations

from integrations.paystack import PaystackAdapter, RetryLater
from wallets.providers.answers import (
    CONNECT_TIMEOUT_MAX_SECONDS,
    account_resolution_of,
    unavailable_raise,
)
from wallets.providers.base import (
    AccountNotResolvedError,
    AccountResolution,
    NameEnquiryUnavailableError,
)

OPERATION = "paystack.resolve_account"


class PaystackNameEnquiryProvider(PaystackAdapter):
    connect_timeout_max_seconds = CONNECT_TIMEOUT_MAX_SECONDS

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
        if answer.retry_later == RetryLater.UNREADABLE:
            raise NameEnquiryUnavailableError(
                "unreadable provider response", exchange=answer.exchange
            )
        unavailable_raise(answer, reference=reference)
        body = answer.body
        status_code = answer.http_status or 0
        if status_code >= 400 or body.get("status") is not True:
            raise AccountNotResolvedError(
                str(body.get("message") or f"provider HTTP {status_code}"),
                raw_response=body,
                exchange=answer.exchange,
            )
        return account_resolution_of(
            answer,
            account_number=str(answer.data.get("account_number") or account_number),
            bank_code=bank_code,
            provider=self.name,
        )

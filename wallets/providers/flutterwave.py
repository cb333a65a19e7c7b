"""Live-mode name enquiry and bank list on Flutterwave (v3). The HTTP lives in
``integrations.flutterwave``; this module maps its answers onto ``AccountResolution``, the
name-enquiry errors and ``ProviderBank`` rows.

* ``POST /accounts/resolve`` with ``account_number`` and ``account_bank`` (our bank code):
  ``{"status": "success", "data": {"account_number": …, "account_name": …}}`` resolves; any
  other 4xx (or ``"status": "error"``) is a definitive "not resolved"; timeouts, connection
  errors, 5xx, 429, 401/403 (our credentials) and unreadable bodies mean the provider is
  unavailable. Chosen with ``NAME_ENQUIRY_PROVIDER_LIVE``.
* ``GET /banks/NG``: Flutterwave's Nigerian banks, ``{"id", "code", "name"}`` each; their
  ``code`` is the CBN/NIP bank code our ``wallets.Bank.bank_code`` holds
  (``flutterwave_banks_missing`` names our active codes Flutterwave does not list).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from integrations.flutterwave import FlutterwaveAdapter
from wallets.providers.answers import (
    CONNECT_TIMEOUT_MAX_SECONDS,
    account_resolution_of,
    unavailable_raise,
)
from wallets.providers.base import AccountNotResolvedError, AccountResolution

logger = logging.getLogger(__name__)

RESOLVE_OPERATION = "flutterwave.resolve_account"
BANKS_OPERATION = "flutterwave.banks"


@dataclass(frozen=True)
class ProviderBank:
    bank_code: str
    name: str


class FlutterwaveBankListUnavailableError(Exception):
    """Flutterwave did not answer the bank list usefully (logged with the reason)."""


class FlutterwaveNameEnquiryProvider(FlutterwaveAdapter):
    connect_timeout_max_seconds = CONNECT_TIMEOUT_MAX_SECONDS

    def resolve_account(
        self, *, account_number: str, bank_code: str, reference: str
    ) -> AccountResolution:
        answer = self.client.request(
            "POST",
            "/accounts/resolve",
            operation=RESOLVE_OPERATION,
            payload={"account_number": account_number, "account_bank": bank_code},
        )
        unavailable_raise(answer, reference=reference)
        if not answer.ok:
            raise AccountNotResolvedError(
                answer.message or f"provider HTTP {answer.http_status}",
                raw_response=answer.body,
                exchange=answer.exchange,
            )
        return account_resolution_of(
            answer, account_number=account_number, bank_code=bank_code, provider=self.name
        )

    def banks(self) -> list[ProviderBank]:
        """Flutterwave's Nigerian banks (``GET /banks/NG``); raises
        ``FlutterwaveBankListUnavailableError`` when it gives no usable answer."""
        answer = self.client.request("GET", "/banks/NG", operation=BANKS_OPERATION)
        if not answer.ok:
            reason = answer.retry_later or f"HTTP {answer.http_status}: {answer.message}"
            logger.warning("flutterwave bank list unavailable: %s", reason)
            raise FlutterwaveBankListUnavailableError(str(reason))
        banks = []
        for item in answer.data_items:
            code, name = item.get("code"), item.get("name")
            if isinstance(code, str) and code.strip() and isinstance(name, str):
                banks.append(ProviderBank(bank_code=code.strip(), name=name.strip()))
        return banks


def flutterwave_banks_missing(
    our_bank_codes: Iterable[str], flutterwave_banks: Iterable[ProviderBank]
) -> list[str]:
    """Our active bank codes Flutterwave does not list, sorted: payouts to those banks cannot
    go through Flutterwave."""
    listed = {bank.bank_code for bank in flutterwave_banks}
    return sorted(set(our_bank_codes) - listed)

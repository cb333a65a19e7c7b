"""Test-mode name enquiry: deterministic names, two magic account numbers, no network."""

from __future__ import annotations

import hashlib
from typing import Any

from core.provider_exchange import ProviderExchange
from wallets.providers.base import (
    AccountNotResolvedError,
    AccountResolution,
    NameEnquiryUnavailableError,
)

UNRESOLVABLE_ACCOUNT_NUMBER = "0000000000"
UNAVAILABLE_ACCOUNT_NUMBER = "0000000009"
OPERATION = "sandbox.resolve_account"

FIRST_NAMES = (
    "ADAEZE", "ADEBAYO", "AISHA", "CHIDI", "CHIOMA", "EMEKA", "FATIMA", "FOLAKE", "IBRAHIM",
    "IFEOMA", "KEMI", "MUSA", "NGOZI", "OLUWASEUN", "SANI", "TUNDE", "UCHE", "YETUNDE",
    "ZAINAB", "OBINNA",
)  # fmt: skip
LAST_NAMES = (
    "ABUBAKAR", "ADEYEMI", "BALOGUN", "BELLO", "EZE", "IBEKWE", "MOHAMMED", "NWOSU", "OKAFOR",
    "OKONKWO", "OLADIPO", "ONYEKACHI", "SALAMI", "USMAN", "YUSUF", "ADEWALE", "NNAMDI", "OJO",
    "AKINOLA", "DANJUMA",
)  # fmt: skip


def sandbox_account_name(account_number: str) -> str:
    """The same digits always give the same name."""
    digest = hashlib.sha256(account_number.encode("ascii")).digest()
    first = FIRST_NAMES[digest[0] % len(FIRST_NAMES)]
    middle = FIRST_NAMES[digest[1] % len(FIRST_NAMES)]
    last = LAST_NAMES[digest[2] % len(LAST_NAMES)]
    return f"{last} {first} {middle}" if middle != first else f"{last} {first}"


class SandboxNameEnquiryProvider:
    name = "sandbox"

    def resolve_account(
        self, *, account_number: str, bank_code: str, reference: str
    ) -> AccountResolution:
        if account_number == UNRESOLVABLE_ACCOUNT_NUMBER:
            body: dict[str, Any] = {"status": False, "sandbox": True}
            raise AccountNotResolvedError(
                "sandbox: account not found", raw_response=body, exchange=_exchange(404, body)
            )
        if account_number == UNAVAILABLE_ACCOUNT_NUMBER:
            body = {"status": False, "sandbox": True}
            raise NameEnquiryUnavailableError(
                "sandbox: provider unavailable", raw_response=body, exchange=_exchange(503, body)
            )
        account_name = sandbox_account_name(account_number)
        body = {
            "status": True,
            "sandbox": True,
            "data": {"account_number": account_number, "account_name": account_name},
        }
        return AccountResolution(
            account_name=account_name,
            account_number=account_number,
            bank_code=bank_code,
            provider=self.name,
            raw_response=body,
            exchange=_exchange(200, body),
        )


def _exchange(http_status: int, body: dict[str, Any]) -> ProviderExchange:
    return ProviderExchange(operation=OPERATION, http_status=http_status, body=body)

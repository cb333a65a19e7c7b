"""The name-enquiry provider interface. The service picks the provider by mode, never the
merchant; adapters return dataclasses that keep the provider's raw response and the raw
exchange (``ProviderExchange``, without secrets) for audit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.provider_exchange import ProviderExchange


@dataclass(frozen=True)
class AccountResolution:
    account_name: str
    account_number: str
    bank_code: str
    provider: str
    raw_response: dict[str, Any] = field(default_factory=dict, repr=False)
    exchange: ProviderExchange | None = field(default=None, repr=False, compare=False)


class NameEnquiryProviderError(Exception):
    """Base class; ``raw_response`` holds what the provider said, when it said anything, and
    ``exchange`` the raw exchange, when a call was made."""

    def __init__(
        self,
        detail: str,
        *,
        raw_response: dict[str, Any] | None = None,
        exchange: ProviderExchange | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.raw_response = raw_response or {}
        self.exchange = exchange


class AccountNotResolvedError(NameEnquiryProviderError):
    """The provider answered: no account of that number at that bank (a definitive no)."""


class NameEnquiryUnavailableError(NameEnquiryProviderError):
    """The provider could not answer now (timeout, 5xx, rate limit, misconfiguration)."""


class NameEnquiryProvider(Protocol):
    name: str

    def resolve_account(
        self, *, account_number: str, bank_code: str, reference: str
    ) -> AccountResolution:
        """Resolves the account holder's name or raises one of the errors above."""
        ...

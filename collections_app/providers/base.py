"""What a collection provider adapter offers, and what it answers.

In test mode no adapter is used: the hosted checkout's sandbox forms confirm the payment. In
live mode an adapter starts the provider's checkout (its ``authorization_url`` is returned to
the merchant) and verifies a transaction by our reference before anything is confirmed.
Adapters keep the raw exchanges for audit and never put the secret key in them.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from core.provider_exchange import ProviderExchange


class ProviderError(Exception):
    """A provider call that gave no usable answer; ``raw`` keeps the exchanges for audit."""

    def __init__(self, message: str, *, raw: tuple[ProviderExchange, ...] = ()) -> None:
        super().__init__(message)
        self.raw = raw


class ProviderUnavailableError(ProviderError):
    """The provider could not be reached or answered with an error; try again later."""


class ProviderRefusedError(ProviderError):
    """The provider refused the request (4xx); its message says why."""


@dataclass(frozen=True)
class CheckoutRequest:
    reference: str  # ours, also the provider's reference (its idempotency key)
    email: str
    amount: Decimal  # the total the customer pays (amount + fee), major unit
    currency: str
    channel: str  # card, bank or bank-transfer
    return_url: str  # where the provider sends the customer back
    metadata: dict[str, Any]


@dataclass(frozen=True)
class CheckoutSession:
    authorization_url: str
    access_code: str
    reference: str
    raw: tuple[ProviderExchange, ...] = ()


class VerifiedStatus(StrEnum):
    PAID = "paid"
    FAILED = "failed"
    PENDING = "pending"  # still open at the provider (ongoing, abandoned, …)


@dataclass(frozen=True)
class VerifiedTransaction:
    status: VerifiedStatus
    reference: str
    amount_paid: Decimal | None = None  # major unit
    currency: str = ""
    gateway_reference: str = ""
    channel: str = ""
    card: dict[str, str] | None = None  # brand and last4 only
    message: str = ""
    raw: tuple[ProviderExchange, ...] = ()


@runtime_checkable
class CollectionProvider(Protocol):
    name: str

    def initialize(self, request: CheckoutRequest) -> CheckoutSession:
        """Starts the provider's checkout; raises ``ProviderUnavailableError`` or
        ``ProviderRefusedError``."""
        ...

    def verify(self, *, reference: str) -> VerifiedTransaction:
        """Reads the transaction by our reference; raises ``ProviderUnavailableError``."""
        ...

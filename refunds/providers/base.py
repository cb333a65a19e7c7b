"""What a refund provider adapter offers the refund service, and what it answers.

A refund is sent once (``send``); after that it is only asked about: by the provider's id
(``fetch``) or, when a send may have reached the provider without an answer, by our
``refund_id``, which every send carries in its merchant note (``find``). Adapters never raise
for provider or network trouble: they classify it into a ``RefundOutcome`` and keep the raw
exchanges for audit (never the secret key).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Protocol, runtime_checkable

from core.provider_exchange import ProviderExchange


class RefundOutcome(StrEnum):
    """How a provider call ended, from the point of view of the money."""

    PROCESSED = "processed"  # the customer is refunded
    FAILED = "failed"  # the provider refused the refund or it definitively failed
    PENDING = "pending"  # the provider holds the refund and is still working on it
    UNKNOWN = "unknown"  # the request may have been received: timeout, 5xx, broken connection
    NOT_SENT = "not_sent"  # send only: the request certainly never reached the provider
    NOT_FOUND = "not_found"  # find only: the provider holds no refund with our refund_id


@dataclass(frozen=True)
class RefundRequest:
    refund_id: str  # ours; sent in the merchant note so the refund can be found by it
    transaction_reference: str  # the collection's reference, as the provider knows it
    gateway_reference: str  # the provider's id of the collection ("" when unknown)
    amount: Decimal  # major unit
    currency: str
    reason: str


@dataclass(frozen=True)
class RefundResult:
    outcome: RefundOutcome
    provider_reference: str = ""
    message: str = ""
    raw: tuple[ProviderExchange, ...] = ()


@runtime_checkable
class RefundProvider(Protocol):
    name: str

    def send(self, request: RefundRequest) -> RefundResult:
        """Asks the provider to refund ``request.amount`` of the collection."""
        ...

    def fetch(self, request: RefundRequest, *, provider_reference: str) -> RefundResult:
        """Reads the refund's status by the provider's id, without sending it again."""
        ...

    def find(self, request: RefundRequest) -> RefundResult:
        """Looks for a refund the provider holds with our ``refund_id`` (``NOT_FOUND`` when
        there is none), after a send whose answer was lost."""
        ...

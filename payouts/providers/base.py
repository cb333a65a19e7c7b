"""What a payout provider adapter offers the payout service, and what it answers.

Every call carries our ``internal_reference`` as the provider's idempotency reference, so a
retried dispatch can never create a second transfer. Adapters never raise for provider or
network trouble: they classify it into a ``TransferOutcome`` and keep the raw exchange.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Protocol, runtime_checkable

from core.provider_exchange import ProviderExchange


class TransferOutcome(StrEnum):
    """How a provider call ended, from the point of view of the money."""

    SUCCESSFUL = "successful"  # the beneficiary is credited
    FAILED = "failed"  # the transfer existed and definitively failed (or was reversed)
    PENDING = "pending"  # the provider holds the transfer and is still processing it
    UNKNOWN = "unknown"  # the request may have been received: timeout, 5xx, broken connection
    NOT_FOUND = "not_found"  # verify only: the provider has no transfer with this reference
    REJECTED = "rejected"  # initiate only: refused before any transfer existed; no money moved
    NOT_SENT = "not_sent"  # initiate only: the request certainly never reached the provider
    # The provider or the beneficiary's bank holds the transfer for suspected fraud (NIP 34, 35,
    # 63): the money may or may not have moved, so nothing is captured or released automatically.
    HELD = "held"


@dataclass(frozen=True)
class TransferRequest:
    reference: str
    account_number: str
    account_name: str
    bank_code: str
    amount: Decimal
    currency: str
    narration: str | None


@dataclass(frozen=True)
class TransferResult:
    outcome: TransferOutcome
    provider_reference: str = ""
    # The NIP session id (the interbank trace id) when the provider gives one.
    session_id: str = ""
    message: str = ""
    # The NIP response code behind the outcome when the provider gives one (``outcomes``).
    nip_code: str = ""
    raw: tuple[ProviderExchange, ...] = ()


@runtime_checkable
class PayoutProvider(Protocol):
    name: str

    def initiate_transfer(self, request: TransferRequest) -> TransferResult:
        """Sends the transfer with ``request.reference`` as its idempotency reference."""
        ...

    def verify_transfer(self, *, reference: str) -> TransferResult:
        """Reads the transfer's status by our reference, without resubmitting it."""
        ...


@runtime_checkable
class BulkPayoutProvider(Protocol):
    """A provider that can take many transfers in one call (optional)."""

    def initiate_transfers(self, requests: Sequence[TransferRequest]) -> list[TransferResult]:
        """``initiate_transfer`` for each request, in order: one answer per request."""
        ...


SEND_DEADLINE_MESSAGE = "not sent: the batch's send deadline had passed"


def initiate_transfers(
    provider: PayoutProvider,
    requests: Sequence[TransferRequest],
    *,
    send_by: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[TransferResult]:
    """Sends every request to ``provider``: through its bulk call when it has one, else one
    ``initiate_transfer`` each, in order. One answer per request, in the requests' order.

    With ``send_by`` (a ``clock`` reading), nothing is started once the clock has reached it:
    a request not sent by then, and every one after it, answers ``NOT_SENT`` without reaching
    the provider (a bulk call is started whole or not at all)."""
    if not requests:
        return []

    def too_late() -> bool:
        return send_by is not None and clock() >= send_by

    not_sent = TransferResult(outcome=TransferOutcome.NOT_SENT, message=SEND_DEADLINE_MESSAGE)
    if isinstance(provider, BulkPayoutProvider):
        if too_late():
            return [not_sent] * len(requests)
        results: list[TransferResult] = list(provider.initiate_transfers(requests))
        if len(results) != len(requests):
            raise ValueError(
                f"{provider.name}: {len(results)} answer(s) to {len(requests)} transfer(s)"
            )
        return results
    results = []
    for request in requests:
        if too_late():
            return results + [not_sent] * (len(requests) - len(results))
        results.append(provider.initiate_transfer(request))
    return results

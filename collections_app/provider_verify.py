"""Live provider verification: asks the live provider what became of a collection transaction
(after its webhook or the customer's return) and applies the answer through
``collections_app.services.transaction_confirm``, keeping the raw exchange for audit."""

from __future__ import annotations

import logging

from django.db import transaction

from collections_app.models import CollectionTransaction, ConfirmationSource, PaymentStatus
from collections_app.providers.base import (
    ProviderExchange,
    ProviderUnavailableError,
    VerifiedStatus,
)
from collections_app.providers.registry import (
    SANDBOX,
    collection_provider_get,
    collection_provider_name,
)
from collections_app.services import (
    PROVIDER_RESPONSES_KEPT,
    ConfirmationResult,
    transaction_confirm,
)
from core.exceptions import ApplicationError, ServiceUnavailableError

logger = logging.getLogger(__name__)


@transaction.atomic
def _provider_responses_append(
    *, collection: CollectionTransaction, exchanges: tuple[ProviderExchange, ...]
) -> None:
    locked = CollectionTransaction.objects.select_for_update().get(pk=collection.pk)
    kept = [*(locked.provider_responses or []), *(e.as_dict() for e in exchanges)]
    locked.provider_responses = kept[-PROVIDER_RESPONSES_KEPT:]
    locked.save(update_fields=["provider_responses", "updated_at"])


def transaction_provider_verify(
    *, collection: CollectionTransaction, source: str = ConfirmationSource.PROVIDER_VERIFY
) -> ConfirmationResult | None:
    """Asks the live provider what happened to the transaction and confirms that outcome
    through ``transaction_confirm`` (paid only when the provider's amount equals
    ``amount_to_be_paid``). ``None`` when there is nothing to apply: the transaction is already
    final (no provider call: idempotent), or the provider still has it open.

    Raises ``ServiceUnavailableError`` when the provider cannot be asked (try again later).
    """
    if collection.is_final:
        return None
    provider_name = collection_provider_name(collection.mode)
    if provider_name == SANDBOX:
        raise ApplicationError("Test-mode transactions are confirmed on the hosted checkout")
    provider = collection_provider_get(provider_name)
    try:
        verified = provider.verify(reference=collection.reference)
    except ProviderUnavailableError as error:
        logger.warning("verify %s with %s failed: %s", collection.reference, provider_name, error)
        raise ServiceUnavailableError("The payment provider is unavailable; retry later") from error
    _provider_responses_append(collection=collection, exchanges=verified.raw)
    if verified.status == VerifiedStatus.PENDING:
        return None
    if verified.currency and verified.currency != collection.currency:
        logger.error(
            "verify %s: provider currency %s differs from %s; not applied",
            collection.reference,
            verified.currency,
            collection.currency,
        )
        return None
    paid = verified.status == VerifiedStatus.PAID
    if paid and verified.amount_paid is None:
        logger.error("verify %s: paid without an amount; not applied", collection.reference)
        return None
    return transaction_confirm(
        collection=collection,
        outcome=PaymentStatus.PAID if paid else PaymentStatus.FAILED,
        gateway_reference=verified.gateway_reference or None,
        gateway_used=provider.name,
        source=source,
        amount_paid=verified.amount_paid if paid else None,
        meta_data={"card": verified.card} if verified.card else None,
    )

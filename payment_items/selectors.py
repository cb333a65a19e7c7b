"""Catalogue reads. Every read is scoped to the merchant and the key's mode."""

from __future__ import annotations

from django.db.models import QuerySet

from core.exceptions import NotFoundError
from merchants.models import Merchant
from payment_items.models import CatalogueStatus, PaymentItem, Subaccount

MAX_DATABASE_ID = 2**63 - 1


def _payment_items(*, merchant: Merchant, mode: str) -> QuerySet[PaymentItem]:
    return PaymentItem.objects.filter(merchant=merchant, mode=mode).select_related(
        "category", "sub_category"
    )


def payment_item_list(*, merchant: Merchant, mode: str) -> QuerySet[PaymentItem]:
    """Active, non-deleted items of the merchant in this mode, oldest first."""
    return _payment_items(merchant=merchant, mode=mode).filter(
        status=CatalogueStatus.ACTIVE, is_deleted=False
    )


def payment_item_get(*, merchant: Merchant, mode: str, payment_item_id: int) -> PaymentItem:
    """The merchant's item in this mode (whatever its status), or 404."""
    item = None
    if 0 < payment_item_id <= MAX_DATABASE_ID:
        item = _payment_items(merchant=merchant, mode=mode).filter(pk=payment_item_id).first()
    if item is None:
        raise NotFoundError("Payment item not found")
    return item


def payment_item_get_payable(
    *, merchant: Merchant, mode: str, payment_item_id: int
) -> PaymentItem | None:
    """The item a transaction may be initialized for: the merchant's, active, not deleted."""
    if not 0 < payment_item_id <= MAX_DATABASE_ID:
        return None
    return (
        payment_item_list(merchant=merchant, mode=mode)
        .select_related("business", "transaction_split")
        .filter(pk=payment_item_id)
        .first()
    )


def subaccounts_get_by_codes(
    *, merchant: Merchant, mode: str, account_codes: list[str]
) -> dict[str, Subaccount]:
    """Active subaccounts of the merchant in this mode, by code (unknown codes are absent)."""
    rows = Subaccount.objects.filter(
        merchant=merchant, mode=mode, is_active=True, account_code__in=account_codes
    ).select_related("bank")
    return {row.account_code: row for row in rows}

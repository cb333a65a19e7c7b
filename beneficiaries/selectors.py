"""Beneficiary reads: the merchant's saved beneficiaries of one mode, one of them, and the
account a payout to one of them is made to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict

from django.db.models import QuerySet

from beneficiaries.models import Beneficiary
from core.exceptions import NotFoundError

if TYPE_CHECKING:
    from merchants.models import Merchant

BENEFICIARY_NOT_FOUND_MESSAGE = "Beneficiary not found"
MAX_DATABASE_ID = 2**63 - 1


def _saved(*, merchant: Merchant, mode: str) -> QuerySet[Beneficiary]:
    """The merchant's beneficiaries of this mode that are not deleted."""
    return Beneficiary.objects.filter(merchant=merchant, mode=mode, deleted_at__isnull=True)


def beneficiary_list(
    *, merchant: Merchant, mode: str, account_number: str | None = None
) -> QuerySet[Beneficiary]:
    """Saved (not deleted) beneficiaries of the merchant in this mode, newest first; optionally
    only those with this account number (at any bank)."""
    queryset = _saved(merchant=merchant, mode=mode)
    if account_number is not None:
        queryset = queryset.filter(account_number=account_number)
    return queryset.order_by("-created_at", "-id")


def beneficiary_get(*, merchant: Merchant, mode: str, beneficiary_id: int) -> Beneficiary:
    """One saved beneficiary; 404 for another merchant's, the other mode's or a deleted one."""
    beneficiary = None
    if 0 < beneficiary_id <= MAX_DATABASE_ID:
        beneficiary = _saved(merchant=merchant, mode=mode).filter(pk=beneficiary_id).first()
    if beneficiary is None:
        raise NotFoundError(BENEFICIARY_NOT_FOUND_MESSAGE)
    return beneficiary


def beneficiary_find(
    *, merchant: Merchant, mode: str, bank_code: str, account_number: str
) -> Beneficiary | None:
    """The saved beneficiary with this account at this bank, if there is one."""
    return (
        _saved(merchant=merchant, mode=mode)
        .filter(bank_code=bank_code, account_number=account_number)
        .first()
    )


class PayoutAccount(TypedDict):
    account_number: str
    bank_code: str
    bank_id: int


def beneficiary_payout_account(
    *, merchant: Merchant, mode: str, beneficiary_id: int
) -> PayoutAccount:
    """The account a payout by ``beneficiary_id`` goes to, as the payout create takes it (the
    create resolves the bank and the account name again); 404 as ``beneficiary_get``."""
    beneficiary = beneficiary_get(merchant=merchant, mode=mode, beneficiary_id=beneficiary_id)
    return PayoutAccount(
        account_number=beneficiary.account_number,
        bank_code=beneficiary.bank_code,
        bank_id=beneficiary.bank_id,
    )


def beneficiary_payout_accounts(
    *, merchant: Merchant, mode: str, beneficiary_ids: Iterable[int]
) -> dict[int, PayoutAccount]:
    """``beneficiary_payout_account`` for many ids in one query (a bulk payout): the accounts
    of the saved ones by id; an unknown, deleted, other-mode or other-merchant id is absent."""
    wanted = {pk for pk in beneficiary_ids if 0 < pk <= MAX_DATABASE_ID}
    if not wanted:
        return {}
    rows = _saved(merchant=merchant, mode=mode).filter(pk__in=wanted)
    return {
        row.pk: PayoutAccount(
            account_number=row.account_number, bank_code=row.bank_code, bank_id=row.bank_id
        )
        for row in rows.only("pk", "account_number", "bank_code", "bank_id")
    }

"""Beneficiary writes: save (resolving the bank and the account name) and soft delete."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.utils import timezone

from beneficiaries.models import Beneficiary
from beneficiaries.selectors import (
    BENEFICIARY_NOT_FOUND_MESSAGE,
    beneficiary_find,
    beneficiary_get,
)
from core.exceptions import NotFoundError
from wallets.name_enquiry import beneficiary_account_number_validate, name_enquiry_resolve
from wallets.selectors import bank_resolve

if TYPE_CHECKING:
    from merchants.models import Merchant

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BeneficiaryCreateResult:
    beneficiary: Beneficiary
    created: bool  # False: the account was already saved and this is that beneficiary


def beneficiary_create(
    *,
    merchant: Merchant,
    mode: str,
    account_number: str,
    bank_code: str,
    nickname: str | None = None,
) -> BeneficiaryCreateResult:
    """Saves a beneficiary, its account name resolved by the name enquiry of the key's mode.

    Errors are the name enquiry's: 400 for a malformed account number, an unknown or inactive
    bank code, or an account name that could not be resolved; 503 with ``Retry-After`` while the
    provider is unavailable. An account already saved (same merchant, mode, bank and number) is
    answered with the saved beneficiary, unchanged, and no name enquiry (``created=False``).
    """
    beneficiary_account_number_validate(account_number)
    bank = bank_resolve(bank_code=bank_code)
    existing = beneficiary_find(
        merchant=merchant, mode=mode, bank_code=bank.bank_code, account_number=account_number
    )
    if existing is not None:
        return BeneficiaryCreateResult(beneficiary=existing, created=False)
    resolved = name_enquiry_resolve(mode=mode, account_number=account_number, bank_code=bank_code)
    try:
        with transaction.atomic():
            beneficiary = Beneficiary.objects.create(
                merchant=merchant,
                mode=mode,
                account_number=account_number,
                account_name=resolved.account_name[:200],
                bank_code=bank.bank_code,
                bank_name=bank.name,
                bank_id=bank.pk,
                nickname=nickname or "",
            )
    except IntegrityError:
        # A concurrent save of the same account committed first (the partial unique
        # constraint): answer with that one.
        existing = beneficiary_find(
            merchant=merchant, mode=mode, bank_code=bank.bank_code, account_number=account_number
        )
        if existing is None:
            raise
        return BeneficiaryCreateResult(beneficiary=existing, created=False)
    logger.info(
        "beneficiary %s saved for merchant %s (%s), name enquiry %s",
        beneficiary.pk,
        merchant.pk,
        mode,
        resolved.reference,
    )
    return BeneficiaryCreateResult(beneficiary=beneficiary, created=True)


@transaction.atomic
def beneficiary_delete(*, merchant: Merchant, mode: str, beneficiary_id: int) -> Beneficiary:
    """Soft-deletes a saved beneficiary and returns it; 404 as ``beneficiary_get`` (a deleted
    one included). Payouts made to it keep their own copy of the account; the account may be
    saved again."""
    beneficiary = beneficiary_get(merchant=merchant, mode=mode, beneficiary_id=beneficiary_id)
    now = timezone.now()
    deleted = Beneficiary.objects.filter(pk=beneficiary.pk, deleted_at__isnull=True).update(
        deleted_at=now
    )
    if not deleted:  # a concurrent request deleted it first
        raise NotFoundError(BENEFICIARY_NOT_FOUND_MESSAGE)
    beneficiary.deleted_at = now
    logger.info("beneficiary %s deleted by merchant %s (%s)", beneficiary.pk, merchant.pk, mode)
    return beneficiary

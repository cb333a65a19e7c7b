"""beneficiaries.selectors: the list, one beneficiary, and the account a payout goes to."""

from __future__ import annotations

import pytest

from beneficiaries.selectors import (
    beneficiary_get,
    beneficiary_list,
    beneficiary_payout_account,
)
from core.exceptions import NotFoundError
from merchants.models import Mode
from tests.beneficiaries.factories import BeneficiaryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def merchant(merchant_account):
    return merchant_account.merchant


def test_the_list_is_newest_first_without_deleted_ones(merchant) -> None:
    first, second, third = (BeneficiaryFactory(merchant=merchant) for _ in range(3))
    second.deleted_at = second.created_at
    second.save()
    assert list(beneficiary_list(merchant=merchant, mode=Mode.TEST)) == [third, first]


def test_the_list_is_scoped_to_the_merchant_and_the_mode(merchant, other_merchant) -> None:
    mine = BeneficiaryFactory(merchant=merchant)
    BeneficiaryFactory(merchant=merchant, mode=Mode.LIVE)
    BeneficiaryFactory(merchant=other_merchant.merchant)
    assert list(beneficiary_list(merchant=merchant, mode=Mode.TEST)) == [mine]


def test_the_list_filters_by_account_number(merchant) -> None:
    wanted = BeneficiaryFactory(merchant=merchant, account_number="0123456789")
    at_access = BeneficiaryFactory(merchant=merchant, account_number="0123456789", bank_code="044")
    BeneficiaryFactory(merchant=merchant)
    found = beneficiary_list(merchant=merchant, mode=Mode.TEST, account_number="0123456789")
    assert list(found) == [at_access, wanted]


def test_get_answers_404_for_anything_not_saved_by_this_merchant_in_this_mode(
    merchant, other_merchant
) -> None:
    deleted = BeneficiaryFactory(merchant=merchant)
    deleted.deleted_at = deleted.created_at
    deleted.save()
    others = [
        BeneficiaryFactory(merchant=other_merchant.merchant),
        BeneficiaryFactory(merchant=merchant, mode=Mode.LIVE),
    ]
    for beneficiary_id in [deleted.pk, *(o.pk for o in others), 0, -1, 2**63, 10**40]:
        with pytest.raises(NotFoundError, match="^Beneficiary not found$"):
            beneficiary_get(merchant=merchant, mode=Mode.TEST, beneficiary_id=beneficiary_id)


def test_the_payout_account_is_the_saved_account(merchant) -> None:
    saved = BeneficiaryFactory(merchant=merchant, bank_code="044")
    account = beneficiary_payout_account(merchant=merchant, mode=Mode.TEST, beneficiary_id=saved.pk)
    assert account == {
        "account_number": saved.account_number,
        "bank_code": "044",
        "bank_id": saved.bank_id,
    }

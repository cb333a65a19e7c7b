"""beneficiaries.services: save (name enquiry, duplicates, failures) and soft delete."""

from __future__ import annotations

import pytest

from beneficiaries import services
from beneficiaries.models import Beneficiary
from beneficiaries.services import beneficiary_create, beneficiary_delete
from core.exceptions import ApplicationError, NotFoundError, ServiceUnavailableError
from merchants.models import Mode
from tests.beneficiaries.factories import BeneficiaryFactory
from tests.beneficiaries.helpers import ACCESS_CODE, GOOD_ACCOUNT, GTB_CODE
from wallets.name_enquiry import (
    ACCOUNT_DIGITS_MESSAGE,
    ACCOUNT_LENGTH_MESSAGE,
    NAME_ENQUIRY_UNAVAILABLE_MESSAGE,
    NAME_NOT_RESOLVED_MESSAGE,
)
from wallets.providers.sandbox import (
    UNAVAILABLE_ACCOUNT_NUMBER,
    UNRESOLVABLE_ACCOUNT_NUMBER,
    sandbox_account_name,
)
from wallets.selectors import BANK_NOT_RESOLVED_MESSAGE, bank_get_by_code

pytestmark = pytest.mark.django_db


@pytest.fixture
def merchant(merchant_account):
    return merchant_account.merchant


def save(merchant, **overrides):
    arguments = {
        "merchant": merchant,
        "mode": Mode.TEST,
        "account_number": GOOD_ACCOUNT,
        "bank_code": GTB_CODE,
    }
    arguments.update(overrides)
    return beneficiary_create(**arguments)


# --- Save ----------------------------------------------------------------------------------------


def test_save_resolves_the_account_name_through_name_enquiry(merchant, name_enquiry) -> None:
    result = save(merchant, nickname="Warehouse rent")
    assert result.created is True
    beneficiary = Beneficiary.objects.get(pk=result.beneficiary.pk)
    gtb = bank_get_by_code(bank_code=GTB_CODE)
    assert beneficiary.merchant == merchant
    assert beneficiary.mode == Mode.TEST
    assert beneficiary.account_number == GOOD_ACCOUNT
    assert beneficiary.account_name == sandbox_account_name(GOOD_ACCOUNT)
    assert (beneficiary.bank_code, beneficiary.bank_name, beneficiary.bank_id) == (
        gtb.bank_code,
        gtb.name,
        gtb.pk,
    )
    assert beneficiary.nickname == "Warehouse rent"
    assert beneficiary.deleted_at is None
    assert name_enquiry.calls == [GOOD_ACCOUNT]


def test_the_name_saved_is_the_one_name_enquiry_gives(merchant, name_enquiry) -> None:
    name_enquiry.renamed[GOOD_ACCOUNT] = "OKAFOR ADAEZE"
    assert save(merchant).beneficiary.account_name == "OKAFOR ADAEZE"


def test_no_nickname_is_stored_as_empty(merchant) -> None:
    assert save(merchant, nickname=None).beneficiary.nickname == ""


def test_saving_a_saved_account_answers_the_saved_one_unchanged(merchant, name_enquiry) -> None:
    first = save(merchant, nickname="Rent").beneficiary
    again = save(merchant, nickname="Another label")
    assert again.created is False
    assert again.beneficiary.pk == first.pk
    assert again.beneficiary.nickname == "Rent"
    assert Beneficiary.objects.count() == 1
    assert name_enquiry.calls == [GOOD_ACCOUNT]  # no second name enquiry


def test_the_same_number_at_another_bank_is_another_beneficiary(merchant) -> None:
    first = save(merchant).beneficiary
    second = save(merchant, bank_code=ACCESS_CODE)
    assert second.created is True
    assert second.beneficiary.pk != first.pk
    assert second.beneficiary.bank_name == "Access Bank"


def test_each_mode_and_merchant_saves_its_own(merchant, other_merchant) -> None:
    test_one = save(merchant).beneficiary
    live_one = save(merchant, mode=Mode.LIVE)
    other_one = save(other_merchant.merchant)
    assert live_one.created is True and other_one.created is True
    assert len({test_one.pk, live_one.beneficiary.pk, other_one.beneficiary.pk}) == 3


def test_a_concurrent_save_of_the_same_account_answers_the_one_that_won(
    merchant, monkeypatch
) -> None:
    """Both requests found nothing saved; the other one inserted while this one was asking
    name enquiry: the unique constraint refuses this insert and the saved one is answered."""
    resolve = services.name_enquiry_resolve
    winner: list[Beneficiary] = []

    def resolve_while_another_saves(**kwargs):
        result = resolve(**kwargs)
        winner.append(BeneficiaryFactory(merchant=merchant, account_number=GOOD_ACCOUNT))
        return result

    monkeypatch.setattr(services, "name_enquiry_resolve", resolve_while_another_saves)
    result = save(merchant)
    assert result.created is False
    assert result.beneficiary.pk == winner[0].pk
    assert Beneficiary.objects.count() == 1


@pytest.mark.parametrize(
    ("account_number", "bank_code", "error", "status", "message"),
    [
        (UNRESOLVABLE_ACCOUNT_NUMBER, GTB_CODE, ApplicationError, 400, NAME_NOT_RESOLVED_MESSAGE),
        (
            UNAVAILABLE_ACCOUNT_NUMBER,
            GTB_CODE,
            ServiceUnavailableError,
            503,
            NAME_ENQUIRY_UNAVAILABLE_MESSAGE,
        ),
        (GOOD_ACCOUNT, "999", ApplicationError, 400, BANK_NOT_RESOLVED_MESSAGE),
        (GOOD_ACCOUNT, "030", ApplicationError, 400, BANK_NOT_RESOLVED_MESSAGE),  # inactive
        ("01234567a9", GTB_CODE, ApplicationError, 400, ACCOUNT_DIGITS_MESSAGE),
        ("012345678", GTB_CODE, ApplicationError, 400, ACCOUNT_LENGTH_MESSAGE),
    ],
    ids=["unresolved", "unavailable", "unknown-bank", "inactive-bank", "letters", "nine-digits"],
)
def test_name_enquiry_failures_save_nothing(
    merchant, account_number, bank_code, error, status, message
) -> None:
    with pytest.raises(error) as raised:
        save(merchant, account_number=account_number, bank_code=bank_code)
    assert raised.value.status == status
    assert raised.value.message == message
    assert not Beneficiary.objects.exists()


def test_an_unavailable_name_enquiry_asks_to_retry_later(merchant) -> None:
    with pytest.raises(ServiceUnavailableError) as raised:
        save(merchant, account_number=UNAVAILABLE_ACCOUNT_NUMBER)
    assert raised.value.headers == {"Retry-After": "5"}


def test_a_bad_bank_is_refused_before_asking_the_provider(merchant, name_enquiry) -> None:
    with pytest.raises(ApplicationError):
        save(merchant, bank_code="999")
    assert name_enquiry.calls == []


# --- Delete --------------------------------------------------------------------------------------


def test_delete_is_soft_and_returns_the_beneficiary(merchant) -> None:
    saved = BeneficiaryFactory(merchant=merchant)
    deleted = beneficiary_delete(merchant=merchant, mode=Mode.TEST, beneficiary_id=saved.pk)
    assert deleted.pk == saved.pk
    assert deleted.deleted_at is not None
    assert Beneficiary.objects.get(pk=saved.pk).deleted_at == deleted.deleted_at


def test_a_deleted_beneficiary_cannot_be_deleted_again(merchant) -> None:
    saved = BeneficiaryFactory(merchant=merchant)
    beneficiary_delete(merchant=merchant, mode=Mode.TEST, beneficiary_id=saved.pk)
    with pytest.raises(NotFoundError, match="Beneficiary not found"):
        beneficiary_delete(merchant=merchant, mode=Mode.TEST, beneficiary_id=saved.pk)


def test_another_merchants_or_modes_beneficiary_is_not_deleted(merchant, other_merchant) -> None:
    theirs = BeneficiaryFactory(merchant=other_merchant.merchant)
    live = BeneficiaryFactory(merchant=merchant, mode=Mode.LIVE)
    for beneficiary in (theirs, live):
        with pytest.raises(NotFoundError):
            beneficiary_delete(merchant=merchant, mode=Mode.TEST, beneficiary_id=beneficiary.pk)
    assert Beneficiary.objects.filter(deleted_at__isnull=True).count() == 2


def test_a_deleted_account_may_be_saved_again(merchant, name_enquiry) -> None:
    first = save(merchant).beneficiary
    beneficiary_delete(merchant=merchant, mode=Mode.TEST, beneficiary_id=first.pk)
    again = save(merchant)
    assert again.created is True
    assert again.beneficiary.pk != first.pk
    assert name_enquiry.calls == [GOOD_ACCOUNT, GOOD_ACCOUNT]
    assert Beneficiary.objects.count() == 2

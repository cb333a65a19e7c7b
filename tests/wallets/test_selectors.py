from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.utils import timezone

from core.exceptions import ApplicationError
from payouts.selectors import payout_quote
from tests.wallets.factories import BankFactory, FeeScheduleFactory, FeeTierFactory
from wallets.models import Bank, FeeSchedule, FeeTier
from wallets.selectors import (
    BANK_ID_MISMATCH_MESSAGE,
    BANK_NOT_RESOLVED_MESSAGE,
    bank_get_by_code,
    bank_list,
    bank_resolve,
    payout_fee_calculate,
)

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.mark.parametrize(
    ("amount", "fee"),
    [
        ("0.01", "10.00"),
        ("4999.99", "10.00"),
        ("5000.00", "10.00"),
        ("5000.01", "25.00"),
        ("49999.99", "25.00"),
        ("50000.00", "25.00"),
        ("50000.01", "50.00"),
        ("9999999999.99", "50.00"),
    ],
)
def test_default_schedule_is_paystack_ngn_transfer_pricing(amount: str, fee: str) -> None:
    assert payout_fee_calculate(amount=D(amount)) == D(fee)


def test_a_schedule_applies_only_from_its_effective_date() -> None:
    starts = timezone.now() + timedelta(days=1)
    FeeTierFactory(schedule=FeeScheduleFactory(effective_from=starts), fee_amount=D("7.50"))
    assert payout_fee_calculate(amount=D("100.00")) == D("10.00")
    assert payout_fee_calculate(amount=D("100.00"), at=starts) == D("7.50")
    assert payout_fee_calculate(amount=D("100.00"), at=starts - timedelta(seconds=1)) == D("10.00")


def test_the_newest_started_schedule_replaces_older_ones_entirely() -> None:
    schedule = FeeScheduleFactory(effective_from=timezone.now() - timedelta(minutes=1))
    FeeTierFactory(schedule=schedule, min_amount=D("0.01"), max_amount=D("100.00"))
    # The new schedule has no tier above 100.00; the older schedule must not fill the gap.
    with pytest.raises(ApplicationError, match="Payout fee could not be determined"):
        payout_fee_calculate(amount=D("100.01"))


def test_no_schedule_at_all_is_a_clear_error() -> None:
    FeeSchedule.objects.all().delete()
    with pytest.raises(ApplicationError, match="Payout fee could not be determined"):
        payout_fee_calculate(amount=D("1.00"))


def test_quote_adds_fee_to_amount() -> None:
    quote = payout_quote(amount=D("5000.01"))
    assert (quote.amount, quote.fee_amount, quote.total_debit_amount, quote.currency) == (
        D("5000.01"),
        D("25.00"),
        D("5025.01"),
        "NGN",
    )


def test_quote_refuses_other_currencies() -> None:
    with pytest.raises(ApplicationError, match="Only NGN payouts are supported"):
        payout_quote(amount=D("1.00"), currency="USD")


# --- Banks -------------------------------------------------------------------------------------

COMMERCIAL_BANKS = {
    "044": ("000014", "Access Bank"),
    "058": ("000013", "Guaranty Trust Bank"),
    "057": ("000015", "Zenith Bank"),
    "011": ("000016", "First Bank of Nigeria"),
    "033": ("000004", "United Bank For Africa"),
    "070": ("000007", "Fidelity Bank"),
    "214": ("000003", "First City Monument Bank"),
    "032": ("000018", "Union Bank of Nigeria"),
    "232": ("000001", "Sterling Bank"),
    "035": ("000017", "Wema Bank"),
    "221": ("000012", "Stanbic IBTC Bank"),
    "050": ("000010", "Ecobank Nigeria"),
    "076": ("000008", "Polaris Bank"),
    "082": ("000002", "Keystone Bank"),
    "215": ("000011", "Unity Bank"),
    "301": ("000006", "Jaiz Bank"),
    "101": ("000023", "Providus Bank"),
    "102": ("000025", "Titan Trust Bank"),
    "00103": ("000027", "Globus Bank"),
    "100": ("000022", "SunTrust Bank"),
}
FINTECHS = {
    "999992": "100004",  # OPay
    "999991": "100033",  # PalmPay
    "50515": "090405",  # Moniepoint
    "50211": "090267",  # Kuda
}


def test_seeded_banks_carry_cbn_and_nip_codes() -> None:
    seeded = {bank.bank_code: bank for bank in Bank.objects.all()}
    assert len(seeded) >= 20
    for code, (nip, name) in COMMERCIAL_BANKS.items():
        assert seeded[code].institution_code == nip
        assert seeded[code].name == name
    for code, nip in FINTECHS.items():
        assert seeded[code].institution_code == nip
    nip_codes = [bank.institution_code for bank in seeded.values()]
    assert len(nip_codes) == len(set(nip_codes))


def test_bank_list_holds_active_banks_only() -> None:
    inactive = BankFactory(is_active=False)
    codes = {bank.bank_code for bank in bank_list()}
    assert inactive.bank_code not in codes
    assert "058" in codes


def test_bank_get_by_code_ignores_inactive_banks() -> None:
    bank = BankFactory()
    assert bank_get_by_code(bank_code=bank.bank_code) == bank
    bank.is_active = False
    bank.save()
    assert bank_get_by_code(bank_code=bank.bank_code) is None


def test_bank_resolve_returns_the_active_bank_with_the_code() -> None:
    bank = BankFactory()
    assert bank_resolve(bank_code=bank.bank_code) == bank
    assert bank_resolve(bank_code=bank.bank_code, bank_id=bank.pk) == bank


def test_bank_resolve_refuses_an_unknown_code() -> None:
    with pytest.raises(ApplicationError) as raised:
        bank_resolve(bank_code="nope")
    assert raised.value.message == BANK_NOT_RESOLVED_MESSAGE
    assert raised.value.status == 400


def test_bank_resolve_refuses_an_inactive_bank() -> None:
    inactive = BankFactory(is_active=False)
    with pytest.raises(ApplicationError, match=BANK_NOT_RESOLVED_MESSAGE):
        bank_resolve(bank_code=inactive.bank_code)


def test_bank_resolve_refuses_a_bank_id_of_another_bank() -> None:
    other = bank_get_by_code(bank_code="044")
    with pytest.raises(ApplicationError) as raised:
        bank_resolve(bank_code="058", bank_id=other.pk)
    assert raised.value.message == BANK_ID_MISMATCH_MESSAGE


def test_bank_lookup_is_served_from_the_cache(django_assert_num_queries) -> None:
    bank_list()
    with django_assert_num_queries(0):
        assert bank_get_by_code(bank_code="058") is not None
        assert bank_get_by_code(bank_code="nope") is None


def test_bank_cache_is_cleared_when_a_bank_is_added_or_deleted() -> None:
    bank_list()
    bank = BankFactory(bank_code="777777")
    assert bank_get_by_code(bank_code="777777") == bank
    bank.delete()
    assert bank_get_by_code(bank_code="777777") is None


# --- Per-process memo of banks and fee tiers ---------------------------------------------------


def test_fee_lookups_are_served_from_process_memory(django_assert_num_queries) -> None:
    payout_fee_calculate(amount=D("100.00"))
    with django_assert_num_queries(0):
        assert payout_fee_calculate(amount=D("100.00")) == D("10.00")
        assert payout_fee_calculate(amount=D("60000.00")) == D("50.00")


def test_a_tier_saved_in_this_process_applies_at_once() -> None:
    assert payout_fee_calculate(amount=D("100.00")) == D("10.00")
    schedule = FeeScheduleFactory(effective_from=timezone.now() - timedelta(seconds=1))
    FeeTierFactory(schedule=schedule, fee_amount=D("3.00"))
    assert payout_fee_calculate(amount=D("100.00")) == D("3.00")


def test_a_change_from_another_process_applies_within_the_memo_period(
    settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core import memo

    settings.REFERENCE_DATA_LOCAL_SECONDS = 5
    clock = [1000.0]
    monkeypatch.setattr(memo.time, "monotonic", lambda: clock[0])
    assert payout_fee_calculate(amount=D("100.00")) == D("10.00")
    assert bank_get_by_code(bank_code="058") is not None
    # queryset.update() sends no signal, as a write by another process would not reach here.
    FeeTier.objects.filter(fee_amount=D("10.00")).update(fee_amount=D("11.00"))
    Bank.objects.filter(bank_code="058").update(is_active=False)
    cache.clear()  # the shared cache was cleared by the writer's process
    clock[0] += 4
    assert payout_fee_calculate(amount=D("100.00")) == D("10.00")
    assert bank_get_by_code(bank_code="058") is not None
    clock[0] += 1
    assert payout_fee_calculate(amount=D("100.00")) == D("11.00")
    assert bank_get_by_code(bank_code="058") is None


def test_memo_off_reads_every_time(settings) -> None:
    settings.REFERENCE_DATA_LOCAL_SECONDS = 0
    assert payout_fee_calculate(amount=D("100.00")) == D("10.00")
    FeeTier.objects.filter(fee_amount=D("10.00")).update(fee_amount=D("12.00"))
    assert payout_fee_calculate(amount=D("100.00")) == D("12.00")

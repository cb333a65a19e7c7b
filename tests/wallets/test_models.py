from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from merchants.models import Mode
from merchants.services import merchant_create
from tests.wallets.factories import WalletFactory
from wallets.models import LedgerEntry, LedgerEntryImmutableError, Wallet
from wallets.services import wallets_create_for_merchant

pytestmark = pytest.mark.django_db


def test_merchant_gets_a_test_and_a_live_wallet_with_static_accounts(merchant_account) -> None:
    wallets = {w.mode: w for w in Wallet.objects.filter(merchant=merchant_account.merchant)}
    assert set(wallets) == {Mode.TEST, Mode.LIVE}
    for wallet in wallets.values():
        assert wallet.currency == "NGN"
        assert wallet.status == "active"
        assert wallet.available_balance == wallet.reserved_balance == Decimal("0.00")
        assert len(wallet.static_account_number) == 10
        assert wallet.static_account_number.isdigit()
        assert wallet.static_account_name == "Ade Stores"
    assert wallets[Mode.LIVE].static_bank_name == "Wema Bank"
    assert wallets[Mode.TEST].static_bank_name == "Sandbox Test Bank"
    assert wallets[Mode.TEST].static_account_number != wallets[Mode.LIVE].static_account_number


def test_static_account_numbers_are_unique_across_many_merchants() -> None:
    for index in range(30):
        merchant_create(name=f"Shop {index}", email=f"shop{index}@example.com")
    numbers = list(Wallet.objects.values_list("static_account_number", flat=True))
    assert len(numbers) == 60
    assert len(set(numbers)) == 60


def test_wallets_create_for_merchant_is_idempotent(merchant_account) -> None:
    again = wallets_create_for_merchant(merchant=merchant_account.merchant)
    assert len(again) == 2
    assert Wallet.objects.filter(merchant=merchant_account.merchant).count() == 2


def test_second_wallet_of_a_mode_is_refused_by_the_database(test_wallet) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        WalletFactory(merchant=test_wallet.merchant, mode=Mode.TEST)


@pytest.mark.parametrize("field", ["available_balance", "reserved_balance"])
def test_negative_balances_are_refused_by_check_constraints(test_wallet, field: str) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.filter(pk=test_wallet.pk).update(**{field: Decimal("-0.01")})


def test_static_account_number_must_be_ten_digits(test_wallet) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.filter(pk=test_wallet.pk).update(static_account_number="12345")


def test_ledger_entries_cannot_be_updated(test_wallet, fund) -> None:
    entry = fund(test_wallet, "100.00").ledger_entry
    entry.amount = Decimal("1.00")
    with pytest.raises(LedgerEntryImmutableError):
        entry.save()
    with pytest.raises(LedgerEntryImmutableError):
        LedgerEntry.objects.filter(pk=entry.pk).update(amount=Decimal("1.00"))
    assert LedgerEntry.objects.get(pk=entry.pk).amount == Decimal("100.00")


def test_ledger_entries_cannot_be_deleted(test_wallet, fund) -> None:
    entry = fund(test_wallet, "100.00").ledger_entry
    with pytest.raises(LedgerEntryImmutableError):
        entry.delete()
    with pytest.raises(LedgerEntryImmutableError):
        LedgerEntry.objects.filter(pk=entry.pk).delete()
    assert LedgerEntry.objects.filter(pk=entry.pk).exists()


def test_wallet_with_ledger_entries_cannot_be_deleted(test_wallet, fund) -> None:
    from django.db.models import ProtectedError

    fund(test_wallet, "5.00")
    with pytest.raises(ProtectedError):
        test_wallet.delete()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE wallets_ledgerentry SET amount = 1 WHERE id = %s",
        "DELETE FROM wallets_ledgerentry WHERE id = %s",
    ],
)
def test_database_refuses_raw_updates_and_deletes_of_ledger_rows(test_wallet, fund, sql) -> None:
    entry = fund(test_wallet, "100.00").ledger_entry
    with (
        pytest.raises(IntegrityError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, [entry.pk])
    assert LedgerEntry.objects.get(pk=entry.pk).amount == Decimal("100.00")

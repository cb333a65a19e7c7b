"""The migrations that move money columns to integer kobo convert every existing row exactly:
rows written with odd cents in the decimal schema come out of the integer schema with the same
value to the kobo, and the CHECK constraints hold afterwards."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor

from collections_app.models import CollectionFeeSchedule, CollectionTransaction
from payment_items.models import PaymentItem, TransactionSplitShare
from payouts.models import Payout
from tests.collections_app.factories import CollectionTransactionFactory
from tests.payment_items.factories import TransactionSplitShareFactory
from tests.payouts.factories import PayoutFactory
from tests.wallets.factories import WalletFactory
from wallets.models import FeeTier, LedgerEntry, LedgerEntryType, Wallet

DECIMAL_SCHEMA = [
    ("wallets", "0003_ledger_append_only_trigger"),
    ("payouts", "0001_initial"),
    ("payment_items", "0001_initial"),
    ("collections_app", "0003_events_deliveries_provider"),
]
ODD_CENTS = ["0.07", "1.13", "59.96", "506.17", "8188.62", "65534.29", "999999999999.99"]


def _migrate(targets: list[tuple[str, str]] | None = None) -> MigrationExecutor:
    """To ``targets``, or forward to the latest migration of every app."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets if targets is not None else executor.loader.graph.leaf_nodes())
    return executor


def _raw(table: str, column: str, pk: int) -> object:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {connection.ops.quote_name(column)} FROM "  # noqa: S608
            f"{connection.ops.quote_name(table)} WHERE id = %s",
            [pk],
        )
        return cursor.fetchone()[0]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_odd_cent_rows_migrate_forward_exactly() -> None:
    wallet = WalletFactory()
    payout = PayoutFactory(wallet=wallet)
    transaction_row = CollectionTransactionFactory()
    share = TransactionSplitShareFactory()
    tier_id = FeeTier.objects.order_by("pk").values_list("pk", flat=True).first()
    schedule_id = CollectionFeeSchedule.objects.values_list("pk", flat=True).first()

    try:
        old_apps = _migrate(DECIMAL_SCHEMA).loader.project_state(DECIMAL_SCHEMA).apps
        # The decimal schema: write odd-cent values through the historical models.
        ledger_ids = []
        for index, value in enumerate(ODD_CENTS):
            amount = Decimal(value)
            ledger_ids.append(
                old_apps.get_model("wallets", "LedgerEntry")
                .objects.create(
                    wallet_id=wallet.pk,
                    entry_type=LedgerEntryType.FUNDING,
                    amount=amount,
                    fee_amount=Decimal("0.00"),
                    available_delta=amount,
                    reserved_delta=Decimal("0.00"),
                    available_balance_after=amount,
                    reserved_balance_after=Decimal("0.00"),
                    reference=f"MIGRATE-{index}",
                )
                .pk
            )
        old_apps.get_model("wallets", "Wallet").objects.filter(pk=wallet.pk).update(
            available_balance=Decimal("65534.29"), reserved_balance=Decimal("506.17")
        )
        old_apps.get_model("payouts", "Payout").objects.filter(pk=payout.pk).update(
            amount=Decimal("8188.62"),
            fee_amount=Decimal("25.01"),
            total_debit_amount=Decimal("8213.63"),
        )
        old_apps.get_model("collections_app", "CollectionTransaction").objects.filter(
            pk=transaction_row.pk
        ).update(
            amount=Decimal("59.96"),
            transaction_fee=Decimal("0.91"),
            amount_to_be_paid=Decimal("60.87"),
            amount_paid=Decimal("60.87"),
        )
        old_apps.get_model("payment_items", "PaymentItem").objects.filter(
            pk=transaction_row.payment_item_id
        ).update(amount=Decimal("1.13"))
        old_apps.get_model("payment_items", "TransactionSplitShare").objects.filter(
            pk=share.pk
        ).update(share=Decimal("12.57"))
        old_apps.get_model("wallets", "FeeTier").objects.filter(pk=tier_id).update(
            fee_amount=Decimal("10.07")
        )
        old_apps.get_model("collections_app", "CollectionFeeSchedule").objects.filter(
            pk=schedule_id
        ).update(percentage_rate=Decimal("1.37"), fee_cap=Decimal("1999.99"))
    finally:
        _migrate()

    entries = LedgerEntry.objects.filter(pk__in=ledger_ids).order_by("pk")
    assert [entry.amount for entry in entries] == [Decimal(value) for value in ODD_CENTS]
    assert [entry.available_balance_after for entry in entries] == [
        Decimal(value) for value in ODD_CENTS
    ]
    assert [_raw("wallets_ledgerentry", "amount", pk) for pk in ledger_ids] == [
        int(Decimal(value) * 100) for value in ODD_CENTS
    ]
    wallet = Wallet.objects.get(pk=wallet.pk)
    assert (wallet.available_balance, wallet.reserved_balance) == (
        Decimal("65534.29"),
        Decimal("506.17"),
    )
    assert _raw("wallets_wallet", "available_balance", wallet.pk) == 6553429
    payout = Payout.objects.get(pk=payout.pk)
    assert (payout.amount, payout.fee_amount, payout.total_debit_amount) == (
        Decimal("8188.62"),
        Decimal("25.01"),
        Decimal("8213.63"),
    )
    transaction_row = CollectionTransaction.objects.get(pk=transaction_row.pk)
    assert (
        transaction_row.amount,
        transaction_row.transaction_fee,
        transaction_row.amount_to_be_paid,
        transaction_row.amount_paid,
    ) == (Decimal("59.96"), Decimal("0.91"), Decimal("60.87"), Decimal("60.87"))
    assert PaymentItem.objects.get(pk=transaction_row.payment_item_id).amount == Decimal("1.13")
    assert TransactionSplitShare.objects.get(pk=share.pk).share == Decimal("12.57")
    assert FeeTier.objects.get(pk=tier_id).fee_amount == Decimal("10.07")
    schedule = CollectionFeeSchedule.objects.get(pk=schedule_id)
    assert (schedule.percentage_rate, schedule.fee_cap) == (Decimal("1.37"), Decimal("1999.99"))
    assert _raw("collections_app_collectionfeeschedule", "percentage_rate", schedule_id) == 137


@pytest.mark.django_db(transaction=True)
def test_constraints_are_compiled_against_the_integer_columns() -> None:
    """``percentage_rate <= 100`` means 100 %, i.e. 10000 hundredths, after the migration."""
    schedule = CollectionFeeSchedule.objects.get(is_active=True)
    schedule.percentage_rate = Decimal("100.00")
    schedule.save(update_fields=["percentage_rate"])
    with pytest.raises(IntegrityError):
        CollectionFeeSchedule.objects.filter(pk=schedule.pk).update(
            percentage_rate=Decimal("100.01")
        )

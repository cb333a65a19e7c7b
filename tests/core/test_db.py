"""``rows_update`` writes what ``bulk_update`` writes, and ``ModelRow`` reads what a queryset
reads, for every kind of column a payout has (money, text, JSON, instants and their absence,
booleans, counters), on either backend."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.db import ModelRow, quoted_column, quoted_table, rows_update
from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts.models import Payout, PayoutStatus
from tests.payouts.factories import PayoutFactory
from wallets.models import Wallet
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db


@pytest.fixture
def test_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)


FIELDS = [
    "status",
    "error_message",
    "provider_reference",
    "provider_responses",
    "dispatch_attempts",
    "dispatch_claimed_at",
    "verify_before_send",
    "completed_at",
    "amount",
    "fee_amount",
    "total_debit_amount",
]
text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=20,
)
instants = st.none() | st.datetimes(
    min_value=datetime(2000, 1, 1),  # noqa: DTZ001 (hypothesis takes naive bounds)
    max_value=datetime(2100, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)
amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("9999999.99"), places=2)
changes = st.fixed_dictionaries(
    {
        "status": st.sampled_from(PayoutStatus.values),
        "error_message": st.none() | text,
        "provider_reference": text,
        "provider_responses": st.lists(
            st.dictionaries(text, st.none() | text | st.integers(-(2**53), 2**53)), max_size=3
        ),
        "dispatch_attempts": st.integers(0, 2**31 - 1),
        "dispatch_claimed_at": instants,
        "verify_before_send": st.booleans(),
        "completed_at": instants,
        "amount": amounts,
        "fee_amount": amounts,
    }
)


def _row(payout_id: int) -> dict[str, Any]:
    return Payout.objects.values(*FIELDS).get(pk=payout_id)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(new_values=st.lists(changes, min_size=1, max_size=5))
def test_rows_update_writes_what_bulk_update_writes(
    test_wallet: Wallet, new_values: list[dict[str, Any]]
) -> None:
    with transaction.atomic():
        ours = [PayoutFactory(wallet=test_wallet) for _ in new_values]
        theirs = [PayoutFactory(wallet=test_wallet) for _ in new_values]
        for mine, other, values in zip(ours, theirs, new_values, strict=True):
            values = {**values, "total_debit_amount": values["amount"] + values["fee_amount"]}
            for name, value in values.items():
                setattr(mine, name, value)
                setattr(other, name, value)

        assert rows_update(ours, FIELDS) == len(ours)
        Payout.objects.bulk_update(theirs, FIELDS)

        for mine, other in zip(ours, theirs, strict=True):
            assert _row(mine.pk) == _row(other.pk)
        transaction.set_rollback(True)


def test_rows_update_is_one_statement_and_leaves_other_columns_and_rows_alone(
    test_wallet: Wallet,
) -> None:
    first, second, untouched = (PayoutFactory(wallet=test_wallet) for _ in range(3))
    first.status, second.status = PayoutStatus.FAILED, PayoutStatus.SUCCESSFUL
    first.narration = "not written: not listed"

    with CaptureQueriesContext(connection) as queries:
        rows_update([first, second], ["status"])

    assert len(queries) == 1
    assert list(Payout.objects.order_by("pk").values_list("status", "narration")) == [
        (PayoutStatus.FAILED, "Invoice"),
        (PayoutStatus.SUCCESSFUL, "Invoice"),
        (untouched.status, "Invoice"),
    ]


def test_a_value_too_long_for_its_column_is_refused_not_cut(test_wallet: Wallet) -> None:
    payout = PayoutFactory(wallet=test_wallet)
    payout.error_message = "e" * 256  # 255 characters at most

    with pytest.raises(DatabaseError), transaction.atomic():
        rows_update([payout], ["error_message"])


def test_rows_update_refuses_the_primary_key_and_unsaved_rows(test_wallet: Wallet) -> None:
    saved = PayoutFactory(wallet=test_wallet)
    with pytest.raises(ValueError, match="not a concrete, non-key column"):
        rows_update([saved], ["id"])
    with pytest.raises(ValueError, match="saved row"):
        rows_update([saved, Payout()], ["status"])
    assert rows_update([], ["status"]) == 0


PAYOUT_ROW = ModelRow(Payout, "p")


def _read_by_hand(payout_ids: list[int]) -> list[Payout | None]:
    table = connection.ops.quote_name(Payout._meta.db_table)
    placeholders = ", ".join(["%s"] * len(payout_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {PAYOUT_ROW.columns(connection)} FROM {table} p "  # noqa: S608
            f"WHERE p.id IN ({placeholders}) ORDER BY p.id",
            payout_ids,
        )
        return [PAYOUT_ROW.instance(row, connection) for row in cursor.fetchall()]


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(new_values=st.lists(changes, min_size=1, max_size=4))
def test_model_row_reads_what_a_queryset_reads(
    test_wallet: Wallet, new_values: list[dict[str, Any]]
) -> None:
    with transaction.atomic():
        payouts = [PayoutFactory(wallet=test_wallet) for _ in new_values]
        for payout, values in zip(payouts, new_values, strict=True):
            values = {**values, "total_debit_amount": values["amount"] + values["fee_amount"]}
            Payout.objects.filter(pk=payout.pk).update(**values)
        ids = sorted(payout.pk for payout in payouts)

        by_hand = _read_by_hand(ids)
        by_queryset = list(Payout.objects.filter(pk__in=ids).order_by("pk"))

        assert len(by_hand) == len(by_queryset)
        for mine, theirs in zip(by_hand, by_queryset, strict=True):
            assert isinstance(mine, Payout)
            assert not mine._state.adding and mine._state.db == theirs._state.db
            for field in Payout._meta.concrete_fields:
                ours, expected = getattr(mine, field.attname), getattr(theirs, field.attname)
                assert ours == expected, field.name
                assert type(ours) is type(expected), field.name
        transaction.set_rollback(True)


def test_model_row_reads_an_all_null_slice_as_none_and_refuses_a_wrong_width() -> None:
    assert PAYOUT_ROW.instance([None] * len(PAYOUT_ROW), connection) is None
    with pytest.raises(ValueError, match="values for"):
        PAYOUT_ROW.instance([1], connection)


def test_hand_written_sql_names_tables_and_columns_as_the_model_declares_them() -> None:
    assert quoted_table(Payout, connection) == connection.ops.quote_name(Payout._meta.db_table)
    assert quoted_column(Payout, "wallet", connection) == '"wallet_id"'
    assert quoted_column(Payout, "created_at", connection) == '"created_at"'

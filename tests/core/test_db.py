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

from core.db import ModelRow, quoted_column, quoted_table, row_insert, rows_update
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


def _insert_fields(wallet: Wallet, tag: str, values: dict[str, Any]) -> dict[str, Any]:
    return {
        "wallet": wallet,
        "merchant_id": wallet.merchant_id,
        "mode": wallet.mode,
        "internal_reference": f"po_20250101_{tag}",
        "idempotency_key": f"insert-{tag}",
        "request_fingerprint": "0" * 64,
        "account_number": "0123456789",
        "account_name": "ADEYEMI TUNDE",
        "bank_code": "058",
        "bank_name": "Guaranty Trust Bank",
        "bank_id": 1,
        "provider_name": "sandbox",
        **values,
        "total_debit_amount": values["amount"] + values["fee_amount"],
    }


def _stored(payout_id: int) -> dict[str, Any]:
    row = Payout.objects.values().get(pk=payout_id)
    for name in ("id", "internal_reference", "idempotency_key", "created_at", "updated_at"):
        row.pop(name)
    return row


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(values=changes, narration=st.none() | text)
def test_row_insert_writes_what_save_writes(
    test_wallet: Wallet, values: dict[str, Any], narration: str | None
) -> None:
    values = {**values, "narration": narration}
    with transaction.atomic():
        with CaptureQueriesContext(connection) as theirs_sql:
            theirs = Payout.objects.create(**_insert_fields(test_wallet, "b", values))
        ours = Payout(**_insert_fields(test_wallet, "a", values))
        with CaptureQueriesContext(connection) as ours_sql:
            assert row_insert(ours) is ours

        assert isinstance(ours.pk, int) and ours.pk != theirs.pk
        assert not ours._state.adding and ours._state.db == theirs._state.db
        assert ours.created_at is not None and ours.updated_at >= ours.created_at
        assert _stored(ours.pk) == _stored(theirs.pk)
        stored = Payout.objects.get(pk=ours.pk)
        assert (stored.created_at, stored.updated_at) == (ours.created_at, ours.updated_at)
        # The same statement as the ORM's, column for column, up to the values.
        [ours_statement], [theirs_statement] = (
            ours_sql.captured_queries,
            theirs_sql.captured_queries,
        )
        assert (
            ours_statement["sql"].split(" VALUES ")[0]
            == theirs_statement["sql"].split(" VALUES ")[0]
        )
        assert ours_statement["sql"].endswith(' RETURNING "payouts_payout"."id"')
        assert theirs_statement["sql"].endswith(' RETURNING "payouts_payout"."id"')
        transaction.set_rollback(True)


def test_row_insert_sends_the_save_signals_and_raises_the_integrity_error(
    test_wallet: Wallet,
) -> None:
    from django.db import IntegrityError
    from django.db.models.signals import post_save, pre_save

    seen: list[tuple[str, bool | None, bool]] = []

    def before(sender: type[Payout], instance: Payout, **kwargs: Any) -> None:
        seen.append(("pre", None, instance._state.adding))

    def after(sender: type[Payout], instance: Payout, created: bool, **kwargs: Any) -> None:
        seen.append(("post", created, instance._state.adding))

    values = {"amount": Decimal("10.00"), "fee_amount": Decimal("1.00")}
    pre_save.connect(before, sender=Payout)
    post_save.connect(after, sender=Payout)
    try:
        row_insert(Payout(**_insert_fields(test_wallet, "signals", values)))
    finally:
        pre_save.disconnect(before, sender=Payout)
        post_save.disconnect(after, sender=Payout)
    assert seen == [("pre", None, True), ("post", True, False)]

    with pytest.raises(IntegrityError), transaction.atomic():
        row_insert(Payout(**_insert_fields(test_wallet, "signals", values)))


def test_row_insert_refuses_a_saved_row(test_wallet: Wallet) -> None:
    with pytest.raises(ValueError, match="a new row"):
        row_insert(PayoutFactory(wallet=test_wallet))

"""The collections settlement report (``collections_app.reports``) and its admin page: paid
transactions per Lagos day, merchant and mode; gross = what customers paid (amount + our fee,
which the customer bears), fees, split shares per subaccount, net = gross − fees − shares, exact
to the kobo."""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import factory
import pytest
from django.db import transaction
from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collections_app.fees import collection_fee_calculate
from collections_app.models import (
    Channel,
    CollectionFeeSchedule,
    CollectionTransaction,
    PaymentStatus,
    TransactionSplitEntry,
)
from collections_app.reports import (
    MAX_REPORT_DAYS,
    CollectionSettlementReport,
    ReportRangeError,
    SettlementRow,
    SubaccountShare,
    collection_settlement_report,
)
from collections_app.services import (
    CustomerInfo,
    SubaccountAmount,
    transaction_confirm,
    transaction_initialize,
)
from core.dates import local_date, local_day_bounds, local_day_start, local_today
from merchants.models import Merchant, Mode
from payment_items.models import PaymentItem, Subaccount
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records, assert_admin_forbidden, client_for
from tests.collections_app.conftest import CALLBACK_URL
from tests.collections_app.factories import (
    CollectionFeeScheduleFactory,
    CollectionTransactionFactory,
    CustomerFactory,
)
from tests.merchants.factories import MerchantFactory
from tests.payment_items.factories import (
    PaymentItemFactory,
    SubaccountFactory,
    TransactionSplitFactory,
    TransactionSplitShareFactory,
)

pytestmark = pytest.mark.django_db

REPORT_URL = "/admin/collections_app/collectiontransaction/settlement-report/"
EXPORT_URL = f"{REPORT_URL}csv/"
CHANGELIST_URL = "/admin/collections_app/collectiontransaction/"
VIEW_PERMISSION = "collections_app.view_collectiontransaction"
DAY_ONE = date(2026, 3, 9)
DAY_TWO = date(2026, 3, 10)
ZERO = Decimal("0.00")
# 1.5% + 100 (the 100 waived below 2,500), capped at 2,000: the default schedule.
DEFAULT_SCHEDULE = CollectionFeeScheduleFactory.build()


class TransactionSplitEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TransactionSplitEntry

    transaction = factory.SubFactory(CollectionTransactionFactory)
    subaccount = factory.SubFactory(
        SubaccountFactory,
        merchant=factory.SelfAttribute("..transaction.merchant"),
        mode=factory.SelfAttribute("..transaction.mode"),
    )
    share = Decimal("100.00")


def at_lagos(day: date, hours: int = 12, minutes: int = 0, seconds: int = 0) -> datetime:
    return local_day_start(day) + timedelta(hours=hours, minutes=minutes, seconds=seconds)


def collection_create(
    *,
    merchant: Merchant,
    amount: Decimal,
    paid_at: datetime | None,
    status: str = PaymentStatus.PAID,
    mode: str = Mode.LIVE,
    splits: tuple[tuple[Subaccount, Decimal], ...] = (),
    schedule: CollectionFeeSchedule = DEFAULT_SCHEDULE,
    **extra: Any,
) -> CollectionTransaction:
    """A transaction with the amounts the services give it: the fee from the schedule on top of
    the amount (the customer pays both), ``amount_paid`` equal to that once paid, split shares
    out of the amount."""
    fee = collection_fee_calculate(amount=amount, schedule=schedule)
    paid = status == PaymentStatus.PAID
    collection = CollectionTransactionFactory(
        merchant=merchant,
        mode=mode,
        amount=amount,
        transaction_fee=fee,
        amount_to_be_paid=amount + fee,
        amount_paid=amount + fee if paid else ZERO,
        payment_status=status,
        paid_at=paid_at if paid else None,
        status_changed_at=paid_at,
        **extra,
    )
    for subaccount, share in splits:
        TransactionSplitEntryFactory(transaction=collection, subaccount=subaccount, share=share)
    return collection


def share_of(subaccount: Subaccount, amount: str) -> SubaccountShare:
    return SubaccountShare(
        subaccount_id=subaccount.pk,
        account_code=subaccount.account_code,
        account_name=subaccount.account_name,
        amount=Decimal(amount),
    )


@dataclass
class Scene:
    ade: Merchant
    bisi: Merchant
    chika: Subaccount
    dayo: Subaccount
    emeka: Subaccount
    early_morning: CollectionTransaction
    test_mode: CollectionTransaction


@pytest.fixture
def scene() -> Scene:
    """Two merchants, two Lagos days, splits to two of Ade's subaccounts and one of Bisi's,
    and transactions the report must leave out."""
    ade = MerchantFactory(name="Ade Stores")
    bisi = MerchantFactory(name="Bisi Foods")
    chika = SubaccountFactory(merchant=ade, mode=Mode.LIVE, account_name="Chika Partners")
    dayo = SubaccountFactory(merchant=ade, mode=Mode.LIVE, account_name="Dayo Logistics")
    emeka = SubaccountFactory(merchant=bisi, mode=Mode.LIVE, account_name="Emeka Holdings")
    # Ade, live, day one: 7,000 (fee 205) split 1,000 + 500, and 1,000 (fee 15) split 250.
    collection_create(
        merchant=ade,
        amount=Decimal("7000.00"),
        paid_at=at_lagos(DAY_ONE, 9),
        splits=((chika, Decimal("1000.00")), (dayo, Decimal("500.00"))),
    )
    collection_create(
        merchant=ade,
        amount=Decimal("1000.00"),
        paid_at=at_lagos(DAY_ONE, 23, 59, 59),
        splits=((chika, Decimal("250.00")),),
    )
    # Bisi, live, day one: 200,000 (fee capped at 2,000) split 50,000.
    collection_create(
        merchant=bisi,
        amount=Decimal("200000.00"),
        paid_at=at_lagos(DAY_ONE, 14),
        splits=((emeka, Decimal("50000.00")),),
    )
    # Ade, live, day two at 00:30 Lagos (23:30 UTC on day one): 2,500 (fee 137.50).
    early_morning = collection_create(
        merchant=ade, amount=Decimal("2500.00"), paid_at=at_lagos(DAY_TWO, 0, 30)
    )
    # Left out: failed, pending, expired (with splits), and paid outside the two days.
    for status in (PaymentStatus.FAILED, PaymentStatus.PENDING, PaymentStatus.EXPIRED):
        collection_create(
            merchant=ade,
            amount=Decimal("9000.00"),
            paid_at=at_lagos(DAY_ONE, 10),
            status=status,
            splits=((chika, Decimal("4000.00")),),
        )
    collection_create(
        merchant=ade, amount=Decimal("3000.00"), paid_at=at_lagos(DAY_ONE - timedelta(days=1), 23)
    )
    collection_create(
        merchant=ade, amount=Decimal("3000.00"), paid_at=at_lagos(DAY_TWO + timedelta(days=1))
    )
    # Ade, test mode, day one: 7,000 (fee 205), its own row.
    test_mode = collection_create(
        merchant=ade, mode=Mode.TEST, amount=Decimal("7000.00"), paid_at=at_lagos(DAY_ONE, 11)
    )
    return Scene(ade, bisi, chika, dayo, emeka, early_morning, test_mode)


def live_rows(scene: Scene) -> tuple[SettlementRow, ...]:
    return (
        SettlementRow(
            day=DAY_ONE,
            merchant_id=scene.ade.pk,
            merchant_name="Ade Stores",
            mode=Mode.LIVE,
            transaction_count=2,
            gross=Decimal("8220.00"),
            fees=Decimal("220.00"),
            shares=(share_of(scene.chika, "1250.00"), share_of(scene.dayo, "500.00")),
            split_total=Decimal("1750.00"),
            net=Decimal("6250.00"),
        ),
        SettlementRow(
            day=DAY_ONE,
            merchant_id=scene.bisi.pk,
            merchant_name="Bisi Foods",
            mode=Mode.LIVE,
            transaction_count=1,
            gross=Decimal("202000.00"),
            fees=Decimal("2000.00"),
            shares=(share_of(scene.emeka, "50000.00"),),
            split_total=Decimal("50000.00"),
            net=Decimal("150000.00"),
        ),
        SettlementRow(
            day=DAY_TWO,
            merchant_id=scene.ade.pk,
            merchant_name="Ade Stores",
            mode=Mode.LIVE,
            transaction_count=1,
            gross=Decimal("2637.50"),
            fees=Decimal("137.50"),
            shares=(),
            split_total=ZERO,
            net=Decimal("2500.00"),
        ),
    )


# --- the selector ------------------------------------------------------------------------------


def test_rows_per_lagos_day_merchant_and_mode_with_shares_per_subaccount(scene: Scene) -> None:
    report = collection_settlement_report(first_day=DAY_ONE, last_day=DAY_TWO, mode=Mode.LIVE)
    assert report.rows == live_rows(scene)


def test_totals_add_up_the_rows_and_each_subaccount(scene: Scene) -> None:
    totals = collection_settlement_report(
        first_day=DAY_ONE, last_day=DAY_TWO, mode=Mode.LIVE
    ).totals
    assert (totals.transaction_count, totals.gross, totals.fees) == (
        4,
        Decimal("212857.50"),
        Decimal("2357.50"),
    )
    assert (totals.split_total, totals.net) == (Decimal("51750.00"), Decimal("158750.00"))
    assert totals.net + totals.fees + totals.split_total == totals.gross
    assert totals.shares == (
        share_of(scene.chika, "1250.00"),
        share_of(scene.dayo, "500.00"),
        share_of(scene.emeka, "50000.00"),
    )


def test_failed_pending_and_expired_transactions_are_left_out(scene: Scene) -> None:
    report = collection_settlement_report(first_day=DAY_ONE, last_day=DAY_ONE, mode=Mode.LIVE)
    ade = next(row for row in report.rows if row.merchant_id == scene.ade.pk)
    assert ade.transaction_count == 2
    assert ade.shares[0] == share_of(scene.chika, "1250.00")  # not the failed one's 4,000


def test_a_payment_at_00_30_lagos_counts_on_that_lagos_day(scene: Scene) -> None:
    assert scene.early_morning.paid_at.astimezone(UTC).date() == DAY_ONE
    day_two = collection_settlement_report(first_day=DAY_TWO, last_day=DAY_TWO, mode=Mode.LIVE)
    assert [(row.day, row.transaction_count, row.gross) for row in day_two.rows] == [
        (DAY_TWO, 1, Decimal("2637.50"))
    ]
    day_one = collection_settlement_report(first_day=DAY_ONE, last_day=DAY_ONE, mode=Mode.LIVE)
    assert Decimal("2637.50") not in {row.gross for row in day_one.rows}
    assert day_one.totals.transaction_count == 3


def test_test_mode_is_reported_apart_from_live(scene: Scene) -> None:
    test_only = collection_settlement_report(first_day=DAY_ONE, last_day=DAY_TWO, mode=Mode.TEST)
    assert [(row.merchant_id, row.mode, row.gross) for row in test_only.rows] == [
        (scene.ade.pk, Mode.TEST, Decimal("7205.00"))
    ]
    both = collection_settlement_report(first_day=DAY_ONE, last_day=DAY_TWO)
    assert [(row.day, row.merchant_name, row.mode) for row in both.rows] == [
        (DAY_ONE, "Ade Stores", Mode.LIVE),
        (DAY_ONE, "Ade Stores", Mode.TEST),
        (DAY_ONE, "Bisi Foods", Mode.LIVE),
        (DAY_TWO, "Ade Stores", Mode.LIVE),
    ]


def test_one_merchant(scene: Scene) -> None:
    report = collection_settlement_report(
        first_day=DAY_ONE, last_day=DAY_TWO, merchant_id=scene.bisi.pk, mode=Mode.LIVE
    )
    assert report.rows == live_rows(scene)[1:2]
    assert report.totals.shares == (share_of(scene.emeka, "50000.00"),)


def test_an_empty_range_has_zero_totals() -> None:
    report = collection_settlement_report(first_day=DAY_ONE, last_day=DAY_TWO, mode=Mode.LIVE)
    assert report.rows == ()
    assert (report.totals.transaction_count, report.totals.gross, report.totals.net) == (
        0,
        ZERO,
        ZERO,
    )


@pytest.mark.parametrize(
    ("first_day", "last_day", "mode", "field"),
    [
        (DAY_TWO, DAY_ONE, None, "last_day"),
        (DAY_ONE, DAY_ONE + timedelta(days=MAX_REPORT_DAYS), None, "last_day"),
        (DAY_ONE, DAY_TWO, "sandbox", "mode"),
        (date(1999, 12, 31), DAY_ONE, None, "first_day"),
        (date(9999, 12, 30), date(9999, 12, 31), None, "last_day"),
    ],
)
def test_the_range_and_mode_are_checked(
    first_day: date, last_day: date, mode: str | None, field: str
) -> None:
    with pytest.raises(ReportRangeError) as caught:
        collection_settlement_report(first_day=first_day, last_day=last_day, mode=mode)
    assert (caught.value.status, caught.value.field) == (400, field)
    assert caught.value.message.startswith(f"{field}: ")


def test_the_longest_range_is_accepted() -> None:
    last_day = DAY_ONE + timedelta(days=MAX_REPORT_DAYS - 1)
    report = collection_settlement_report(first_day=DAY_ONE, last_day=last_day)
    assert report.rows == ()


def test_the_report_takes_two_queries_whatever_its_size(
    scene: Scene, django_assert_num_queries
) -> None:
    with django_assert_num_queries(2):
        report = collection_settlement_report(first_day=DAY_ONE, last_day=DAY_TWO)
    assert len(report.rows) == 4


def test_the_amounts_are_what_the_services_record(fee_schedule) -> None:  # type: ignore[no-untyped-def]
    """Through the services: the customer pays amount + fee; the shares come out of the
    amount; the merchant nets amount − shares."""
    merchant = MerchantFactory(name="Ade Stores")
    split = TransactionSplitFactory(merchant=merchant, mode=Mode.TEST)
    third = TransactionSplitShareFactory(split=split, share=Decimal("33.33"))
    item = PaymentItemFactory(
        merchant=merchant, mode=Mode.TEST, amount=Decimal("7000.00"), transaction_split=split
    )
    override = SubaccountFactory(merchant=merchant, mode=Mode.TEST)
    payer = CustomerInfo(
        email="ada@example.com", phone_number="08031234567", first_name="Ada", last_name="Obi"
    )
    for reference, subaccounts in (
        ("order-1", None),  # the item's 33.33% split: 2,333.10 (rounded down)
        ("order-2", [SubaccountAmount(account_code=override.account_code, amount=7000)]),
    ):
        created = transaction_initialize(
            merchant=merchant,
            mode=Mode.TEST,
            payment_item_id=item.pk,
            transaction_reference=reference,
            channel=Channel.CARD,
            amount=Decimal("7000.00"),
            customer_info=payer,
            callback_url=CALLBACK_URL,
            subaccounts=subaccounts,
        ).transaction
        transaction_confirm(collection=created, outcome=PaymentStatus.PAID)
    fee = collection_fee_calculate(amount=Decimal("7000.00"), schedule=fee_schedule)
    day = local_date(CollectionTransaction.objects.order_by("id").first().paid_at)
    (row,) = collection_settlement_report(first_day=day, last_day=day, mode=Mode.TEST).rows
    assert row.gross == 2 * (Decimal("7000.00") + fee)
    assert row.gross == CollectionTransaction.objects.aggregate(paid=Sum("amount_paid"))["paid"]
    assert row.fees == 2 * fee
    assert {share.subaccount_id: share.amount for share in row.shares} == {
        third.subaccount_id: Decimal("2333.10"),
        override.pk: Decimal("7000.00"),
    }
    assert row.net == Decimal("7000.00") - Decimal("2333.10")


# --- generated cases ---------------------------------------------------------------------------

REPORT_FIRST = date(2026, 3, 9)
REPORT_LAST = date(2026, 3, 12)
MERCHANT_COUNT = 2
SUBACCOUNT_COUNT = 3


@dataclass(frozen=True)
class Drawn:
    merchant: int
    mode: str
    status: str
    day_offset: int  # from REPORT_FIRST; -1 and 4 fall outside the report
    second_of_day: int
    amount_kobo: int
    shares: tuple[tuple[int, int], ...]  # (subaccount index, kobo)


@st.composite
def drawn_collections(draw: st.DrawFn) -> Drawn:
    amount_kobo = draw(
        st.one_of(st.integers(1, 300_000), st.integers(1, 100_000_000_000))  # up to 1bn naira
    )
    remaining = amount_kobo
    shares = []
    for index in draw(st.lists(st.integers(0, SUBACCOUNT_COUNT - 1), unique=True, max_size=3)):
        if remaining == 0:
            break
        kobo = draw(st.integers(1, remaining))
        remaining -= kobo
        shares.append((index, kobo))
    return Drawn(
        merchant=draw(st.integers(0, MERCHANT_COUNT - 1)),
        mode=draw(st.sampled_from(Mode.values)),
        status=draw(st.sampled_from([PaymentStatus.PAID] * 3 + PaymentStatus.values)),
        day_offset=draw(st.integers(-1, (REPORT_LAST - REPORT_FIRST).days + 1)),
        second_of_day=draw(st.sampled_from([0, 1, 1800, 86_399]) | st.integers(0, 86_399)),
        amount_kobo=amount_kobo,
        shares=tuple(shares),
    )


fee_schedules = st.builds(
    CollectionFeeScheduleFactory.build,
    percentage_rate=st.integers(0, 1000).map(lambda bp: Decimal(bp).scaleb(-2)),
    flat_fee=st.integers(0, 50_000).map(lambda kobo: Decimal(kobo).scaleb(-2)),
    flat_fee_waiver_below=st.integers(0, 500_000).map(lambda kobo: Decimal(kobo).scaleb(-2)),
    fee_cap=st.none() | st.integers(0, 500_000).map(lambda kobo: Decimal(kobo).scaleb(-2)),
)


def _check_generated(drawn: list[Drawn], schedule: CollectionFeeSchedule) -> None:
    merchants = [MerchantFactory(name=f"Merchant {index}") for index in range(MERCHANT_COUNT)]
    position = {merchant.pk: index for index, merchant in enumerate(merchants)}
    scope: dict[tuple[int, str], tuple[PaymentItem, Any, list[Subaccount]]] = {}
    for index, merchant in enumerate(merchants):
        for mode in Mode.values:
            scope[(index, mode)] = (
                PaymentItemFactory(merchant=merchant, mode=mode),
                CustomerFactory(merchant=merchant, mode=mode),
                [SubaccountFactory(merchant=merchant, mode=mode) for _ in range(SUBACCOUNT_COUNT)],
            )
    expected: dict[tuple[date, int, str], dict[str, Any]] = defaultdict(
        lambda: {"count": 0, "gross": ZERO, "fees": ZERO, "shares": Counter()}
    )
    for each in drawn:
        item, customer, subaccounts = scope[(each.merchant, each.mode)]
        paid_at = local_day_start(REPORT_FIRST + timedelta(days=each.day_offset)) + timedelta(
            seconds=each.second_of_day
        )
        collection = collection_create(
            merchant=merchants[each.merchant],
            mode=each.mode,
            amount=Decimal(each.amount_kobo).scaleb(-2),
            paid_at=paid_at,
            status=each.status,
            splits=tuple(
                (subaccounts[index], Decimal(kobo).scaleb(-2)) for index, kobo in each.shares
            ),
            schedule=schedule,
            payment_item=item,
            customer=customer,
        )
        day = local_date(paid_at)
        if each.status == PaymentStatus.PAID and REPORT_FIRST <= day <= REPORT_LAST:
            row = expected[(day, collection.merchant_id, each.mode)]
            row["count"] += 1
            row["gross"] += collection.amount_paid
            row["fees"] += collection.transaction_fee
            for index, kobo in each.shares:
                row["shares"][subaccounts[index].pk] += Decimal(kobo).scaleb(-2)

    report = collection_settlement_report(first_day=REPORT_FIRST, last_day=REPORT_LAST)

    for row in report.rows:
        assert row.net + row.fees + sum((s.amount for s in row.shares), ZERO) == row.gross
        assert row.split_total == sum((s.amount for s in row.shares), ZERO)
    totals = report.totals
    assert totals.net + totals.fees + totals.split_total == totals.gross
    assert totals.transaction_count == sum(row.transaction_count for row in report.rows)
    for name in ("gross", "fees", "split_total", "net"):
        assert getattr(totals, name) == sum((getattr(row, name) for row in report.rows), ZERO)
    assert sum((s.amount for s in totals.shares), ZERO) == totals.split_total
    start, end = local_day_bounds(REPORT_FIRST, REPORT_LAST)
    paid_in_range = CollectionTransaction.objects.filter(
        payment_status=PaymentStatus.PAID, paid_at__gte=start, paid_at__lt=end
    ).aggregate(total=Sum("amount_paid"))["total"]
    assert totals.gross == (paid_in_range or ZERO)
    assert {
        (row.day, row.merchant_id, row.mode): (
            row.transaction_count,
            row.gross,
            row.fees,
            {s.subaccount_id: s.amount for s in row.shares},
        )
        for row in report.rows
    } == {
        key: (value["count"], value["gross"], value["fees"], dict(value["shares"]))
        for key, value in expected.items()
    }
    assert [(row.day, row.merchant_id, row.mode) for row in report.rows] == sorted(
        expected, key=lambda key: (key[0], position[key[1]], key[2])
    )
    live = collection_settlement_report(
        first_day=REPORT_FIRST, last_day=REPORT_LAST, mode=Mode.LIVE
    )
    assert live.rows == tuple(row for row in report.rows if row.mode == Mode.LIVE)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(drawn=st.lists(drawn_collections(), max_size=12), schedule=fee_schedules)
def test_generated_collections_add_up_to_the_kobo(
    drawn: list[Drawn], schedule: CollectionFeeSchedule
) -> None:
    """For every row net + fees + Σ shares == gross; the totals are the sums of the rows;
    Σ gross is the sum of ``amount_paid`` of the paid transactions in range; every row is
    what the transactions drawn say it should be."""
    with transaction.atomic():
        _check_generated(drawn, schedule)
        transaction.set_rollback(True)


# --- the admin page ----------------------------------------------------------------------------


def report_query(**overrides: str) -> dict[str, str]:
    return {
        "first_day": DAY_ONE.isoformat(),
        "last_day": DAY_TWO.isoformat(),
        "merchant": "",
        "mode": Mode.LIVE,
        **overrides,
    }


def test_the_page_shows_the_report_to_a_user_with_the_view_permission(scene: Scene) -> None:
    client = client_for(StaffUserFactory(permissions=[VIEW_PERMISSION]))
    response = client.get(REPORT_URL, report_query())
    assert response.status_code == 200
    assert response.context["report"].rows == live_rows(scene)
    page = response.content.decode()
    assert "Africa/Lagos (UTC+01:00)" in page
    assert "Ade Stores" in page and "Bisi Foods" in page
    assert '<span class="money">₦8,220.00</span>' in page
    assert '<span class="money">₦212,857.50</span>' in page  # the total gross
    assert scene.chika.account_code in page and "Chika Partners" in page
    assert f"{EXPORT_URL}?" in page
    assert not act_records().exists()  # looking is not exporting


def test_the_page_defaults_to_yesterday_in_live_mode(scene: Scene) -> None:
    client = client_for(StaffUserFactory(permissions=[VIEW_PERMISSION]))
    report: CollectionSettlementReport = client.get(REPORT_URL).context["report"]
    yesterday = local_today() - timedelta(days=1)
    assert (report.first_day, report.last_day, report.merchant_id, report.mode) == (
        yesterday,
        yesterday,
        None,
        Mode.LIVE,
    )


def test_the_page_shows_a_range_error_on_the_form() -> None:
    client = client_for(StaffUserFactory(permissions=[VIEW_PERMISSION]))
    response = client.get(REPORT_URL, report_query(last_day="2026-01-01"))
    assert response.status_code == 200
    assert response.context["report"] is None
    assert response.context["form"].errors == {"last_day": ["must be on or after first_day"]}


def test_the_page_has_a_bounded_number_of_queries(
    scene: Scene, django_assert_max_num_queries
) -> None:
    client = client_for(StaffUserFactory(permissions=[VIEW_PERMISSION]))
    client.get(REPORT_URL, report_query())
    for day in (DAY_ONE, DAY_TWO):
        for _ in range(5):
            collection_create(
                merchant=MerchantFactory(),
                amount=Decimal("5000.00"),
                paid_at=at_lagos(day),
                splits=((scene.chika, Decimal("10.00")),),
            )
    with django_assert_max_num_queries(8):
        response = client.get(REPORT_URL, report_query())
    assert len(response.context["report"].rows) == 13


def test_staff_without_the_view_permission_get_the_admin_403_page(scene: Scene) -> None:
    client = client_for(StaffUserFactory(permissions=["payouts.view_payout"]))
    assert_admin_forbidden(client.get(REPORT_URL, report_query()))
    assert_admin_forbidden(client.get(EXPORT_URL, report_query()))
    assert not act_records().exists()


def test_the_changelist_links_to_the_report() -> None:
    client = client_for(StaffUserFactory(permissions=[VIEW_PERMISSION]))
    page = client.get(CHANGELIST_URL).content.decode()
    assert 'data-testid="settlement-report-link"' in page
    assert f'href="{REPORT_URL}"' in page


def test_the_csv_download_has_one_line_per_row_and_is_audited(scene: Scene) -> None:
    user = StaffUserFactory(permissions=[VIEW_PERMISSION])
    response = client_for(user).get(EXPORT_URL, report_query())
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "collection-settlement-2026-03-09-2026-03-10-" in response["Content-Disposition"]
    text = response.content.decode("utf-8")
    assert text.startswith("\ufeff")
    lines = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    assert lines[0] == [
        "day",
        "merchant_id",
        "merchant_name",
        "mode",
        "currency",
        "transaction_count",
        "gross_collected",
        "fees",
        "split_shares",
        "net_to_merchant",
        "splits",
    ]
    chika, dayo, emeka = scene.chika.account_code, scene.dayo.account_code, scene.emeka.account_code
    assert lines[1:] == [
        [
            "2026-03-09",
            str(scene.ade.pk),
            "Ade Stores",
            "live",
            "NGN",
            "2",
            "8220.00",
            "220.00",
            "1750.00",
            "6250.00",
            f"{chika} (Chika Partners): 1250.00; {dayo} (Dayo Logistics): 500.00",
        ],
        [
            "2026-03-09",
            str(scene.bisi.pk),
            "Bisi Foods",
            "live",
            "NGN",
            "1",
            "202000.00",
            "2000.00",
            "50000.00",
            "150000.00",
            f"{emeka} (Emeka Holdings): 50000.00",
        ],
        [
            "2026-03-10",
            str(scene.ade.pk),
            "Ade Stores",
            "live",
            "NGN",
            "1",
            "2637.50",
            "137.50",
            "0.00",
            "2500.00",
            "",
        ],
    ]
    record = act_records().get()
    assert record.action == "collections_app.collectiontransaction.settlement_report_export"
    assert (record.actor, record.object_type) == (user, "collections_app.collectiontransaction")
    assert record.after == {
        "first_day": "2026-03-09",
        "last_day": "2026-03-10",
        "merchant": "",
        "mode": "live",
        "rows": 3,
        "transaction_count": 4,
        "gross": "212857.50",
    }


def test_the_csv_of_one_merchant_keeps_a_formula_like_name_as_text() -> None:
    merchant = MerchantFactory(name="=HYPERLINK(1)")
    collection_create(merchant=merchant, amount=Decimal("1000.00"), paid_at=at_lagos(DAY_ONE))
    client = client_for(StaffUserFactory(permissions=[VIEW_PERMISSION]))
    text = client.get(EXPORT_URL, report_query(merchant=str(merchant.pk))).content.decode()
    (line,) = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))[1:]
    assert line[2] == "'=HYPERLINK(1)"
    assert line[6:10] == ["1015.00", "15.00", "0.00", "1000.00"]


def test_a_csv_with_a_bad_range_goes_back_to_the_page_unaudited() -> None:
    client = client_for(StaffUserFactory(permissions=[VIEW_PERMISSION]))
    query = report_query(last_day=(DAY_ONE + timedelta(days=MAX_REPORT_DAYS)).isoformat())
    response = client.get(EXPORT_URL, query)
    assert response.status_code == 302
    assert response["Location"].startswith(f"{REPORT_URL}?")
    assert not act_records().exists()

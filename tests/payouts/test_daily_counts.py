"""The payout list's per-day counts (``PayoutDailyCount``): kept by triggers whoever writes, and
``payout_list_total`` equal to counting ``payout_list`` for every filter.

The state machine writes payouts through the services and behind their back (factories,
``bulk_create``, ``QuerySet.update``, ``bulk_update``, raw SQL, deletes), at instants chosen on
and a microsecond either side of Lagos and UTC midnights, and folds the pending changes at
random moments; after every step the stored counts equal a recount and the list total equals
``COUNT(*)`` for generated filters. The triggers are statement-level and append changes, which
the fold moves into the counts.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from io import StringIO
from itertools import count

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from audit.models import AuditRecord
from merchants.models import Mode
from merchants.services import merchant_create
from payouts.models import Payout, PayoutCountChange, PayoutDailyCount, PayoutStatus
from payouts.selectors import (
    PayoutListFilters,
    count_day,
    count_day_start,
    payout_counts_mismatches,
    payout_list,
    payout_list_total,
)
from payouts.services import (
    payout_counts_fold,
    payout_counts_rebuild,
    payout_create,
    payouts_dispatch_round,
)
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import GOOD_ACCOUNT, GTB_CODE, fund_wallet
from wallets.models import Wallet
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db


TRIGGERS = {
    "payouts_payout_count_insert",
    "payouts_payout_count_update",
    "payouts_payout_count_delete",
    "payouts_payout_count_truncate",
}
STATUSES = st.sampled_from(PayoutStatus.values)
BEHIND_STATUSES = st.sampled_from([s for s in PayoutStatus.values if s != PayoutStatus.RESERVED])
_keys = count(1)

# Instants that matter to a day count: Lagos midnight (23:00 UTC), UTC midnight, noon, each
# exactly and a microsecond either side, over a few days.
BASE_DAY = date(2026, 3, 1)
EDGE_HOURS = (-1, 0, 11, 12, 23)  # hours after UTC midnight of a day (−1: Lagos midnight)
NUDGES = (timedelta(0), timedelta(microseconds=1), -timedelta(microseconds=1))
instants = st.builds(
    lambda day, hour, nudge, minutes: (
        datetime(BASE_DAY.year, BASE_DAY.month, BASE_DAY.day, tzinfo=UTC)
        + timedelta(days=day, hours=hour, minutes=minutes)
        + nudge
    ),
    st.integers(0, 4),
    st.sampled_from(EDGE_HOURS),
    st.sampled_from(NUDGES),
    st.sampled_from((0, 0, 0, 17)),
)


def _wallet_total(wallet: Wallet, filters: PayoutListFilters) -> int:
    return payout_list_total(wallet_id=wallet.pk, filters=filters)


def _list_count(wallet: Wallet, filters: PayoutListFilters) -> int:
    return payout_list(merchant=wallet.merchant, mode=wallet.mode, filters=filters).count()


def _new_wallet() -> Wallet:
    created = merchant_create(name=f"Counts {next(_keys)}", email="counts@example.com")
    return wallet_get(merchant=created.merchant, mode=Mode.TEST)


def _set_created_at(payout_ids: list[int], instant: datetime) -> None:
    Payout.objects.filter(pk__in=payout_ids).update(created_at=instant)


class PayoutCountsMachine(RuleBasedStateMachine):
    """Two wallets written behind the services' back (never ``reserved``, so the dispatcher
    leaves them alone) and one funded wallet written through them; each run rolled back."""

    @initialize()
    def wallets(self) -> None:
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self.wallets = [_new_wallet(), _new_wallet()]
        self.funded = fund_wallet(_new_wallet(), "50000.00")

    def teardown(self) -> None:
        if hasattr(self, "_atomic"):
            transaction.set_rollback(True)
            self._atomic.__exit__(None, None, None)

    def _payout_ids(self) -> list[int]:
        payouts = Payout.objects.filter(wallet__in=self.wallets).order_by("pk")
        return list(payouts.values_list("pk", flat=True))

    def _pick(self, data: st.DataObject) -> int | None:
        ids = self._payout_ids()
        return data.draw(st.sampled_from(ids)) if ids else None

    @rule(which=st.integers(0, 1), status=BEHIND_STATUSES, at=instants)
    def factory_payout(self, which: int, status: str, at: datetime) -> None:
        payout = PayoutFactory(wallet=self.wallets[which], status=status)
        _set_created_at([payout.pk], at)

    @rule(which=st.integers(0, 1), statuses=st.lists(BEHIND_STATUSES, min_size=1, max_size=4))
    def bulk_created(self, which: int, statuses: list[str]) -> None:
        template = PayoutFactory.build(wallet=self.wallets[which])
        fields = [field.attname for field in Payout._meta.concrete_fields if not field.primary_key]
        rows = []
        for status in statuses:
            key = next(_keys)
            row = Payout(**{attname: getattr(template, attname) for attname in fields})
            row.status = status
            row.internal_reference = f"po_counts_bulk_{key}"
            row.idempotency_key = f"counts-bulk-{key}"
            rows.append(row)
        Payout.objects.bulk_create(rows)

    @rule(moved_to=st.none() | instants)
    def created_through_the_service(self, moved_to: datetime | None) -> None:
        result = payout_create(
            merchant=self.funded.merchant,
            mode=self.funded.mode,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal("100.00"),
            idempotency_key=f"counts-service-{next(_keys)}",
        )
        if moved_to is not None:
            _set_created_at([result.payout.pk], moved_to)

    @rule()
    def dispatched_in_a_batch(self) -> None:
        payouts_dispatch_round(limit=5)

    @rule(data=st.data(), status=BEHIND_STATUSES)
    def status_saved(self, data: st.DataObject, status: str) -> None:
        payout_id = self._pick(data)
        if payout_id is None:
            return
        payout = Payout.objects.get(pk=payout_id)
        payout.status = status
        payout.save()

    @rule(data=st.data(), size=st.integers(1, 4))
    def statuses_bulk_updated(self, data: st.DataObject, size: int) -> None:
        ids = self._payout_ids()
        if not ids:
            return
        chosen = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=size, unique=True))
        payouts = list(Payout.objects.filter(pk__in=chosen).order_by("pk"))
        for payout in payouts:
            payout.status = data.draw(BEHIND_STATUSES)
        Payout.objects.bulk_update(payouts, ["status"])

    @rule(data=st.data(), status=BEHIND_STATUSES, at=instants)
    def status_and_day_by_raw_sql(self, data: st.DataObject, status: str, at: datetime) -> None:
        payout_id = self._pick(data)
        if payout_id is None:
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE payouts_payout SET status = %s, created_at = %s WHERE id = %s",
                [status, at, payout_id],
            )

    @rule(data=st.data(), at=instants)
    def copied_by_raw_sql(self, data: st.DataObject, at: datetime) -> None:
        payout_id = self._pick(data)
        if payout_id is None:
            return
        key = next(_keys)
        columns = [
            field.column
            for field in Payout._meta.concrete_fields
            if field.name not in ("id", "internal_reference", "idempotency_key", "created_at")
        ]
        listed = ", ".join(columns)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO payouts_payout (internal_reference, idempotency_key, created_at, "  # noqa: S608
                f"{listed}) SELECT %s, %s, %s, {listed} FROM payouts_payout WHERE id = %s",
                [f"po_counts_raw_{key}", f"counts-raw-{key}", at, payout_id],
            )

    @rule(data=st.data())
    def moved_to_the_other_wallet(self, data: st.DataObject) -> None:
        payout_id = self._pick(data)
        if payout_id is None:
            return
        payout = Payout.objects.get(pk=payout_id)
        other = self.wallets[1] if payout.wallet_id == self.wallets[0].pk else self.wallets[0]
        Payout.objects.filter(pk=payout_id).update(
            wallet=other, idempotency_key=f"counts-moved-{next(_keys)}"
        )

    @rule()
    def folded(self) -> None:
        payout_counts_fold(round_size=3)

    @rule(data=st.data())
    def deleted(self, data: st.DataObject) -> None:
        payout_id = self._pick(data)
        if payout_id is None:
            return
        Payout.objects.filter(pk=payout_id).delete()

    @invariant()
    def counts_equal_a_recount(self) -> None:
        assert payout_counts_mismatches() == []

    def _window_edge(self, data: st.DataObject, wallet: Wallet) -> datetime | None:
        """No edge, an edge from ``instants``, or a payout's own instant or a microsecond
        either side of it (where an off-by-one in the edge arithmetic shows)."""
        kind = data.draw(st.sampled_from(("none", "instant", "payout")))
        created = list(Payout.objects.filter(wallet=wallet).values_list("created_at", flat=True))
        if kind == "none" or (kind == "payout" and not created):
            return None
        if kind == "instant":
            return data.draw(instants)
        return data.draw(st.sampled_from(created)) + data.draw(st.sampled_from(NUDGES))

    @rule(data=st.data(), which=st.integers(0, 2), status=st.none() | STATUSES)
    def list_total_is_exact(self, data: st.DataObject, which: int, status: str | None) -> None:
        wallet = [*self.wallets, self.funded][which]
        for _ in range(4):
            filters = PayoutListFilters(
                status=status,
                created_from=self._window_edge(data, wallet),
                created_to=self._window_edge(data, wallet),
            )
            assert _wallet_total(wallet, filters) == _list_count(wallet, filters), filters


@pytest.mark.slow
def test_counts_and_list_totals_stay_exact_whoever_writes() -> None:
    run_state_machine_as_test(
        PayoutCountsMachine,
        settings=settings(
            max_examples=25,
            stateful_step_count=25,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )


# --- the day -------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    at=st.datetimes(
        min_value=datetime(2000, 1, 1),  # noqa: DTZ001 (hypothesis takes naive bounds)
        max_value=datetime(2100, 1, 1),  # noqa: DTZ001
        timezones=st.just(UTC),
    )
)
def test_count_day_is_the_calendar_day_at_utc_plus_one(at: datetime) -> None:
    day = count_day(at)

    assert count_day_start(day) <= at < count_day_start(day + timedelta(days=1))
    assert count_day_start(day) == datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(
        hours=1
    )


def test_the_triggers_count_a_payout_on_its_lagos_day(test_wallet: Wallet) -> None:
    before_midnight = datetime(2026, 3, 1, 22, 59, 59, 999999, tzinfo=UTC)  # 23:59:59.999999 WAT
    at_midnight = datetime(2026, 3, 1, 23, 0, tzinfo=UTC)  # 00:00 WAT on 2 March
    first, second = PayoutFactory(wallet=test_wallet), PayoutFactory(wallet=test_wallet)
    _set_created_at([first.pk], before_midnight)
    _set_created_at([second.pk], at_midnight)
    payout_counts_fold()

    days = dict(
        PayoutDailyCount.objects.filter(wallet=test_wallet, count__gt=0).values_list("day", "count")
    )

    assert days == {date(2026, 3, 1): 1, date(2026, 3, 2): 1}


def test_every_count_trigger_is_installed() -> None:
    """A migration that recreates ``payouts_payout`` must create its triggers again."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgname FROM pg_trigger"
            " WHERE tgrelid = 'payouts_payout'::regclass AND tgenabled <> 'D'"
        )
        installed = {row[0] for row in cursor.fetchall()}

    assert installed >= TRIGGERS


def test_a_failed_write_leaves_the_counts_as_they_were(test_wallet: Wallet) -> None:
    payout = PayoutFactory(wallet=test_wallet, status=PayoutStatus.RESERVED)
    before = list(PayoutDailyCount.objects.values_list("status", "count").order_by("status"))

    with pytest.raises(RuntimeError), transaction.atomic():
        Payout.objects.filter(pk=payout.pk).update(status=PayoutStatus.FAILED)
        raise RuntimeError("rolled back")

    assert list(PayoutDailyCount.objects.values_list("status", "count").order_by("status")) == (
        before
    )
    assert payout_counts_mismatches() == []


# --- the list total ------------------------------------------------------------------------


def _payouts_at(wallet: Wallet, *instants_and_statuses: tuple[datetime, str]) -> None:
    for at, status in instants_and_statuses:
        payout = PayoutFactory(wallet=wallet, status=status)
        _set_created_at([payout.pk], at)


def test_whole_lagos_days_are_summed_without_counting_payouts(test_wallet: Wallet) -> None:
    day = date(2026, 3, 2)
    _payouts_at(
        test_wallet,
        (count_day_start(day) - timedelta(microseconds=1), PayoutStatus.FAILED),
        (count_day_start(day), PayoutStatus.FAILED),
        (count_day_start(day) + timedelta(hours=23, minutes=59), PayoutStatus.SUCCESSFUL),
        (count_day_start(day + timedelta(days=1)), PayoutStatus.FAILED),
    )
    filters = PayoutListFilters(
        created_from=count_day_start(day),
        created_to=count_day_start(day + timedelta(days=1)) - timedelta(microseconds=1),
    )

    with CaptureQueriesContext(connection) as queries:
        total = _wallet_total(test_wallet, filters)

    assert total == 2
    assert len(queries) == 1
    assert re.search(r'\b"?payouts_payout"?\b', queries[0]["sql"]) is None  # no payout counted


def test_a_window_edge_inside_a_day_counts_only_that_part(test_wallet: Wallet) -> None:
    day = date(2026, 3, 2)
    start = count_day_start(day)
    _payouts_at(
        test_wallet,
        *((start + timedelta(hours=hour), PayoutStatus.SUCCESSFUL) for hour in range(0, 24, 3)),
    )
    filters = PayoutListFilters(
        created_from=start + timedelta(hours=2), created_to=start + timedelta(hours=20)
    )

    assert _wallet_total(test_wallet, filters) == 6 == _list_count(test_wallet, filters)


def test_a_status_filter_sums_that_status_only(test_wallet: Wallet) -> None:
    _payouts_at(
        test_wallet,
        (datetime(2026, 3, 2, 9, tzinfo=UTC), PayoutStatus.FAILED),
        (datetime(2026, 3, 3, 9, tzinfo=UTC), PayoutStatus.FAILED),
        (datetime(2026, 3, 3, 9, tzinfo=UTC), PayoutStatus.SUCCESSFUL),
    )

    total = _wallet_total(test_wallet, PayoutListFilters(status=PayoutStatus.FAILED))

    assert total == 2


def test_reference_and_batch_filters_count_the_rows_they_select(test_wallet: Wallet) -> None:
    PayoutFactory(wallet=test_wallet, account_number="1111111111")
    PayoutFactory(wallet=test_wallet, account_number="2222222222")

    filters = PayoutListFilters(reference="1111111111")

    assert _wallet_total(test_wallet, filters) == 1 == _list_count(test_wallet, filters)


def test_a_window_ending_before_it_starts_holds_nothing(test_wallet: Wallet) -> None:
    _payouts_at(test_wallet, (datetime(2026, 3, 2, 9, tzinfo=UTC), PayoutStatus.FAILED))
    filters = PayoutListFilters(
        created_from=datetime(2026, 3, 2, 12, tzinfo=UTC),
        created_to=datetime(2026, 3, 2, 6, tzinfo=UTC),
    )

    assert _wallet_total(test_wallet, filters) == 0


def test_windows_reaching_the_ends_of_the_calendar_are_open(test_wallet: Wallet) -> None:
    _payouts_at(test_wallet, (datetime(2026, 3, 2, 9, tzinfo=UTC), PayoutStatus.FAILED))
    filters = PayoutListFilters(
        created_from=datetime.min.replace(tzinfo=UTC),
        created_to=datetime.max.replace(tzinfo=UTC),
    )

    assert _wallet_total(test_wallet, filters) == 1 == _list_count(test_wallet, filters)


def test_no_wallet_has_no_payouts() -> None:
    assert payout_list_total(wallet_id=None) == 0


# --- the ops command and the rebuild ---------------------------------------------------------


def _counts_broken(wallet: Wallet) -> None:
    """Counts that disagree with the payouts, as after a restore without the triggers."""
    payout_counts_fold()
    PayoutDailyCount.objects.filter(wallet=wallet).update(count=99)


def test_payout_counts_check_passes_when_the_counts_agree(test_wallet: Wallet) -> None:
    PayoutFactory(wallet=test_wallet)
    out = StringIO()

    call_command("payout_counts", "--no-progress", stdout=out)

    assert "0 mismatch(es)" in out.getvalue()


def test_payout_counts_check_names_each_mismatch_and_fails(test_wallet: Wallet) -> None:
    payout = PayoutFactory(wallet=test_wallet, status=PayoutStatus.FAILED)
    _counts_broken(test_wallet)
    out = StringIO()

    with pytest.raises(CommandError):
        call_command("payout_counts", "--no-progress", stdout=out)

    day = count_day(Payout.objects.get(pk=payout.pk).created_at).isoformat()
    assert f"wallet {test_wallet.pk}, failed, {day}: stored 99, counted 1" in out.getvalue()


def test_payout_counts_rebuild_mends_the_counts_and_is_audited(test_wallet: Wallet) -> None:
    PayoutFactory(wallet=test_wallet, status=PayoutStatus.FAILED)
    _counts_broken(test_wallet)
    out = StringIO()

    call_command("payout_counts", "--rebuild", "--no-progress", stdout=out)

    assert payout_counts_mismatches() == []
    assert "1 mismatch(es) mended" in out.getvalue()
    record = AuditRecord.objects.get(action="payouts.payoutdailycount.rebuild")
    assert record.actor_label.startswith("manage.py payout_counts")
    assert record.before == {"mismatches": 1}


def test_rebuild_then_writes_keep_counting(test_wallet: Wallet) -> None:
    PayoutFactory(wallet=test_wallet, status=PayoutStatus.FAILED)
    payout_counts_rebuild(actor="test")

    PayoutFactory(wallet=test_wallet, status=PayoutStatus.FAILED)

    assert _wallet_total(test_wallet, PayoutListFilters(status=PayoutStatus.FAILED)) == 2
    assert payout_counts_mismatches() == []


# --- the migration ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_migration_counts_the_payouts_already_there_and_unwinds() -> None:
    wallet = _new_wallet()
    _payouts_at(
        wallet,
        (datetime(2026, 3, 1, 22, 59, tzinfo=UTC), PayoutStatus.FAILED),
        (datetime(2026, 3, 1, 23, 0, tzinfo=UTC), PayoutStatus.FAILED),
        (datetime(2026, 3, 2, 10, 0, tzinfo=UTC), PayoutStatus.SUCCESSFUL),
    )
    # Every app's latest migration: going back to payouts 0006 also unapplies the apps whose
    # migrations depend on later payouts migrations (settlements, collections, refunds, sweeps).
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    executor = MigrationExecutor(connection)
    before_counts = [("payouts", "0006_payout_batch")]
    executor.migrate(before_counts)
    # Written with no triggers, through the model as it was then (later migrations add columns).
    then = executor.loader.project_state(before_counts).apps.get_model("payouts", "Payout")
    row = PayoutFactory.build(wallet=wallet, status=PayoutStatus.FAILED)
    then.objects.create(
        **{
            field.attname: getattr(row, field.attname)
            for field in then._meta.concrete_fields
            if not field.primary_key
        }
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(latest)

    assert payout_counts_mismatches() == []
    assert _wallet_total(wallet, PayoutListFilters(status=PayoutStatus.FAILED)) == 3
    test_every_count_trigger_is_installed()


# --- where the triggers write, and the fold ---------------------------------------------------


def test_a_write_appends_a_change_and_the_fold_moves_it(test_wallet: Wallet) -> None:
    payout = PayoutFactory(wallet=test_wallet, status=PayoutStatus.DISPATCHED)
    Payout.objects.filter(pk=payout.pk).update(status=PayoutStatus.FAILED)
    changes = sorted(
        PayoutCountChange.objects.filter(wallet=test_wallet).values_list("status", "delta")
    )
    total_before = _wallet_total(test_wallet, PayoutListFilters(status=PayoutStatus.FAILED))

    folded = payout_counts_fold()

    assert changes == [("dispatched", -1), ("dispatched", 1), ("failed", 1)]
    assert folded == 3
    assert not PayoutCountChange.objects.exists()
    counts = dict(
        PayoutDailyCount.objects.filter(wallet=test_wallet).values_list("status", "count")
    )
    assert counts == {"dispatched": 0, "failed": 1}
    assert total_before == 1
    assert _wallet_total(test_wallet, PayoutListFilters(status=PayoutStatus.FAILED)) == 1


def test_payout_counts_fold_command_reports_what_it_folded(test_wallet: Wallet) -> None:
    PayoutFactory(wallet=test_wallet)
    out = StringIO()

    call_command("payout_counts", "--fold", "--json", stdout=out)

    report = json.loads(out.getvalue())
    assert report["ok"] is True
    assert report["folded"] == 1

"""sweeps.services: the settlement account's cooling-off, its event and audit record, the
schedule's due computation in Lagos time, the amount kept and the fee, one sweep per day."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.models import AuditRecord
from core.exceptions import ApplicationError, NotFoundError
from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts.models import Payout
from sweeps.models import SettlementAccount, Sweep, SweepSchedule
from sweeps.selectors import next_sweep_at, sweep_schedules_due, sweep_settings_get
from sweeps.services import (
    NOTHING_TO_SWEEP_MESSAGE,
    SWEEP_NARRATION,
    sweep_amount,
    sweep_run_due,
    sweep_run_now,
    sweep_settings_set,
)
from tests.payouts.helpers import fund_wallet
from tests.sweeps.factories import SettlementAccountFactory, SweepScheduleFactory
from wallets.models import Wallet, WalletStatus
from wallets.name_enquiry import NAME_NOT_RESOLVED_MESSAGE
from wallets.providers.sandbox import sandbox_account_name
from wallets.reference_data import DEFAULT_FEE_TIERS
from wallets.selectors import payout_fee_calculate
from webhooks.models import Event, EventType

pytestmark = pytest.mark.django_db

GOOD_ACCOUNT = "0123456789"
LAGOS = ZoneInfo("Africa/Lagos")
OTHER_ACCOUNT = "0987654321"


def lagos(day: int, hour: int, minute: int = 0) -> datetime:
    """An instant of November 2026 in Lagos time (the 23rd is a Monday)."""
    return datetime(2026, 11, day, hour, minute, tzinfo=LAGOS)


MONDAY_0800 = lagos(23, 8)


def settings_set(merchant_account: MerchantCreated, **overrides: Any):
    arguments: dict[str, Any] = {
        "merchant": merchant_account.merchant,
        "mode": Mode.TEST,
        "schedule": "daily",
        "time": time(9, 0),
        "weekday": None,
        "amount_to_keep": Decimal("0.00"),
        "bank_code": "058",
        "account_number": GOOD_ACCOUNT,
        "actor": "merchant test key",
        "now": MONDAY_0800,
    }
    arguments.update(overrides)
    return sweep_settings_set(**arguments)


def account_changed_events(merchant_account: MerchantCreated) -> list[dict[str, Any]]:
    import json

    return [
        json.loads(event.body)["data"]
        for event in Event.objects.filter(
            merchant=merchant_account.merchant, event_type=EventType.SETTLEMENT_ACCOUNT_CHANGED
        ).order_by("id")
    ]


# --- Settlement account and cooling-off --------------------------------------------------------


def test_the_first_account_waits_for_the_cooling_off_period(merchant_account) -> None:
    result = settings_set(merchant_account)

    assert result.account is None
    assert result.pending_account is not None
    assert result.pending_account.effective_at == MONDAY_0800 + timedelta(hours=24)
    assert result.pending_account.account_name == sandbox_account_name(GOOD_ACCOUNT)
    # The first slot at or after the account takes effect: Tuesday 09:00.
    assert result.next_sweep_at == lagos(24, 9)


def test_setting_an_account_records_the_event_with_masked_numbers(merchant_account) -> None:
    SettlementAccountFactory(
        merchant=merchant_account.merchant,
        account_number=OTHER_ACCOUNT,
        effective_at=MONDAY_0800 - timedelta(days=3),
    )

    settings_set(merchant_account)

    [data] = account_changed_events(merchant_account)
    assert data["mode"] == "test"
    assert data["old_account"]["account_number"] == "******4321"
    assert data["new_account"]["account_number"] == "******6789"
    assert data["new_account"]["account_name"] == sandbox_account_name(GOOD_ACCOUNT)
    assert data["new_account"]["bank_code"] == "058"
    assert data["effective_at"] == "2026-11-24T08:00:00+01:00"
    assert data["cancelled_pending_account"] is None
    assert GOOD_ACCOUNT not in str(data) and OTHER_ACCOUNT not in str(data)


def test_a_settings_change_is_audited_with_masked_accounts(merchant_account) -> None:
    settings_set(merchant_account)

    record = AuditRecord.objects.get(action="sweeps.sweep_settings_set")
    assert record.actor_label == "merchant test key"
    assert record.before is None
    assert record.after["schedule"] == "daily"
    assert record.after["pending_account"]["account_number"] == "******6789"
    assert GOOD_ACCOUNT not in str(record.after)


def test_the_account_in_effect_is_paid_until_the_new_one_takes_effect(
    merchant_account, funded_wallet: Wallet
) -> None:
    old = SettlementAccountFactory(
        merchant=merchant_account.merchant,
        account_number=OTHER_ACCOUNT,
        effective_at=MONDAY_0800 - timedelta(days=3),
    )
    settings_set(merchant_account, amount_to_keep=Decimal("90000.00"))

    sweep_run_due(now=lagos(23, 10))  # Monday: the new account is still cooling off
    fund_wallet(funded_wallet, "10000.00")
    sweep_run_due(now=lagos(24, 9, 30))  # Tuesday: the new account took effect at 08:00

    payouts = list(Payout.objects.filter(wallet=funded_wallet).order_by("id"))
    assert [payout.account_number for payout in payouts] == [OTHER_ACCOUNT, GOOD_ACCOUNT]
    assert Sweep.objects.get(sweep_date=lagos(23, 10).date()).settlement_account == old


def test_the_new_account_is_not_used_before_it_takes_effect(
    merchant_account, funded_wallet: Wallet
) -> None:
    settings_set(merchant_account, now=lagos(23, 10))  # effective Tuesday 10:00

    report = sweep_run_due(now=lagos(24, 9, 59))

    assert report.swept == []
    assert not Payout.objects.filter(wallet=funded_wallet).exists()
    with pytest.raises(ApplicationError, match="no settlement account is in effect"):
        sweep_run_now(merchant=merchant_account.merchant, mode=Mode.TEST, now=lagos(24, 9, 59))
    assert len(sweep_run_due(now=lagos(24, 10, 1)).swept) == 1


def test_sending_the_account_in_effect_again_cancels_the_pending_one(merchant_account) -> None:
    current = SettlementAccountFactory(
        merchant=merchant_account.merchant,
        account_number=OTHER_ACCOUNT,
        effective_at=MONDAY_0800 - timedelta(days=3),
    )
    settings_set(merchant_account)  # pending GOOD_ACCOUNT

    result = settings_set(merchant_account, account_number=OTHER_ACCOUNT, now=lagos(23, 9))

    assert result.account == current
    assert result.pending_account is None
    data = account_changed_events(merchant_account)[-1]
    assert data["cancelled_pending_account"]["account_number"] == "******6789"
    assert data["new_account"]["account_number"] == "******4321"
    # Never in effect, not even after its cooling-off period.
    later = sweep_settings_get(
        wallet_id=current.merchant.wallets.get(mode=Mode.TEST).pk,
        merchant_id=current.merchant_id,
        mode=Mode.TEST,
        now=lagos(26, 9),
    )
    assert later.account == current


def test_a_second_new_account_replaces_the_pending_one_and_restarts_the_wait(
    merchant_account,
) -> None:
    settings_set(merchant_account)
    result = settings_set(merchant_account, account_number=OTHER_ACCOUNT, now=lagos(23, 12))

    assert result.pending_account is not None
    assert result.pending_account.account_number == OTHER_ACCOUNT
    assert result.pending_account.effective_at == lagos(24, 12)
    assert SettlementAccount.objects.filter(superseded_at=lagos(23, 12)).count() == 1


def test_sending_the_same_settings_again_changes_nothing(merchant_account) -> None:
    settings_set(merchant_account)
    settings_set(merchant_account, now=lagos(23, 9))

    assert SettlementAccount.objects.count() == 1
    assert len(account_changed_events(merchant_account)) == 1
    assert AuditRecord.objects.filter(action="sweeps.sweep_settings_set").count() == 1


def test_a_schedule_change_alone_is_audited_without_an_event(merchant_account) -> None:
    settings_set(merchant_account)
    settings_set(
        merchant_account,
        schedule="manual",
        time=None,
        bank_code=None,
        account_number=None,
        now=lagos(23, 9),
    )

    assert len(account_changed_events(merchant_account)) == 1
    record = AuditRecord.objects.filter(action="sweeps.sweep_settings_set").latest("id")
    assert record.before["schedule"] == "daily"
    assert record.after["schedule"] == "manual"


def test_an_unresolved_account_is_refused_as_the_payout_create_refuses_it(
    merchant_account,
) -> None:
    with pytest.raises(ApplicationError) as refused:
        settings_set(merchant_account, account_number="0000000000")

    assert refused.value.message == NAME_NOT_RESOLVED_MESSAGE
    assert not SweepSchedule.objects.exists()
    assert not SettlementAccount.objects.exists()


def test_the_first_settings_need_an_account(merchant_account) -> None:
    with pytest.raises(ApplicationError, match="settlement_account: required"):
        settings_set(merchant_account, bank_code=None, account_number=None)

    assert not SweepSchedule.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"schedule": "hourly"}, "schedule: must be one of"),
        ({"time": None}, "time: required for a daily schedule"),
        ({"schedule": "weekly"}, "weekday: required for a weekly schedule"),
        ({"weekday": "friday"}, "weekday: only for a weekly schedule"),
        ({"schedule": "manual"}, "time: not used by a manual schedule"),
        ({"amount_to_keep": Decimal("-1.00")}, "amount_to_keep: must be zero or more"),
        ({"bank_code": None}, "settlement_account: bank_code and account_number go together"),
    ],
)
def test_bad_settings_name_the_field_and_change_nothing(
    merchant_account, overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ApplicationError, match=message):
        settings_set(merchant_account, **overrides)

    assert not SweepSchedule.objects.exists()


def test_test_settings_never_touch_the_live_wallet(merchant_account, live_wallet: Wallet) -> None:
    settings_set(merchant_account)

    assert not SweepSchedule.objects.filter(wallet=live_wallet).exists()
    assert not SettlementAccount.objects.filter(mode=Mode.LIVE).exists()
    with pytest.raises(NotFoundError):
        sweep_settings_get(
            wallet_id=live_wallet.pk,
            merchant_id=live_wallet.merchant_id,
            mode=Mode.LIVE,
            now=MONDAY_0800,
        )


# --- The amount -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("available", "keep", "expected"),
    [
        ("100000.00", "30000.00", "69950.00"),  # fee 50 above 50000.00
        ("5005.00", "0.00", "4995.00"),  # 4995 + 10 fits; a 5000.01+ payout's fee is 25
        ("5010.00", "0.00", "5000.00"),
        ("10.00", "0.00", None),  # nothing is left after the fee
        ("200.00", "200.00", None),
        ("150.00", "200.00", None),
    ],
)
def test_the_amount_is_everything_above_the_amount_kept_after_the_fee(
    available: str, keep: str, expected: str | None
) -> None:
    amount = sweep_amount(available=Decimal(available), amount_to_keep=Decimal(keep))

    assert amount == (None if expected is None else Decimal(expected))


@settings(max_examples=200, deadline=None)
@given(
    available=st.decimals(min_value=0, max_value=10**7, places=2),
    keep=st.decimals(min_value=0, max_value=10**6, places=2),
)
def test_the_amount_is_the_largest_whose_total_debit_fits(
    available: Decimal, keep: Decimal
) -> None:
    budget = available - keep
    amount = sweep_amount(available=available, amount_to_keep=keep)

    if amount is not None:
        assert amount > 0
        assert amount + payout_fee_calculate(amount=amount) <= budget
    for low, high, fee in DEFAULT_FEE_TIERS:
        best_in_tier = budget - fee if high is None else min(high, budget - fee)
        if best_in_tier >= low:
            assert amount is not None and amount >= best_in_tier


# --- Due computation in Lagos time ------------------------------------------------------------


def _account_in_effect(merchant_account: MerchantCreated, mode: str = Mode.TEST) -> None:
    SettlementAccountFactory(
        merchant=merchant_account.merchant,
        mode=mode,
        account_number=GOOD_ACCOUNT,
        effective_at=MONDAY_0800 - timedelta(days=7),
    )


def _due(now: datetime) -> list[int]:
    return list(sweep_schedules_due(now=now).values_list("wallet_id", flat=True))


def test_a_daily_schedule_is_due_once_its_lagos_time_has_passed(
    merchant_account, funded_wallet: Wallet
) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet, time=time(9, 0))

    assert _due(lagos(23, 8, 59)) == []
    # 08:00 UTC is 09:00 in Lagos.
    assert _due(lagos(23, 9)) == [funded_wallet.pk]
    assert _due(lagos(23, 23, 59)) == [funded_wallet.pk]


def test_a_daily_schedule_is_not_due_again_the_same_day(
    merchant_account, funded_wallet: Wallet
) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet)
    sweep_run_due(now=lagos(23, 9, 1))
    fund_wallet(funded_wallet, "5000.00")

    assert _due(lagos(23, 18)) == []
    assert _due(lagos(24, 9)) == [funded_wallet.pk]


def test_a_weekly_schedule_is_due_on_its_weekday_only(
    merchant_account, funded_wallet: Wallet
) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet, schedule="weekly", weekday="friday")

    assert _due(lagos(23, 10)) == []  # Monday
    assert _due(lagos(27, 8, 59)) == []  # Friday, before 09:00
    assert _due(lagos(27, 9, 30)) == [funded_wallet.pk]


def test_a_manual_schedule_is_never_due(merchant_account, funded_wallet: Wallet) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet, schedule="manual", time=None)

    assert _due(lagos(23, 23, 59)) == []
    assert sweep_run_due(now=lagos(23, 23, 59)).swept == []


def test_the_lagos_day_decides_not_the_utc_day(merchant_account, funded_wallet: Wallet) -> None:
    """23:30 UTC on Sunday is 00:30 on Monday in Lagos: a Monday schedule at 00:15 is due."""
    _account_in_effect(merchant_account)
    SweepScheduleFactory(
        wallet=funded_wallet, schedule="weekly", weekday="monday", time=time(0, 15)
    )
    sunday_utc = datetime.fromisoformat("2026-11-22T23:30:00+00:00")

    assert _due(sunday_utc) == [funded_wallet.pk]
    sweep_run_due(now=sunday_utc)
    assert Sweep.objects.get().sweep_date.isoformat() == "2026-11-23"


def test_next_sweep_at_follows_the_schedule() -> None:
    daily = SweepSchedule(schedule="daily", time=time(17, 0))
    weekly = SweepSchedule(schedule="weekly", time=time(9, 30), weekday="friday")
    manual = SweepSchedule(schedule="manual")
    effective = lagos(20, 0)

    assert next_sweep_at(
        schedule=daily, first_effective_at=effective, swept_today=False, now=lagos(23, 10)
    ) == lagos(23, 17)
    assert next_sweep_at(
        schedule=daily, first_effective_at=effective, swept_today=True, now=lagos(23, 18)
    ) == lagos(24, 17)
    # Passed today without a sweep: due now.
    assert next_sweep_at(
        schedule=daily, first_effective_at=effective, swept_today=False, now=lagos(23, 18)
    ) == lagos(23, 18)
    assert next_sweep_at(
        schedule=weekly, first_effective_at=effective, swept_today=False, now=lagos(23, 10)
    ) == lagos(27, 9, 30)
    # The account takes effect after Friday's slot: Friday at that moment, the same day.
    assert next_sweep_at(
        schedule=weekly, first_effective_at=lagos(27, 11), swept_today=False, now=lagos(23, 10)
    ) == lagos(27, 11)
    assert (
        next_sweep_at(
            schedule=manual, first_effective_at=effective, swept_today=False, now=lagos(23, 10)
        )
        is None
    )
    assert (
        next_sweep_at(schedule=daily, first_effective_at=None, swept_today=False, now=lagos(23, 10))
        is None
    )


# --- Sweeps -----------------------------------------------------------------------------------


def test_a_sweep_pays_everything_above_the_amount_kept(
    merchant_account, funded_wallet: Wallet
) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet, amount_to_keep=Decimal("30000.00"))

    report = sweep_run_due(now=lagos(23, 9, 1))

    [payout] = Payout.objects.filter(wallet=funded_wallet)
    assert report.swept == [payout.pk]
    assert payout.amount == Decimal("69950.00")
    assert payout.fee_amount == Decimal("50.00")
    assert payout.account_number == GOOD_ACCOUNT
    assert payout.narration == SWEEP_NARRATION
    assert payout.idempotency_key == f"sweep-{funded_wallet.pk}-2026-11-23"
    funded_wallet.refresh_from_db()
    assert funded_wallet.available_balance == Decimal("30000.00")
    sweep = Sweep.objects.get()
    assert (sweep.payout, sweep.amount, sweep.trigger) == (payout, payout.amount, "schedule")


def test_a_double_run_pays_once(merchant_account, funded_wallet: Wallet) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet)

    first = sweep_run_due(now=lagos(23, 9, 1))
    fund_wallet(funded_wallet, "500.00")
    second = sweep_run_due(now=lagos(23, 9, 2))

    assert len(first.swept) == 1
    assert second.swept == []
    assert Payout.objects.filter(wallet=funded_wallet).count() == 1
    assert Sweep.objects.count() == 1


def test_sweep_now_answers_the_days_sweep_once_made(
    merchant_account, funded_wallet: Wallet
) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet, schedule="manual", time=None)

    made = sweep_run_now(merchant=merchant_account.merchant, mode=Mode.TEST, now=lagos(23, 11))
    fund_wallet(funded_wallet, "500.00")
    again = sweep_run_now(merchant=merchant_account.merchant, mode=Mode.TEST, now=lagos(23, 15))
    # The beat's run the same day finds it made too.
    SweepSchedule.objects.update(schedule="daily", time=time(9, 0))
    assert sweep_run_due(now=lagos(23, 16)).swept == []

    assert not made.duplicate and made.sweep.trigger == "manual"
    assert again.duplicate and again.sweep == made.sweep
    assert Payout.objects.filter(wallet=funded_wallet).count() == 1


def test_sweep_now_with_nothing_to_sweep_is_refused(
    merchant_account, funded_wallet: Wallet
) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet, amount_to_keep=Decimal("99990.00"))

    with pytest.raises(ApplicationError) as refused:
        sweep_run_now(merchant=merchant_account.merchant, mode=Mode.TEST, now=lagos(23, 11))

    assert refused.value.message == NOTHING_TO_SWEEP_MESSAGE
    assert not Sweep.objects.exists()


def test_sweep_now_without_settings_is_not_found(merchant_account, funded_wallet) -> None:
    with pytest.raises(NotFoundError):
        sweep_run_now(merchant=merchant_account.merchant, mode=Mode.TEST)


def test_an_inactive_wallet_is_skipped_and_logged(
    merchant_account, funded_wallet: Wallet, caplog: pytest.LogCaptureFixture
) -> None:
    _account_in_effect(merchant_account)
    SweepScheduleFactory(wallet=funded_wallet)
    Wallet.objects.filter(pk=funded_wallet.pk).update(status=WalletStatus.INACTIVE)

    with caplog.at_level("INFO", logger="sweeps.services"):
        report = sweep_run_due(now=lagos(23, 9, 1))

    assert report.swept == []
    assert funded_wallet.pk in report.skipped
    assert f"sweep of wallet {funded_wallet.pk} skipped" in caplog.text
    assert not Sweep.objects.exists()


def test_a_wallet_short_of_the_fee_is_skipped_and_swept_once_funded(
    merchant_account, test_wallet: Wallet
) -> None:
    _account_in_effect(merchant_account)
    fund_wallet(test_wallet, "10.00")
    SweepScheduleFactory(wallet=test_wallet)

    report = sweep_run_due(now=lagos(23, 9, 1))
    assert report.skipped == {test_wallet.pk: NOTHING_TO_SWEEP_MESSAGE}
    fund_wallet(test_wallet, "1000.00")
    later = sweep_run_due(now=lagos(23, 14))

    assert len(later.swept) == 1
    assert Payout.objects.get(wallet=test_wallet).amount == Decimal("1000.00")


def test_one_wallet_failing_does_not_stop_the_others(
    merchant_account, funded_wallet: Wallet, other_merchant_funded: Wallet
) -> None:
    _account_in_effect(merchant_account)
    SettlementAccountFactory(
        merchant=other_merchant_funded.merchant,
        account_number="0000000000",
        effective_at=MONDAY_0800 - timedelta(days=7),
    )
    SweepScheduleFactory(wallet=funded_wallet)
    SweepScheduleFactory(wallet=other_merchant_funded)

    report = sweep_run_due(now=lagos(23, 9, 1))

    # The other merchant's account no longer resolves: the payout create refuses it.
    assert report.skipped == {other_merchant_funded.pk: NAME_NOT_RESOLVED_MESSAGE}
    assert len(report.swept) == 1


def test_the_beat_sweeps_each_mode_from_its_own_wallet(
    merchant_account, funded_wallet: Wallet, live_wallet: Wallet, live_name_enquiry_sandbox
) -> None:
    _account_in_effect(merchant_account)
    fund_wallet(live_wallet, "50000.00")
    SweepScheduleFactory(wallet=funded_wallet)

    sweep_run_due(now=lagos(23, 9, 1))

    assert not Payout.objects.filter(mode=Mode.LIVE).exists()
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == Decimal("50000.00")


@pytest.fixture
def other_merchant_funded(db: None) -> Wallet:
    from merchants.services import merchant_create
    from wallets.selectors import wallet_get

    other = merchant_create(name="Bola Foods", email="bola@example.com")
    return fund_wallet(wallet_get(merchant=other.merchant, mode=Mode.TEST), "2000.00")

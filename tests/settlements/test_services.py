"""Settlement runs: the net, exactly once, refund deductions carried over, test and live kept
apart, the platform merchant, and the platform ledger after each step."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from collections_app.models import CollectionTransaction
from core.exceptions import ApplicationError
from merchants.models import Merchant, Mode, SecretKey
from merchants.services import secret_key_issue
from refunds.models import Refund, RefundStatus
from settlements.events import settlement_event_data
from settlements.models import PlatformAccount, Settlement, SettlementShare
from settlements.platform_ledger import platform_balances
from settlements.services import (
    platform_merchant_get,
    platform_wallet_get,
    settlement_run,
    settlements_run,
)
from settlements.services import run as run_module
from tests.settlements.helpers import (
    merchant_with_wallets,
    paid_collection,
    refund_pending,
    subaccount_for,
    wallet_of,
)
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from webhooks.models import Event, EventType

pytestmark = pytest.mark.django_db


def test_a_run_credits_gross_minus_fees_shares_and_refunds_with_one_ledger_entry() -> None:
    merchant = merchant_with_wallets()
    first, second = subaccount_for(merchant), subaccount_for(merchant)
    a = paid_collection(merchant=merchant, shares={first: Decimal("700.00")})
    b = paid_collection(
        merchant=merchant,
        amount=Decimal("3000.00"),
        fee=Decimal("145.00"),
        shares={first: Decimal("100.00"), second: Decimal("250.50")},
    )
    refund_pending(collection=a, deducted=Decimal("1000.00"))

    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement is not None
    assert settlement.settlement_id.startswith("STL_") and len(settlement.settlement_id) == 24
    assert settlement.transaction_count == 2
    assert settlement.gross == Decimal("10350.00")
    assert settlement.fees == Decimal("350.00")
    assert settlement.subaccount_shares == Decimal("1050.50")
    assert settlement.refunds_deducted == Decimal("1000.00")
    assert settlement.net == Decimal("7949.50")
    assert settlement.period_start == min(a.paid_at, b.paid_at)
    assert wallet_of(merchant).available_balance == Decimal("7949.50")
    entry = LedgerEntry.objects.get(wallet=wallet_of(merchant))
    assert (entry.entry_type, entry.amount, entry.reference) == (
        LedgerEntryType.SETTLEMENT,
        Decimal("7949.50"),
        settlement.settlement_id,
    )
    assert settlement.ledger_entry == entry
    assert set(CollectionTransaction.objects.filter(settlement=settlement)) == {a, b}
    assert Refund.objects.get(collection=a).settlement == settlement


def test_shares_are_recorded_per_subaccount_and_credited_to_the_platform_wallet() -> None:
    merchant = merchant_with_wallets()
    first, second = subaccount_for(merchant), subaccount_for(merchant)
    paid_collection(merchant=merchant, shares={first: Decimal("700.00")})
    paid_collection(merchant=merchant, shares={first: Decimal("100.00"), second: Decimal("50")})

    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement is not None
    shares = {
        s.subaccount_id: s.amount for s in SettlementShare.objects.filter(settlement=settlement)
    }
    assert shares == {first.pk: Decimal("800.00"), second.pk: Decimal("50.00")}
    platform_wallet = platform_wallet_get(mode=Mode.TEST)
    assert platform_wallet.available_balance == Decimal("850.00")
    entry = LedgerEntry.objects.get(wallet=platform_wallet)
    assert (entry.entry_type, entry.reference) == (
        LedgerEntryType.SUBACCOUNT_SHARES,
        settlement.settlement_id,
    )


def test_the_platform_ledger_moves_the_net_from_owed_to_credited() -> None:
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant, shares={subaccount_for(merchant): Decimal("700.00")})
    before = platform_balances(mode=Mode.TEST, merchant_id=merchant.pk)
    assert before[PlatformAccount.OWED_MERCHANTS] == Decimal("6300.00")

    settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    after = platform_balances(mode=Mode.TEST, merchant_id=merchant.pk)
    assert after[PlatformAccount.OWED_MERCHANTS] == Decimal("0.00")
    assert after[PlatformAccount.MERCHANT_CREDITS] == Decimal("6300.00")
    assert after[PlatformAccount.OWED_SUBACCOUNTS] == Decimal("700.00")
    assert after.equation_holds


def test_the_event_carries_the_settlement_resource() -> None:
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant)

    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement is not None
    event = Event.objects.get(event_type=EventType.SETTLEMENT_COMPLETED)
    assert (event.merchant_id, event.mode, event.reference) == (
        merchant.pk,
        Mode.TEST,
        settlement.settlement_id,
    )
    data = json.loads(event.body)["data"]
    assert data == settlement_event_data(settlement)
    assert (data["gross"], data["fees"], data["net"]) == ("7205.00", "205.00", "7000.00")
    assert data["transaction_count"] == 1


def test_nothing_due_creates_nothing() -> None:
    merchant = merchant_with_wallets()

    assert settlement_run(merchant_id=merchant.pk, mode=Mode.TEST) is None
    assert not Settlement.objects.exists()
    assert not Event.objects.filter(event_type=EventType.SETTLEMENT_COMPLETED).exists()


def test_a_second_run_settles_nothing_again() -> None:
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant)
    settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement_run(merchant_id=merchant.pk, mode=Mode.TEST) is None
    assert Settlement.objects.count() == 1
    assert wallet_of(merchant).available_balance == Decimal("7000.00")


def test_a_collection_paid_after_a_run_goes_to_the_next_one() -> None:
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant)
    first = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)
    late = paid_collection(merchant=merchant, amount=Decimal("500.00"), fee=Decimal("7.50"))

    second = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert first is not None and second is not None
    assert list(CollectionTransaction.objects.filter(settlement=second)) == [late]
    assert second.net == Decimal("500.00")
    assert wallet_of(merchant).available_balance == Decimal("7500.00")


def test_a_crash_after_the_claim_settles_nothing_and_the_next_run_settles_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    merchant = merchant_with_wallets()
    collections = [paid_collection(merchant=merchant) for _ in range(3)]
    real_totals = run_module._claim_totals

    def crash(**kwargs: object) -> None:
        raise RuntimeError("worker killed")

    monkeypatch.setattr(run_module, "_claim_totals", crash)
    with pytest.raises(RuntimeError):
        settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert not Settlement.objects.exists()
    assert CollectionTransaction.objects.filter(settlement__isnull=False).count() == 0
    assert wallet_of(merchant).available_balance == Decimal("0.00")
    monkeypatch.setattr(run_module, "_claim_totals", real_totals)
    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)
    assert settlement is not None
    assert settlement.transaction_count == len(collections)
    assert wallet_of(merchant).available_balance == Decimal("21000.00")
    assert platform_balances(mode=Mode.TEST).equation_holds


def test_deductions_go_oldest_first_and_what_does_not_fit_waits_for_the_next_run() -> None:
    merchant = merchant_with_wallets()
    now = timezone.now()
    collection = paid_collection(merchant=merchant)  # owes the merchant 7,000.00
    oldest = refund_pending(
        collection=collection, deducted=Decimal("4000.00"), created_at=now - timedelta(hours=3)
    )
    too_big = refund_pending(
        collection=collection, deducted=Decimal("3000.50"), created_at=now - timedelta(hours=2)
    )
    small = refund_pending(
        collection=collection, deducted=Decimal("10.00"), created_at=now - timedelta(hours=1)
    )

    first = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert first is not None
    assert first.refunds_deducted == Decimal("4000.00")
    assert first.net == Decimal("3000.00")
    assert Refund.objects.get(pk=oldest.pk).settlement == first
    assert Refund.objects.get(pk=too_big.pk).settlement is None
    assert Refund.objects.get(pk=small.pk).settlement is None

    paid_collection(merchant=merchant, amount=Decimal("5000.00"), fee=Decimal("175.00"))
    second = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert second is not None
    assert second.refunds_deducted == Decimal("3010.50")
    assert second.net == Decimal("1989.50")
    assert Refund.objects.filter(settlement=second).count() == 2
    assert wallet_of(merchant).available_balance == Decimal("4989.50")
    balances = platform_balances(mode=Mode.TEST, merchant_id=merchant.pk)
    assert balances[PlatformAccount.OWED_MERCHANTS] == Decimal("0.00")
    assert balances.equation_holds


def test_a_failed_refund_is_not_deducted() -> None:
    merchant = merchant_with_wallets()
    collection = paid_collection(merchant=merchant)
    refund = refund_pending(collection=collection, deducted=Decimal("1000.00"))
    Refund.objects.filter(pk=refund.pk).update(status=RefundStatus.FAILED)

    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement is not None
    assert settlement.refunds_deducted == Decimal("0.00")
    assert Refund.objects.get(pk=refund.pk).settlement is None


def test_a_net_of_zero_settles_without_a_ledger_entry() -> None:
    merchant = merchant_with_wallets()
    collection = paid_collection(merchant=merchant)
    refund_pending(collection=collection, deducted=Decimal("7000.00"))

    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement is not None
    assert settlement.net == Decimal("0.00")
    assert settlement.ledger_entry is None
    assert not LedgerEntry.objects.filter(wallet=wallet_of(merchant)).exists()


def test_a_test_run_leaves_live_collections_and_the_live_wallet_alone() -> None:
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant, mode=Mode.TEST)
    live = paid_collection(merchant=merchant, mode=Mode.LIVE)

    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement is not None and settlement.mode == Mode.TEST
    assert CollectionTransaction.objects.get(pk=live.pk).settlement is None
    assert wallet_of(merchant, Mode.LIVE).available_balance == Decimal("0.00")
    assert not LedgerEntry.objects.filter(wallet=wallet_of(merchant, Mode.LIVE)).exists()
    live_balances = platform_balances(mode=Mode.LIVE, merchant_id=merchant.pk)
    assert live_balances[PlatformAccount.OWED_MERCHANTS] == Decimal("7000.00")


def test_one_merchants_run_leaves_another_merchants_collections_alone() -> None:
    merchant, other = merchant_with_wallets(), merchant_with_wallets("Other")
    paid_collection(merchant=merchant)
    theirs = paid_collection(merchant=other)

    settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert CollectionTransaction.objects.get(pk=theirs.pk).settlement is None
    assert wallet_of(other).available_balance == Decimal("0.00")


def test_a_live_collection_waits_for_the_next_business_day(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SETTLEMENT_LIVE_HOUR = 9
    settings.SETTLEMENT_HOLIDAYS = []
    merchant = merchant_with_wallets()
    friday_noon = timezone.make_aware(timezone.datetime(2026, 11, 20, 12, 0))
    paid_collection(merchant=merchant, mode=Mode.LIVE, paid_at=friday_noon)

    saturday = friday_noon + timedelta(days=1)
    monday_early = timezone.make_aware(timezone.datetime(2026, 11, 23, 8, 59))
    monday_nine = timezone.make_aware(timezone.datetime(2026, 11, 23, 9, 0))

    assert settlement_run(merchant_id=merchant.pk, mode=Mode.LIVE, now=saturday) is None
    assert settlement_run(merchant_id=merchant.pk, mode=Mode.LIVE, now=monday_early) is None
    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.LIVE, now=monday_nine)
    assert settlement is not None
    assert settlement.period_end == timezone.make_aware(timezone.datetime(2026, 11, 23))
    assert wallet_of(merchant, Mode.LIVE).available_balance == Decimal("7000.00")


def test_settlements_run_settles_every_due_merchant_and_reports_them() -> None:
    merchant, other = merchant_with_wallets(), merchant_with_wallets("Other")
    paid_collection(merchant=merchant)
    paid_collection(merchant=other, amount=Decimal("1000.00"), fee=Decimal("15.00"))
    progress: list[tuple[int, int]] = []

    report = settlements_run(
        modes=(Mode.TEST,), progress=lambda done, total: progress.append((done, total))
    )

    assert report.merchants == 2
    assert sorted(s.net for s in report.settlements) == [Decimal("1000.00"), Decimal("7000.00")]
    assert report.errors == []
    assert progress[-1] == (2, 2)
    assert report.summary() == (
        "Settled 2 of 2 merchant run(s) due (test), net 8000.00; 0 error(s)."
    )
    assert report.as_dict()["net_total"] == "8000.00"


# --- the platform merchant ----------------------------------------------------------------------


def test_the_platform_merchant_is_made_once_with_wallets_and_no_keys() -> None:
    first = platform_merchant_get()
    again = platform_merchant_get()

    assert first.pk == again.pk and first.is_platform
    assert Merchant.objects.filter(is_platform=True).count() == 1
    assert set(Wallet.objects.filter(merchant=first).values_list("mode", flat=True)) == {
        Mode.TEST,
        Mode.LIVE,
    }
    assert not SecretKey.objects.filter(merchant=first).exists()


def test_the_platform_merchant_can_never_get_a_key() -> None:
    with pytest.raises(ApplicationError, match="no secret keys"):
        secret_key_issue(merchant=platform_merchant_get(), mode=Mode.TEST)


def test_the_platform_merchant_is_never_settled() -> None:
    platform = platform_merchant_get()

    assert settlement_run(merchant_id=platform.pk, mode=Mode.TEST) is None


def test_the_key_rotation_command_refuses_the_platform_merchant() -> None:
    platform = platform_merchant_get()

    with pytest.raises(CommandError, match="platform merchant"):
        call_command("rotate_secret_key", "--merchant", str(platform.pk), "--mode", "test")
    assert not SecretKey.objects.filter(merchant=platform).exists()

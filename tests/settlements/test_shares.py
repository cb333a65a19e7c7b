"""Subaccount shares: one fee-free payout per share from the platform wallet, created once
(task, sweeper), the platform postings at each payout's outcome, and finance's re-send."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from audit.models import AuditRecord
from core.exceptions import ConflictError
from merchants.models import Mode
from payouts.models import Payout, PayoutStatus
from payouts.providers.sandbox import ACCOUNT_FAILED
from payouts.services import payout_return, payouts_dispatch_round
from settlements.models import PlatformAccount, Settlement, SettlementShare
from settlements.platform_ledger import platform_balances
from settlements.services import (
    RESEND_AUDIT_ACTION,
    platform_merchant_get,
    platform_wallet_get,
    settlement_run,
    settlement_share_pay,
    settlement_share_payout_resend,
    settlement_shares_pay,
    settlement_shares_sweep,
)
from tests.settlements.helpers import merchant_with_wallets, paid_collection, subaccount_for

pytestmark = pytest.mark.django_db


def _settled_share(*, account_number: str = "", amount: str = "700.00") -> SettlementShare:
    merchant = merchant_with_wallets()
    subaccount = subaccount_for(merchant, account_number=account_number)
    paid_collection(merchant=merchant, shares={subaccount: Decimal(amount)})
    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)
    assert settlement is not None
    return SettlementShare.objects.get(settlement=settlement)


def _owed_and_paid() -> tuple[Decimal, Decimal]:
    balances = platform_balances(mode=Mode.TEST)
    assert balances.equation_holds
    return (
        balances[PlatformAccount.OWED_SUBACCOUNTS],
        balances[PlatformAccount.SUBACCOUNT_PAYOUTS],
    )


def test_a_share_is_paid_by_a_fee_free_payout_of_the_platform_to_the_subaccount() -> None:
    share = _settled_share()

    payout = settlement_share_pay(share_id=share.pk)

    platform_wallet = platform_wallet_get(mode=Mode.TEST)
    assert payout.wallet_id == platform_wallet.pk
    assert payout.merchant_id == platform_merchant_get().pk
    assert (payout.amount, payout.fee_amount, payout.total_debit_amount) == (
        Decimal("700.00"),
        Decimal("0.00"),
        Decimal("700.00"),
    )
    assert payout.account_number == share.subaccount.account_number
    assert payout.bank_code == share.subaccount.bank.bank_code
    assert payout.idempotency_key == f"settlement-share-{share.pk}"
    assert share.settlement.settlement_id in (payout.narration or "")
    assert payout.status == PayoutStatus.RESERVED
    platform_wallet.refresh_from_db()
    assert (platform_wallet.available_balance, platform_wallet.reserved_balance) == (
        Decimal("0.00"),
        Decimal("700.00"),
    )
    assert SettlementShare.objects.get(pk=share.pk).payout == payout


def test_paying_a_settlements_shares_twice_makes_one_payout_each() -> None:
    share = _settled_share()

    first = settlement_shares_pay(settlement_pk=share.settlement_id)
    second = settlement_shares_pay(settlement_pk=share.settlement_id)
    again = settlement_share_pay(share_id=share.pk)

    assert (first.paid, second.found) == (1, 0)
    assert Payout.objects.filter(wallet=platform_wallet_get(mode=Mode.TEST)).count() == 1
    assert again == SettlementShare.objects.get(pk=share.pk).payout


def test_a_payout_made_but_not_linked_before_a_crash_is_linked_not_made_again() -> None:
    share = _settled_share()
    payout = settlement_share_pay(share_id=share.pk)
    SettlementShare.objects.filter(pk=share.pk).update(payout=None)

    assert settlement_share_pay(share_id=share.pk) == payout
    assert Payout.objects.count() == 1


def test_the_sweeper_creates_a_lost_share_payout_once_it_is_old_enough() -> None:
    share = _settled_share()

    fresh = settlement_shares_sweep(older_than=timedelta(minutes=5))
    assert (fresh.found, SettlementShare.objects.get(pk=share.pk).payout) == (0, None)

    swept = settlement_shares_sweep(older_than=timedelta(0))

    assert (swept.found, swept.paid, swept.errors) == (1, 1, 0)
    assert SettlementShare.objects.get(pk=share.pk).payout is not None
    assert settlement_shares_sweep(older_than=timedelta(0)).found == 0


def test_a_successful_share_payout_moves_the_share_from_owed_to_paid() -> None:
    share = _settled_share()
    assert _owed_and_paid() == (Decimal("700.00"), Decimal("0.00"))
    payout = settlement_share_pay(share_id=share.pk)

    payouts_dispatch_round(payout_ids=[payout.pk])

    payout.refresh_from_db()
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert _owed_and_paid() == (Decimal("0.00"), Decimal("700.00"))
    platform_wallet = platform_wallet_get(mode=Mode.TEST)
    assert (platform_wallet.available_balance, platform_wallet.reserved_balance) == (
        Decimal("0.00"),
        Decimal("0.00"),
    )


def test_a_failed_share_payout_moves_nothing_and_the_money_is_back_in_the_platform_wallet() -> None:
    share = _settled_share(account_number=ACCOUNT_FAILED)
    payout = settlement_share_pay(share_id=share.pk)

    payouts_dispatch_round(payout_ids=[payout.pk])

    payout.refresh_from_db()
    assert payout.status == PayoutStatus.FAILED
    assert _owed_and_paid() == (Decimal("700.00"), Decimal("0.00"))
    assert platform_wallet_get(mode=Mode.TEST).available_balance == Decimal("700.00")


def test_a_returned_share_payout_is_owed_again() -> None:
    share = _settled_share()
    payout = settlement_share_pay(share_id=share.pk)
    payouts_dispatch_round(payout_ids=[payout.pk])

    payout_return(payout_id=payout.pk, reason="Account closed")

    assert _owed_and_paid() == (Decimal("700.00"), Decimal("0.00"))
    assert platform_wallet_get(mode=Mode.TEST).available_balance == Decimal("700.00")


def test_finance_resends_a_failed_share_with_a_new_key_audited() -> None:
    share = _settled_share(account_number=ACCOUNT_FAILED)
    failed = settlement_share_pay(share_id=share.pk)
    payouts_dispatch_round(payout_ids=[failed.pk])
    # The subaccount's bank details were put right.
    share.subaccount.account_number = "2999999999"
    share.subaccount.save()

    resent = settlement_share_payout_resend(
        share_id=share.pk, actor="finance@example.com", reason="bank details corrected"
    )

    assert resent.pk != failed.pk
    assert resent.idempotency_key == f"settlement-share-{share.pk}-2"
    assert (resent.account_number, resent.fee_amount) == ("2999999999", Decimal("0.00"))
    assert SettlementShare.objects.get(pk=share.pk).payout == resent
    record = AuditRecord.objects.get(action=RESEND_AUDIT_ACTION)
    assert record.reason == "bank details corrected"
    payouts_dispatch_round(payout_ids=[resent.pk])
    assert _owed_and_paid() == (Decimal("0.00"), Decimal("700.00"))


def test_a_share_whose_payout_is_in_flight_or_paid_is_not_resent() -> None:
    share = _settled_share()
    payout = settlement_share_pay(share_id=share.pk)

    with pytest.raises(ConflictError):
        settlement_share_payout_resend(share_id=share.pk, actor="finance@example.com")
    payouts_dispatch_round(payout_ids=[payout.pk])
    with pytest.raises(ConflictError):
        settlement_share_payout_resend(share_id=share.pk, actor="finance@example.com")
    assert Payout.objects.count() == 1
    assert not AuditRecord.objects.filter(action=RESEND_AUDIT_ACTION).exists()


def test_a_settlement_without_splits_records_no_share_and_no_payout() -> None:
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant)

    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert isinstance(settlement, Settlement)
    assert not SettlementShare.objects.exists()
    assert platform_wallet_get(mode=Mode.TEST).available_balance == Decimal("0.00")


def test_a_settlement_enqueues_its_share_payouts_on_commit(
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from settlements import tasks

    queued: list[object] = []
    monkeypatch.setattr(
        tasks.settlement_shares_pay_task,
        "apply_async",
        lambda args, **kwargs: queued.append(args),
    )
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant, shares={subaccount_for(merchant): Decimal("700.00")})

    with django_capture_on_commit_callbacks(execute=True):
        settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement is not None
    assert queued == [(settlement.pk,)]

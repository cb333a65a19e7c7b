"""A transfer held for suspected fraud (NIP 34, 35, 63): the payout stays ``ambiguous`` and
flagged, its reservation untouched; a failure never releases it automatically, a success still
captures it, and finance settles it with two people."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payouts.models import Payout, PayoutStatus
from payouts.providers.base import TransferOutcome, TransferResult
from payouts.services import (
    payout_dispatch,
    payout_requery,
    payout_requery_apply,
    payout_resolution_approve,
    payout_resolution_propose,
)
from tests.audit.factories import StaffUserFactory
from tests.payouts.helpers import assert_wallet_balanced, reload
from wallets.models import LedgerEntry, LedgerEntryType

pytestmark = pytest.mark.django_db

FRAUD_ACCOUNT = "1000000005"


@pytest.fixture
def held_payout(funded_wallet, create_payout) -> Payout:
    payout = create_payout(account_number=FRAUD_ACCOUNT).payout
    payout_dispatch(payout_id=payout.pk)
    return reload(payout)


def ledger(payout: Payout, entry_type: str) -> list[LedgerEntry]:
    return list(LedgerEntry.objects.filter(payout_id=payout.pk, entry_type=entry_type))


def test_a_held_transfer_leaves_the_payout_ambiguous_flagged_and_reserved(
    held_payout, funded_wallet
) -> None:
    assert held_payout.status == PayoutStatus.AMBIGUOUS
    assert held_payout.fraud_flagged_at is not None
    assert held_payout.fraud_nip_code == "34"
    assert held_payout.completed_at is None
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("1010.00")
    assert ledger(held_payout, LedgerEntryType.PAYOUT_DEBIT) == []
    assert ledger(held_payout, LedgerEntryType.PAYOUT_REVERSAL) == []
    assert_wallet_balanced(funded_wallet)


def test_requery_still_held_keeps_the_first_flag(held_payout) -> None:
    requeried = payout_requery(payout=held_payout)
    assert requeried.status == PayoutStatus.AMBIGUOUS
    assert requeried.fraud_flagged_at == held_payout.fraud_flagged_at
    assert requeried.requery_count == 1


def test_a_failure_after_the_hold_never_releases_the_money(held_payout, funded_wallet) -> None:
    failed = TransferResult(outcome=TransferOutcome.FAILED, message="reversed")
    answered = payout_requery_apply(payout_id=held_payout.pk, result=failed)
    assert answered.status == PayoutStatus.AMBIGUOUS
    assert answered.next_requery_at is not None
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("1010.00")
    assert ledger(held_payout, LedgerEntryType.PAYOUT_REVERSAL) == []
    assert_wallet_balanced(funded_wallet)


def test_a_success_after_the_hold_captures_once(held_payout, funded_wallet) -> None:
    success = TransferResult(outcome=TransferOutcome.SUCCESSFUL)
    captured = payout_requery_apply(payout_id=held_payout.pk, result=success)
    payout_requery_apply(payout_id=held_payout.pk, result=success)
    assert captured.status == PayoutStatus.SUCCESSFUL
    assert len(ledger(held_payout, LedgerEntryType.PAYOUT_DEBIT)) == 1
    assert_wallet_balanced(funded_wallet)


def test_finance_releases_a_held_payout_with_two_people(held_payout, funded_wallet) -> None:
    operator = StaffUserFactory(username="operator", roles=["finance_operator"])
    approver = StaffUserFactory(username="approver", roles=["finance_approver"])
    proposal = payout_resolution_propose(
        payout_id=held_payout.pk,
        proposed_status=PayoutStatus.FAILED,
        reason="Bank confirms the transfer was blocked and never credited",
        proposed_by=operator,
    )
    payout_resolution_approve(proposal_id=proposal.pk, approver=approver)
    released = reload(held_payout)
    assert released.status == PayoutStatus.FAILED
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")
    assert funded_wallet.available_balance == Decimal("100000.00")
    assert_wallet_balanced(funded_wallet)


def test_the_merchant_is_not_told_of_the_fraud_flag(held_payout) -> None:
    assert held_payout.error_message in (None, "")


def test_a_provider_failure_event_never_releases_a_held_payout(held_payout, funded_wallet) -> None:
    from merchants.models import Mode
    from payouts.services import (
        ProviderTransferEvent,
        ProviderTransferEventKind,
        provider_transfer_event_apply,
    )

    def event(kind: ProviderTransferEventKind, number: int) -> ProviderTransferEvent:
        return ProviderTransferEvent(
            provider=held_payout.provider_name,
            event_id=f"transfer.{kind}:{number}",
            reference=held_payout.internal_reference,
            kind=kind,
            mode=Mode.TEST,
        )

    assert provider_transfer_event_apply(event(ProviderTransferEventKind.FAILED, 1)) == "applied"
    assert reload(held_payout).status == PayoutStatus.AMBIGUOUS
    assert ledger(held_payout, LedgerEntryType.PAYOUT_REVERSAL) == []
    assert provider_transfer_event_apply(event(ProviderTransferEventKind.SUCCESS, 2)) == "applied"
    assert reload(held_payout).status == PayoutStatus.SUCCESSFUL
    assert len(ledger(held_payout, LedgerEntryType.PAYOUT_DEBIT)) == 1
    assert_wallet_balanced(funded_wallet)

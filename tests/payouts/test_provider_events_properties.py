"""Generated sequences of provider transfer events (successes, failures, reversals; redelivered,
in any order) applied to one ambiguous payout: at most one capture, at most one release, never
both, at most one return; the wallet balances against its ledger after every event and its
reserved balance is never negative."""

from __future__ import annotations

from decimal import Decimal
from itertools import count

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from merchants.models import Mode
from merchants.services import merchant_create
from payouts.models import PayoutStatus
from payouts.providers.sandbox import ACCOUNT_ALWAYS_AMBIGUOUS
from payouts.services import payout_create, payout_dispatch
from payouts.services.provider_events import (
    ProviderTransferEvent,
    ProviderTransferEventKind,
    provider_transfer_event_apply,
)
from tests.payouts.helpers import GTB_CODE, assert_wallet_balanced, fund_wallet
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

_sequence = count(1)
events = st.lists(
    st.tuples(st.sampled_from(list(ProviderTransferEventKind)), st.integers(0, 2)),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=events)
def test_any_sequence_of_events_moves_the_money_at_most_once(db, sequence) -> None:
    number = next(_sequence)
    merchant = merchant_create(name=f"Events {number}", email=f"events{number}@example.com")
    wallet = fund_wallet(wallet_get(merchant=merchant.merchant, mode=Mode.TEST), "5000.00")
    payout = payout_create(
        merchant=merchant.merchant,
        mode=Mode.TEST,
        account_number=ACCOUNT_ALWAYS_AMBIGUOUS,
        bank_code=GTB_CODE,
        amount=Decimal("1000.00"),
        idempotency_key=f"events-{number}",
    ).payout
    assert payout_dispatch(payout_id=payout.pk).status == PayoutStatus.AMBIGUOUS

    for kind, copy in sequence:
        provider_transfer_event_apply(
            ProviderTransferEvent(
                provider=payout.provider_name,
                event_id=f"transfer.{kind}:{copy}",
                reference=payout.internal_reference,
                kind=kind,
                amount=payout.amount,
                currency="NGN",
                mode=Mode.TEST,
            )
        )
        entries = LedgerEntry.objects.filter(payout_id=payout.pk)
        captures = entries.filter(entry_type=LedgerEntryType.PAYOUT_DEBIT).count()
        releases = entries.filter(entry_type=LedgerEntryType.PAYOUT_REVERSAL).count()
        returns = entries.filter(entry_type=LedgerEntryType.PAYOUT_RETURN).count()
        assert captures + releases <= 1
        assert returns <= captures
        wallet.refresh_from_db()
        assert wallet.reserved_balance >= 0
        assert_wallet_balanced(wallet)

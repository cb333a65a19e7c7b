"""Fixtures for the reconciliation tests: the recorded sample statements and the payouts of ours
they describe (built with factories: matching reads, it never moves money), and a real
ambiguous payout (created and dispatched through the services) for the resolution flow."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts.models import Payout, PayoutStatus
from payouts.services import payout_dispatch
from tests.audit.factories import StaffUserFactory
from tests.payouts.conftest import (  # noqa: F401 - fixtures shared with the payout tests
    _in_memory_broker,
    create_payout,
    funded_wallet,
    test_wallet,
)
from tests.payouts.factories import PayoutFactory
from wallets.models import Wallet
from wallets.selectors import wallet_get

SAMPLES = Path(__file__).parent / "samples"
PAYSTACK_SAMPLE = SAMPLES / "paystack_transfers_2026-11-20.csv"
NIP_SAMPLE = SAMPLES / "nip_settlement_2026-11-20.csv"
ALWAYS_AMBIGUOUS_ACCOUNT = "1000000003"

# 2026-11-20 10:00 Lagos
ON_THE_DAY = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
def live_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.LIVE)


def _payout(wallet: Wallet, reference: str, amount: str, status: str, **fields: object) -> Payout:
    fields.setdefault("provider_name", "paystack")
    fields.setdefault("dispatched_at", ON_THE_DAY)
    return PayoutFactory(
        wallet=wallet,
        internal_reference=reference,
        amount=Decimal(amount),
        status=status,
        **fields,
    )


@pytest.fixture
def paystack_payouts(live_wallet: Wallet) -> dict[str, Payout]:
    """Our side of ``paystack_transfers_2026-11-20.csv``, one payout per case."""
    return {
        "matched": _payout(
            live_wallet, "po_20261120_recon_matched_01", "5000.00", PayoutStatus.SUCCESSFUL
        ),
        "amount": _payout(
            live_wallet, "po_20261120_recon_amount_02", "2500.00", PayoutStatus.SUCCESSFUL
        ),
        "ambiguous": _payout(
            live_wallet, "po_20261120_recon_ambiguous_03", "10000.00", PayoutStatus.AMBIGUOUS
        ),
        "reversed": _payout(
            live_wallet, "po_20261120_recon_reversed_04", "7500.00", PayoutStatus.SUCCESSFUL
        ),
        "by_transfer_code": _payout(
            live_wallet,
            "po_20261120_recon_code_07",
            "3200.00",
            PayoutStatus.SUCCESSFUL,
            provider_reference="TRF_q8w6e4r2ty0u",
        ),
        "pending": _payout(
            live_wallet, "po_20261120_recon_pending_08", "900.00", PayoutStatus.DISPATCHED
        ),
        "midnight": _payout(
            live_wallet, "po_20261120_recon_midnight_09", "150.00", PayoutStatus.SUCCESSFUL
        ),
        # Sent that day but not on the statement.
        "missing": _payout(
            live_wallet, "po_20261120_recon_missing_10", "4200.00", PayoutStatus.SUCCESSFUL
        ),
        # Not expected on this statement: another day, another provider, never sent.
        "next_day": _payout(
            live_wallet,
            "po_20261121_recon_next_day",
            "100.00",
            PayoutStatus.SUCCESSFUL,
            dispatched_at=datetime(2026, 11, 20, 23, 0, tzinfo=UTC),  # 00:00 Lagos on the 21st
        ),
        "other_provider": _payout(
            live_wallet,
            "po_20261120_recon_sandbox",
            "100.00",
            PayoutStatus.SUCCESSFUL,
            provider_name="sandbox",
        ),
        "never_sent": _payout(
            live_wallet,
            "po_20261120_recon_never_sent",
            "100.00",
            PayoutStatus.FAILED,
            dispatched_at=None,
        ),
    }


@pytest.fixture
def nip_payouts(live_wallet: Wallet) -> dict[str, Payout]:
    """Our side of ``nip_settlement_2026-11-20.csv``."""
    return {
        "ok": _payout(live_wallet, "po_20261120_nip_ok_01", "5000.00", PayoutStatus.SUCCESSFUL),
        "failed": _payout(
            live_wallet, "po_20261120_nip_failed_02", "2500.00", PayoutStatus.AMBIGUOUS
        ),
        "by_session": _payout(
            live_wallet,
            "po_20261120_nip_session_03",
            "10000.00",
            PayoutStatus.SUCCESSFUL,
            nip_session_id="999057261120100255000000000003",
        ),
    }


@pytest.fixture
def operator():
    return StaffUserFactory(username="operator", roles=["finance_operator"])


@pytest.fixture
def approver():
    return StaffUserFactory(username="approver", roles=["finance_approver"])


@pytest.fixture
def viewer():
    return StaffUserFactory(username="viewer", roles=["finance_viewer"])


@pytest.fixture
def ambiguous_payout(funded_wallet: Wallet, create_payout) -> Payout:  # noqa: F811
    """A real test-mode payout, reserved and dispatched through the services, now ambiguous."""
    payout = create_payout(
        account_number=ALWAYS_AMBIGUOUS_ACCOUNT, amount=Decimal("2500.00")
    ).payout
    payout_dispatch(payout_id=payout.pk)
    payout.refresh_from_db()
    assert payout.status == PayoutStatus.AMBIGUOUS
    return payout

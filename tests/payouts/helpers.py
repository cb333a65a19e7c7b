"""Helpers shared by the payout tests (fixtures are in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from itertools import count
from types import ModuleType
from typing import Any

import pytest

from payouts import services as payout_services
from payouts.models import Payout
from payouts.services import DispatchClaim, payouts_dispatch_claim
from tests.celery_worker import celery_client_reset as celery_client_reset
from wallets.models import Wallet
from wallets.selectors import wallet_totals
from wallets.services import wallet_fund

PAYOUTS_URL = "/api/v1/transactions/in/merchant-wallet/payouts"
GOOD_ACCOUNT = "0123456789"
GTB_CODE = "058"


def detail_url(payout_id: int) -> str:
    return f"{PAYOUTS_URL}/{payout_id}"


def requery_url(payout_id: int) -> str:
    return f"{PAYOUTS_URL}/{payout_id}/requery"


_sequence = count(1)


def fund_wallet(wallet: Wallet, amount: str) -> Wallet:
    wallet_fund(wallet_id=wallet.pk, amount=Decimal(amount), reference=f"FUND-{next(_sequence)}")
    wallet.refresh_from_db()
    return wallet


def new_idempotency_key() -> str:
    return f"idem-{next(_sequence)}"


def assert_wallet_balanced(wallet: Wallet) -> None:
    """Balances equal the sums of the ledger deltas and available + reserved + captured ==
    funded."""
    totals = wallet_totals(wallet=wallet)
    assert totals.available == totals.ledger_available
    assert totals.reserved == totals.ledger_reserved
    assert totals.available + totals.reserved + totals.captured == totals.funded


def reload(payout: Payout) -> Payout:
    return Payout.objects.get(pk=payout.pk)


def dispatch_claim(*, payout_id: int) -> DispatchClaim | None:
    """Claims one payout as a dispatch round of one would (``reserved`` → ``processing``, or a
    stale claim retaken), and sends nothing: a worker that dies right after its claim."""
    claims = payouts_dispatch_claim(limit=1, payout_ids=[payout_id], retake_stale=True)
    return claims[0] if claims else None


def provider_get_replace(monkeypatch: pytest.MonkeyPatch, get: Callable[[str], Any]) -> None:
    """Every payout service module that looks a provider up gets ``get`` instead."""
    for module in vars(payout_services).values():
        if isinstance(module, ModuleType) and hasattr(module, "provider_get"):
            monkeypatch.setattr(module, "provider_get", get)

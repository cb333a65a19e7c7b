"""Wallet writes. The wallet model and balance services are defined by the wallets module."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from merchants.models import Merchant


def wallets_create_for_merchant(*, merchant: Merchant) -> None:
    """Creates the merchant's test and live wallets (wallet models arrive with the ledger)."""

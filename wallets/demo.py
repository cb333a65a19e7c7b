"""Demo data for ``seed_demo``: the wallets part."""

from __future__ import annotations

from typing import Any

from merchants.models import Merchant


def demo_wallet_seed(*, merchant: Merchant) -> dict[str, Any]:
    """Funds the merchant's test wallet; returns the ``seed_demo --json`` keys it owns."""
    return {}

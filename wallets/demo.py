"""Demo data for ``seed_demo``: the wallets part."""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from core.money import format_amount
from merchants.models import Merchant, Mode
from wallets.models import FundingSource
from wallets.selectors import wallet_get
from wallets.services import funding_receive

DEMO_FUNDING_AMOUNT = Decimal("1000000.00")


def demo_wallet_seed(*, merchant: Merchant) -> dict[str, Any]:
    """Funds the merchant's test wallet; returns the ``seed_demo --json`` keys it owns."""
    wallet = wallet_get(merchant=merchant, mode=Mode.TEST)
    result = funding_receive(
        account_number=wallet.static_account_number,
        amount=DEMO_FUNDING_AMOUNT,
        reference=f"DEMO-FUND-{secrets.token_hex(8).upper()}",
        source=FundingSource.TEST_HELPER,
        sender_account_name="Demo Funding",
        narration="Demo wallet funding",
    )
    return {"wallet_available_balance": format_amount(result.wallet.available_balance)}

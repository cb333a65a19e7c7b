"""Settlement writes, one module per capability; callers import from the package.

| module | owns |
|---|---|
| ``platform`` | the platform merchant and its wallets (where subaccount shares wait) |
| ``run`` | a settlement run (claim, totals, deductions, credits, postings, event); every due run |
| ``shares`` | the shares' payouts (task, sweeper, re-send); postings at each payout's outcome |

Money moves only through ``wallets.services``; the platform ledger only through
``settlements.platform_ledger.platform_post``. When collections settle is
``settlements.schedule``; the event payload is ``settlements.events``.
"""

from settlements.services.platform import platform_merchant_get, platform_wallet_get
from settlements.services.run import (
    SETTLEMENT_ID_PREFIX,
    SettlementRunReport,
    settlement_id_generate,
    settlement_run,
    settlement_shares_pay_enqueue,
    settlements_due,
    settlements_run,
)
from settlements.services.shares import (
    RESEND_AUDIT_ACTION,
    RESEND_NOT_ALLOWED_MESSAGE,
    SHARE_IDEMPOTENCY_PREFIX,
    ShareSweepReport,
    settlement_share_pay,
    settlement_share_payout_resend,
    settlement_shares_pay,
    settlement_shares_sweep,
    share_idempotency_key,
    share_payout_returned_post,
    share_payouts_final_post,
)

__all__ = [
    "RESEND_AUDIT_ACTION",
    "RESEND_NOT_ALLOWED_MESSAGE",
    "SETTLEMENT_ID_PREFIX",
    "SHARE_IDEMPOTENCY_PREFIX",
    "SettlementRunReport",
    "ShareSweepReport",
    "platform_merchant_get",
    "platform_wallet_get",
    "settlement_id_generate",
    "settlement_run",
    "settlement_share_pay",
    "settlement_share_payout_resend",
    "settlement_shares_pay",
    "settlement_shares_pay_enqueue",
    "settlement_shares_sweep",
    "settlements_due",
    "settlements_run",
    "share_idempotency_key",
    "share_payout_returned_post",
    "share_payouts_final_post",
]

"""The races the service's correctness rests on, run again through PgBouncer in transaction
mode: the very tests of their own modules (imported, so one body serves both), each of their
threads on its own client connection, PgBouncer handing the transactions to at most
``pool_size`` server connections.

- concurrent reserves on one wallet (the row lock, the conditional update, with fundings);
- identical creates racing on one idempotency key, and creates racing for one balance;
- two dispatch claims at once (``FOR UPDATE SKIP LOCKED``);
- approve, cancel, the approval expiry and a dispatch round on one held payout."""

from __future__ import annotations

import pytest

from tests.payouts.test_concurrency import (
    test_concurrent_payouts_never_overdraw,
    test_identical_concurrent_requests_create_one_payout,
)
from tests.payouts.test_controls_races import (
    test_approve_cancel_expiry_and_dispatch_race_and_exactly_one_wins,
)
from tests.payouts.test_dispatch_round import test_two_concurrent_claims_take_disjoint_payouts
from tests.wallets.test_concurrency import (
    test_atomic_reservations_fundings_and_locked_reservations_interleave_without_loss,
    test_concurrent_atomic_reservations_never_overdraw,
    test_concurrent_reserves_never_overdraw,
    wallet,
)

# A private PgBouncer process; threads racing on real locks.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("through_pgbouncer"),
    pytest.mark.multiprocess,
    pytest.mark.slow,
]

__all__ = [
    "test_approve_cancel_expiry_and_dispatch_race_and_exactly_one_wins",
    "test_atomic_reservations_fundings_and_locked_reservations_interleave_without_loss",
    "test_concurrent_atomic_reservations_never_overdraw",
    "test_concurrent_payouts_never_overdraw",
    "test_concurrent_reserves_never_overdraw",
    "test_identical_concurrent_requests_create_one_payout",
    "test_two_concurrent_claims_take_disjoint_payouts",
    "wallet",
]

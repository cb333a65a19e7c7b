"""The SQL of a payout create: what runs before the wallet lock, and how briefly it is held."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.payouts.helpers import PAYOUTS_URL

pytestmark = pytest.mark.django_db


def _statements(captured: CaptureQueriesContext) -> list[str]:
    return [" ".join(query["sql"].split()) for query in captured.captured_queries]


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="row locks are PostgreSQL's: SQLite's IMMEDIATE transaction locks the file at BEGIN",
)
def test_create_locks_the_wallet_last_and_briefly(test_client, funded_wallet, payload) -> None:
    test_client.post(PAYOUTS_URL, payload(), format="json")  # warm the memos
    with CaptureQueriesContext(connection) as captured:
        response = test_client.post(PAYOUTS_URL, payload(), format="json")
    assert response.status_code == 202
    statements = _statements(captured)
    lock = next(i for i, sql in enumerate(statements) if sql.endswith("FOR UPDATE"))
    insert = next(
        i for i, sql in enumerate(statements) if sql.startswith('INSERT INTO "payouts_payout"')
    )
    assert insert < lock, "the payout row is written before the wallet lock is taken"
    held = [sql for sql in statements[lock + 1 :] if not sql.startswith(("RELEASE", "COMMIT"))]
    assert [sql.split(" ")[0:3] for sql in held] == [
        ["UPDATE", '"wallets_wallet"', "SET"],
        ["INSERT", "INTO", '"wallets_ledgerentry"'],
    ]
    before_lock = statements[:insert]
    # key, wallet, idempotency check; banks and fee tiers come from process memory
    assert [sql for sql in before_lock if sql.startswith("SELECT")] == before_lock[:3]
    assert not any("wallets_bank" in sql or "wallets_feetier" in sql for sql in statements)


def test_create_and_replay_query_counts(
    test_client, funded_wallet, payload, django_assert_num_queries
) -> None:
    body = payload()
    test_client.post(PAYOUTS_URL, payload(), format="json")  # warm the memos
    # key, wallet, key check, savepoint, insert, lock, balance, ledger, release
    with django_assert_num_queries(9):
        assert test_client.post(PAYOUTS_URL, body, format="json").status_code == 202
    with django_assert_num_queries(3):  # key, wallet, the earlier payout; no lock
        replay = test_client.post(PAYOUTS_URL, body, format="json")
    assert replay.json()["data"]["duplicate"] is True

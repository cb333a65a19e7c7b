"""The SQL of a payout create: what runs before the wallet is locked, and how briefly the lock is
held."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.payouts.helpers import PAYOUTS_URL

pytestmark = pytest.mark.django_db


def _statements(captured: CaptureQueriesContext) -> list[str]:
    return [" ".join(query["sql"].split()) for query in captured.captured_queries]


def test_create_locks_the_wallet_last_and_briefly(test_client, funded_wallet, payload) -> None:
    test_client.post(PAYOUTS_URL, payload(), format="json")  # warm the memos
    with CaptureQueriesContext(connection) as captured:
        response = test_client.post(PAYOUTS_URL, payload(), format="json")
    assert response.status_code == 202
    statements = _statements(captured)
    assert not any(sql.endswith("FOR UPDATE") for sql in statements)
    insert = next(
        i for i, sql in enumerate(statements) if sql.startswith('INSERT INTO "payouts_payout"')
    )
    # The reservation's conditional update takes the wallet's row lock, after the payout insert.
    lock = next(i for i, sql in enumerate(statements) if sql.startswith('UPDATE "wallets_wallet"'))
    assert insert < lock, "the payout row is written before the wallet lock is taken"
    assert " WHERE " in statements[lock] and " RETURNING " in statements[lock]
    held = [sql for sql in statements[lock + 1 :] if not sql.startswith(("RELEASE", "COMMIT"))]
    assert [sql.split(" ")[0:3] for sql in held] == [["INSERT", "INTO", '"wallets_ledgerentry"']]
    before_lock = statements[:insert]
    # the key with its merchant and wallet, the idempotency check; banks and fee tiers come
    # from process memory
    assert [sql for sql in before_lock if sql.startswith("SELECT")] == before_lock[:2]
    assert '"merchants_secretkey"' in before_lock[0] and "wallets_wallet" in before_lock[0]
    assert '"payouts_payout"' in before_lock[1]
    assert not any("wallets_bank" in sql or "wallets_feetier" in sql for sql in statements)


def test_create_and_replay_query_counts(
    test_client, funded_wallet, payload, django_assert_num_queries
) -> None:
    body = payload()
    test_client.post(PAYOUTS_URL, payload(), format="json")  # warm the memos
    # key with merchant and wallet, key check, savepoint, insert, reserve (update … returning),
    # ledger entry, release
    with django_assert_num_queries(7):
        assert test_client.post(PAYOUTS_URL, body, format="json").status_code == 202
    with django_assert_num_queries(2):  # key with merchant and wallet, the earlier payout
        replay = test_client.post(PAYOUTS_URL, body, format="json")
    assert replay.json()["data"]["duplicate"] is True


def test_the_idempotency_lookup_reads_what_the_orm_reads(
    test_client, funded_wallet, payload
) -> None:
    from payouts.models import Payout
    from payouts.services.create import _earlier_payout

    keys = ["lookup-1", "lookup-2", "lookup 3 with spaces"]
    for key in keys:
        assert (
            test_client.post(PAYOUTS_URL, payload(idempotency_key=key), format="json").status_code
            == 202
        )
    for key in [*keys, "lookup-absent", "LOOKUP-1"]:
        ours = _earlier_payout(wallet_id=funded_wallet.pk, idempotency_key=key)
        theirs = Payout.objects.filter(wallet_id=funded_wallet.pk, idempotency_key=key).first()
        if theirs is None:
            assert ours is None
            continue
        assert isinstance(ours, Payout)
        assert not ours._state.adding and ours._state.db == theirs._state.db
        for field in Payout._meta.concrete_fields:
            mine, expected = getattr(ours, field.attname), getattr(theirs, field.attname)
            assert mine == expected, field.name
            assert type(mine) is type(expected), field.name
    # the key is the wallet's own: another wallet has no payout under it
    assert _earlier_payout(wallet_id=funded_wallet.pk + 1, idempotency_key="lookup-1") is None

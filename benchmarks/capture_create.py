"""Captures the SQL one payout create sends (through the real view stack, on the bench database)
and turns it into a pgbench custom script for M1.

Run inside the benchmark's environment (``DJANGO_SETTINGS_MODULE=benchmarks.bench_settings``,
``DATABASE_URL`` on the bench database)::

    python -m benchmarks.capture_create --merchant 777 --salt <salt> --out create.sql

The statements are replayed as captured; only the values that must vary per transaction are
replaced by pgbench variables: the merchant/wallet (``:i``, random over the same spread as the
HTTP run), the idempotency key and internal reference (unique per transaction), the secret key's
hash (computed by PostgreSQL from ``:i``), the ledger entry's balance-after snapshots (the
balances the wallet's conditional update returns, ``RETURNING … \\gset``) and the new payout's
id (``RETURNING … \\gset``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from decimal import Decimal
from pathlib import Path

import django

from core.money import minor_units_from_decimal

PAYOUTS_PATH = "/api/v1/transactions/in/merchant-wallet/payouts"


class CaptureError(RuntimeError):
    """The ORM's SQL no longer has the shape this script knows how to parametrise."""


def _replace(statement: str, old: str, new: str, *, what: str, regex: bool = False) -> str:
    result, count = (
        re.subn(old, new, statement)
        if regex
        else (statement.replace(old, new), statement.count(old))
    )
    if count == 0:
        raise CaptureError(f"could not find {what} in: {statement[:200]}…")
    return result


def build_script(
    statements: list[str],
    *,
    merchant_id: int,
    wallet_id: int,
    key_hash: str,
    salt: str,
    idempotency_key: str,
    internal_reference: str,
    payout_id: int,
    balances_before: tuple[Decimal, Decimal],
    total_debit: Decimal,
    wallets: int,
) -> str:
    """The pgbench script for one create, from the statements the ORM sent."""
    if merchant_id != wallet_id:
        raise CaptureError("the bench data gives test wallet i to merchant i")
    # The columns hold integer kobo, so the captured SQL carries kobo too.
    available, reserved = (minor_units_from_decimal(balance) for balance in balances_before)
    debit = minor_units_from_decimal(total_debit)
    available_after, reserved_after = str(available - debit), str(reserved + debit)
    balances_returned = False
    ident = rf"\b{wallet_id}\b"
    lines = [
        "-- M1: the SQL of one payout create, captured from the ORM (benchmarks/capture_create.py)",
        rf"\set i random(1, {wallets})",
        r"\set r random(1, 1000000000000)",
    ]
    in_transaction = False
    for raw in statements:
        sql = " ".join(raw.split())
        upper = sql.upper()
        if upper in ("BEGIN", "COMMIT", "ROLLBACK"):
            in_transaction = upper == "BEGIN"
            lines.append(f"{upper};")
            continue
        sql = sql.replace(
            f"'{key_hash}'",
            f"encode(sha256(convert_to('sk_test_bench_' || :i || '_{salt}', 'UTF8')), 'hex')",
        )
        sql = sql.replace(f"'{idempotency_key}'", "'pgb-:client_id-:r'")
        sql = sql.replace(f"'{internal_reference}'", "'pgbr-:client_id-:r'")
        sql = re.sub(rf'("merchant_id" = ){ident}', r"\1:i", sql)
        sql = re.sub(rf'("wallet_id" = ){ident}', r"\1:i", sql)
        sql = re.sub(rf'("wallets_wallet"\."id" = ){ident}', r"\1:i", sql)
        suffix = ";"
        if upper.startswith('INSERT INTO "PAYOUTS_PAYOUT"'):
            sql = _replace(
                sql,
                rf"VALUES \({wallet_id}, {merchant_id},",
                "VALUES (:i, :i,",
                what="the payout's wallet and merchant",
                regex=True,
            )
            if not sql.endswith('RETURNING "payouts_payout"."id"'):
                raise CaptureError(f"the payout insert no longer returns its id: {sql[-80:]}")
            suffix = r" \gset p_"
        elif upper.startswith('UPDATE "WALLETS_WALLET"'):
            # The reservation: one conditional update (it takes the row lock) that returns the
            # balances it left; pgbench keeps them for the ledger entry.
            if not (
                " RETURNING " in upper
                and f'"available_balance" = "available_balance" - {debit}' in sql
                and f'"available_balance" >= {debit}' in sql
            ):
                raise CaptureError(f"the reservation is no longer one conditional update: {sql}")
            sql = _replace(
                sql, rf'(WHERE "id" = ){ident}', r"\1:i", what="the wallet's id", regex=True
            )
            balances_returned = True
            suffix = r" \gset w_"
        elif upper.startswith('INSERT INTO "WALLETS_LEDGERENTRY"'):
            if not balances_returned:
                raise CaptureError("the ledger entry came before the wallet's reservation")
            sql = _replace(
                sql, rf"VALUES \({wallet_id},", "VALUES (:i,", what="the entry's wallet", regex=True
            )
            sql = _replace(
                sql,
                f" {available_after}, {reserved_after},",
                " :w_available_balance, :w_reserved_balance,",
                what="the balance-after snapshots",
            )
            sql = _replace(sql, rf", {payout_id}, ", ", :p_id, ", what="the payout id", regex=True)
        leftover = re.search(rf"(= |\(){ident}", sql)
        if leftover or key_hash in sql or idempotency_key in sql or internal_reference in sql:
            raise CaptureError(f"a per-request value was left in: {sql[:300]}…")
        lines.append(sql + suffix)
    if in_transaction:
        raise CaptureError("the captured create left a transaction open")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--merchant", type=int, required=True)
    parser.add_argument("--salt", required=True)
    parser.add_argument("--wallets", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--info", type=Path, required=True, help="JSON facts about the capture")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")
    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from payouts.models import Payout
    from wallets.models import Wallet

    key = f"sk_test_bench_{args.merchant}_{args.salt}"
    from merchants.keys import secret_key_hash

    client = Client(HTTP_HOST="127.0.0.1")  # an allowed host under production settings
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def body(idempotency_key: str) -> dict[str, str]:
        return {
            "account_number": "0123456789",
            "bank_code": "058",
            "amount": "100.00",
            "narration": "bench",
            "idempotency_key": idempotency_key,
        }

    def post(idempotency_key: str) -> dict:
        response = client.post(
            PAYOUTS_PATH, body(idempotency_key), content_type="application/json", **headers
        )
        if response.status_code != 202:
            raise CaptureError(f"create answered {response.status_code}: {response.content!r}")
        return response.json()["data"]

    tag = f"capture-{int(time.time())}"
    post(f"{tag}-warm")  # warms the bank cache and the connection
    wallet = Wallet.objects.get(merchant_id=args.merchant, mode="test")
    before = (wallet.available_balance, wallet.reserved_balance)
    with CaptureQueriesContext(connection) as create_queries:
        data = post(f"{tag}-create")
    with CaptureQueriesContext(connection) as replay_queries:
        replay = post(f"{tag}-create")
    if not replay["duplicate"]:
        raise CaptureError("the replayed create was not answered as a duplicate")
    payout = Payout.objects.get(pk=data["payout"]["id"])
    statements = [query["sql"] for query in create_queries.captured_queries]
    script = build_script(
        statements,
        merchant_id=args.merchant,
        wallet_id=wallet.pk,
        key_hash=secret_key_hash(key),
        salt=args.salt,
        idempotency_key=f"{tag}-create",
        internal_reference=payout.internal_reference,
        payout_id=payout.pk,
        balances_before=before,
        total_debit=payout.total_debit_amount,
        wallets=args.wallets,
    )
    args.out.write_text(script)
    in_transaction = 0
    inside = False
    for statement in statements:
        if statement.upper() == "BEGIN":
            inside = True
        elif statement.upper() in ("COMMIT", "ROLLBACK"):
            inside = False
        elif inside:
            in_transaction += 1
    args.info.write_text(
        json.dumps(
            {
                "create_queries": len(statements),
                "create_queries_in_transaction": in_transaction,
                "replay_queries": len(replay_queries.captured_queries),
                "replay_locks_wallet": any(
                    "FOR UPDATE" in query["sql"]
                    or query["sql"].startswith('UPDATE "wallets_wallet"')
                    for query in replay_queries.captured_queries
                ),
                "create_sql": statements,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CaptureError as error:
        print(f"capture_create: {error}", file=sys.stderr)
        sys.exit(2)

from __future__ import annotations

from functools import cache
from typing import cast

from django.db import connections, router

from core.db import ModelRow
from merchants.keys import secret_key_hash
from merchants.models import Merchant, SecretKey


@cache
def _active_key_rows() -> tuple[ModelRow, ModelRow, ModelRow]:
    """The key, its merchant and the merchant's wallet of the key's mode (``Wallet``, reached
    through the reverse of ``Wallet.merchant``, so this app imports nothing of wallets)."""
    wallet_model = Merchant._meta.get_field("wallets").related_model
    return ModelRow(SecretKey, "k"), ModelRow(Merchant, "m"), ModelRow(wallet_model, "w")


@cache
def _active_key_sql(alias: str) -> str:
    key, merchant, wallet = _active_key_rows()
    connection = connections[alias]
    quote = connection.ops.quote_name
    tables = {row.alias: quote(row.model._meta.db_table) for row in (key, merchant, wallet)}
    return (
        f"SELECT {key.columns(connection)}, {merchant.columns(connection)}, "  # noqa: S608
        f"{wallet.columns(connection)} "
        f"FROM {tables['k']} k "
        f"INNER JOIN {tables['m']} m ON m.id = k.merchant_id "
        f"LEFT OUTER JOIN {tables['w']} w ON w.merchant_id = k.merchant_id AND w.mode = k.mode "
        "WHERE k.key_hash = %s AND k.revoked_at IS NULL AND m.is_active"
    )


def secret_key_get_active(*, plaintext: str) -> SecretKey | None:
    """The active key with this plaintext and its active merchant, in one query.

    The same query brings the merchant's wallet of the key's mode as ``key.wallet`` (a
    ``wallets.models.Wallet``; None if the merchant has none), so a route that works on that
    wallet need not read it again. Every request with a key runs it, so its statement is
    written once per database by hand (``core.db.ModelRow``): the ORM's join with a filtered
    relation took milliseconds to compile, many times the database's own time. The key hash
    is unique: at most one row.
    """
    if not plaintext.startswith(("sk_test_", "sk_live_")) or len(plaintext) > 200:
        return None
    alias = router.db_for_read(SecretKey)
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(_active_key_sql(alias), [secret_key_hash(plaintext)])
        row = cursor.fetchone()
    if row is None:
        return None
    key_row, merchant_row, wallet_row = _active_key_rows()
    merchant_start = len(key_row)
    wallet_start = merchant_start + len(merchant_row)
    key = cast(SecretKey, key_row.instance(row[:merchant_start], connection))
    # An inner join: the merchant's columns are never all NULL.
    key.merchant = cast(
        Merchant, merchant_row.instance(row[merchant_start:wallet_start], connection)
    )
    key.wallet = wallet_row.instance(row[wallet_start:], connection)
    return key

"""Merchant reads: the active key a request authenticates with, its merchant and the wallet of
its mode, in one hand-written query (docs/architecture.md, "Where the ORM is bypassed"); a
merchant's keys of one mode, for the keys routes; the webhook settings a merchant reads back
(never a secret)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import cast

from django.db import connections, router
from django.db.models import BooleanField, ExpressionWrapper, Model, Q, QuerySet
from django.utils import timezone

from core.db import ModelRow, quoted_column, quoted_table
from core.exceptions import NotFoundError
from merchants.keys import KEY_STARTS, secret_key_hash
from merchants.models import Merchant, SecretKey, WebhookSettings


@dataclass(frozen=True)
class ActiveKey:
    """An active key (secret or restricted) as a request authenticates with it: the key, its
    merchant and the merchant's wallet of the key's mode (None if the merchant has none). DRF's
    ``request.auth``; ``pk``, ``mode`` and ``scopes`` are the key's, so what reads a key's id
    (which key made a request: ``core.api.base.MerchantApi.key_id``), mode or scopes reads them
    here too."""

    key: SecretKey
    merchant: Merchant
    # A wallets.models.Wallet, typed as its base: merchants sits below wallets and imports
    # nothing of it (the wallet is reached through the reverse of Wallet.merchant).
    wallet: Model | None

    @property
    def pk(self) -> int:
        return int(self.key.pk)

    @property
    def mode(self) -> str:
        return str(self.key.mode)

    @property
    def scopes(self) -> frozenset[str]:
        """What the key may do: every scope for a secret key."""
        return self.key.scope_set

    def has_scope(self, scope: str) -> bool:
        return scope in self.key.scope_set


@cache
def _active_key_rows() -> tuple[ModelRow, ModelRow, ModelRow]:
    """The key, its merchant and the merchant's wallet of the key's mode (``Wallet``, reached
    through the reverse of ``Wallet.merchant``, so this app imports nothing of wallets)."""
    wallet_model = Merchant._meta.get_field("wallets").related_model
    return ModelRow(SecretKey, "k"), ModelRow(Merchant, "m"), ModelRow(wallet_model, "w")


@cache
def _active_key_sql(alias: str) -> str:
    """The lookup's text, every table and column named from the models' metadata; one
    parameters, the key's hash and the time now (a key past its ``expires_at`` answers nothing,
    like a revoked one)."""
    key, merchant, wallet = _active_key_rows()
    connection = connections[alias]
    wallet_model = wallet.model

    def k(name: str) -> str:
        return "k." + quoted_column(SecretKey, name, connection)

    def m(name: str) -> str:
        return "m." + quoted_column(Merchant, name, connection)

    def w(name: str) -> str:
        return "w." + quoted_column(wallet_model, name, connection)

    return (
        f"SELECT {key.columns(connection)}, {merchant.columns(connection)}, "  # noqa: S608
        f"{wallet.columns(connection)} "
        f"FROM {quoted_table(SecretKey, connection)} k "
        f"INNER JOIN {quoted_table(Merchant, connection)} m ON {m('id')} = {k('merchant')} "
        f"LEFT OUTER JOIN {quoted_table(wallet_model, connection)} w "
        f"ON {w('merchant')} = {k('merchant')} AND {w('mode')} = {k('mode')} "
        f"WHERE {k('key_hash')} = %s AND {k('revoked_at')} IS NULL "
        f"AND ({k('expires_at')} IS NULL OR {k('expires_at')} > %s) AND {m('is_active')}"
    )


def secret_key_get_active(*, plaintext: str) -> ActiveKey | None:
    """The active key (neither revoked nor expired) with this plaintext, its active merchant
    and the merchant's wallet of the key's mode (a ``wallets.models.Wallet``; None if the
    merchant has none), in one query, so a route that works on that wallet need not read it
    again.

    Every request with a key runs it, so its statement is written once per database by hand
    (``core.db.ModelRow``): the ORM's join with a filtered relation took milliseconds to
    compile, many times the database's own time. The key hash is unique: at most one row.
    """
    if not plaintext.startswith(KEY_STARTS) or len(plaintext) > 200:
        return None
    alias = router.db_for_read(SecretKey)
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(_active_key_sql(alias), [secret_key_hash(plaintext), timezone.now()])
        row = cursor.fetchone()
    if row is None:
        return None
    key_row, merchant_row, wallet_row = _active_key_rows()
    merchant_start = len(key_row)
    wallet_start = merchant_start + len(merchant_row)
    key = cast(SecretKey, key_row.instance(row[:merchant_start], connection))
    merchant = cast(Merchant, merchant_row.instance(row[merchant_start:wallet_start], connection))
    key.merchant = merchant  # the relation's cache: key.merchant reads no row again
    wallet = wallet_row.instance(row[wallet_start:], connection)
    return ActiveKey(key=key, merchant=merchant, wallet=wallet)


def _active_now() -> Q:
    return Q(revoked_at__isnull=True) & (
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
    )


def key_list(*, merchant: Merchant, mode: str) -> QuerySet[SecretKey]:
    """The merchant's keys of ``mode`` that still answer (neither revoked nor expired), secret
    and restricted, newest first."""
    return SecretKey.objects.filter(_active_now(), merchant=merchant, mode=mode).order_by(
        "-created_at", "-pk"
    )


def key_get(*, merchant: Merchant, mode: str, key_id: int) -> SecretKey:
    """One of the merchant's keys of ``mode`` that still answers; another merchant's, the other
    mode's, a revoked or an expired key is 404."""
    key = key_list(merchant=merchant, mode=mode).filter(pk=key_id).first()
    if key is None:
        raise NotFoundError("Key not found")
    return key


@dataclass(frozen=True)
class WebhookSettingsView:
    """The merchant's webhook settings for a mode as the merchant reads them: never a secret,
    only whether one is set and, during a rotation overlap, when the previous one stops
    signing."""

    mode: str
    url: str
    secret_set: bool
    previous_secret_expires_at: datetime | None
    updated_at: datetime | None


def webhook_settings_view_get(
    *, merchant: Merchant, mode: str, now: datetime
) -> WebhookSettingsView:
    """The settings of ``mode`` (empty ones before the first are saved), read without
    decrypting any secret."""
    row = (
        WebhookSettings.objects.filter(merchant=merchant, mode=mode)
        .annotate(secret_set=ExpressionWrapper(~Q(secret=""), output_field=BooleanField()))
        .values("url", "secret_set", "previous_secret_expires_at", "updated_at")
        .first()
    )
    if row is None:
        return WebhookSettingsView(
            mode=mode, url="", secret_set=False, previous_secret_expires_at=None, updated_at=None
        )
    expires_at = row["previous_secret_expires_at"]
    return WebhookSettingsView(
        mode=mode,
        url=row["url"],
        secret_set=bool(row["secret_set"]),
        previous_secret_expires_at=expires_at if expires_at and expires_at > now else None,
        updated_at=row["updated_at"],
    )

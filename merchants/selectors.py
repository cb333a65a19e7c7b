from __future__ import annotations

from django.db.models import F, FilteredRelation, Q

from merchants.keys import secret_key_hash
from merchants.models import SecretKey


def secret_key_get_active(*, plaintext: str) -> SecretKey | None:
    """The active key with this plaintext and its active merchant, in one query.

    The same query brings the merchant's wallet of the key's mode as ``key.wallet`` (a
    ``wallets.models.Wallet``, joined through ``merchant.wallets``, the reverse of
    ``Wallet.merchant``; None if the merchant has none), so a route that works on that wallet
    need not read it again.
    """
    if not plaintext.startswith(("sk_test_", "sk_live_")) or len(plaintext) > 200:
        return None
    keys = (
        SecretKey.objects.annotate(
            wallet=FilteredRelation(
                "merchant__wallets", condition=Q(merchant__wallets__mode=F("mode"))
            )
        )
        .select_related("merchant", "wallet")
        .filter(
            key_hash=secret_key_hash(plaintext),
            revoked_at__isnull=True,
            merchant__is_active=True,
        )
    )
    # The hash is unique: at most one row, so no order to ask for.
    key = next(iter(keys.order_by()[:1]), None)
    if key is not None and not hasattr(key, "wallet"):
        key.wallet = None  # the join found no wallet of the key's mode
    return key

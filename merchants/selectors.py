from __future__ import annotations

from merchants.keys import secret_key_hash
from merchants.models import SecretKey


def secret_key_get_active(*, plaintext: str) -> SecretKey | None:
    """The active key with this plaintext and its active merchant, in one query."""
    if not plaintext.startswith(("sk_test_", "sk_live_")) or len(plaintext) > 200:
        return None
    return (
        SecretKey.objects.select_related("merchant")
        .filter(
            key_hash=secret_key_hash(plaintext),
            revoked_at__isnull=True,
            merchant__is_active=True,
        )
        .first()
    )

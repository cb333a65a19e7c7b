"""Merchant writes: creation, key issuance and rotation (by staff), the merchant's own key
controls (rolling the secret key with an expiry, creating and revoking restricted keys), webhook
settings (the URL, the signing secret and its rotation overlap), and the rotation of the key that
encrypts webhook secrets at rest."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils import timezone

from audit.services import audit_record
from core.crypto import EncryptionKeyError, encryption_keys_parse
from core.exceptions import ApplicationError, ConflictError
from core.fields import (
    EncryptedFieldRotation,
    encrypted_field_count,
    encrypted_field_rotate,
    encrypted_fields,
)
from core.ssrf import UnsafeURLError, url_check_public
from merchants.keys import (
    secret_key_generate,
    secret_key_hash,
    secret_key_prefix,
    webhook_secret_generate,
)
from merchants.models import KeyKind, Merchant, Mode, SecretKey, WebhookSettings
from merchants.scopes import Scope, scopes_missing
from merchants.selectors import key_get
from merchants.signals import merchant_created

if TYPE_CHECKING:
    from django.http import HttpRequest

logger = logging.getLogger(__name__)

# The longest a rotated webhook secret may keep signing beside the new one.
WEBHOOK_SECRET_OVERLAP_MAX_HOURS = 72
WEBHOOK_SETTINGS_SET_ACTION = "merchants.webhooksettings.set"
WEBHOOK_SECRET_ROTATE_ACTION = "merchants.webhooksettings.rotate_webhook_secret"  # noqa: S105


@dataclass(frozen=True)
class IssuedKey:
    """A freshly issued key; ``plaintext`` exists only here and is never stored."""

    secret_key: SecretKey
    plaintext: str


@dataclass(frozen=True)
class MerchantCreated:
    merchant: Merchant
    test_key: IssuedKey
    live_key: IssuedKey


PLATFORM_HAS_NO_KEYS_MESSAGE = "The platform merchant has no secret keys"


def secret_key_issue(*, merchant: Merchant, mode: str) -> IssuedKey:
    """Issues a key of ``mode``; never for the platform merchant, which must not reach the API."""
    if merchant.is_platform:
        raise ApplicationError(PLATFORM_HAS_NO_KEYS_MESSAGE)
    plaintext = secret_key_generate(mode=mode)
    secret_key = SecretKey.objects.create(
        merchant=merchant,
        mode=mode,
        key_hash=secret_key_hash(plaintext),
        prefix=secret_key_prefix(plaintext),
    )
    return IssuedKey(secret_key=secret_key, plaintext=plaintext)


@transaction.atomic
def merchant_create(*, name: str, email: str) -> MerchantCreated:
    """Creates the merchant with a test and a live key; ``merchant_created`` has the wallets app
    open a wallet per mode in the same transaction."""
    merchant = Merchant.objects.create(name=name, email=email)
    test_key = secret_key_issue(merchant=merchant, mode=Mode.TEST)
    live_key = secret_key_issue(merchant=merchant, mode=Mode.LIVE)
    merchant_created.send(sender=Merchant, merchant=merchant)
    return MerchantCreated(merchant=merchant, test_key=test_key, live_key=live_key)


@transaction.atomic
def secret_key_rotate(*, merchant: Merchant, mode: str) -> IssuedKey:
    """Revokes every secret key of this mode the merchant holds (the current one and any rolled
    one still answering) and issues a new one. Restricted keys are left as they are: each is
    revoked on its own (``key_revoke``, or the admin)."""
    Merchant.objects.select_for_update().get(pk=merchant.pk)
    SecretKey.objects.filter(
        merchant=merchant, mode=mode, kind=KeyKind.SECRET, revoked_at__isnull=True
    ).update(revoked_at=timezone.now())
    return secret_key_issue(merchant=merchant, mode=mode)


@transaction.atomic
def secret_key_rotate_recorded(
    *,
    merchant: Merchant,
    mode: str,
    actor: Any,
    reason: str,
    request: HttpRequest | None = None,
) -> IssuedKey:
    """``secret_key_rotate``, written to the audit trail with the old and new key prefixes (never
    the keys) by ``actor`` (a user, or a command-line label) for ``reason``."""
    previous = (
        SecretKey.objects.filter(
            merchant=merchant,
            mode=mode,
            kind=KeyKind.SECRET,
            revoked_at__isnull=True,
            expires_at__isnull=True,
        )
        .values_list("prefix", flat=True)
        .first()
    )
    issued = secret_key_rotate(merchant=merchant, mode=mode)
    audit_record(
        actor=actor,
        action="merchants.merchant.rotate_secret_key",
        obj=merchant,
        before={"mode": mode, "key_prefix": previous},
        after={"mode": mode, "key_prefix": issued.secret_key.prefix},
        reason=reason,
        request=request,
    )
    return issued


# --- The merchant's own key controls (the keys routes) --------------------------------------

ROLL_MAX_EXPIRES_IN_HOURS = 168
ROLL_DEFAULT_EXPIRES_IN_HOURS = 24
# Keys of one mode that may answer at once (the current secret key, rolled ones and restricted
# ones): enough for any integration, and a bound on what a leaked key-managing key can mint.
MAX_ACTIVE_KEYS_PER_MODE = 50


def key_actor(key: SecretKey) -> str:
    """How the audit trail names an act made through the API: by the key's prefix, never the
    key."""
    return f"API key {key.prefix}… of merchant #{key.merchant_id}"


@dataclass(frozen=True)
class KeyRolled:
    """A roll's outcome: the new current secret key (``plaintext`` shown once) and the rolled
    key, which answers until its ``expires_at``."""

    issued: IssuedKey
    rolled: SecretKey


@transaction.atomic
def secret_key_roll(
    *,
    calling_key: SecretKey,
    expires_in_hours: int = ROLL_DEFAULT_EXPIRES_IN_HOURS,
    request: HttpRequest | None = None,
) -> KeyRolled:
    """Issues a new secret key of the calling key's mode and gives the calling key an expiry
    ``expires_in_hours`` from now (0: at once), until when both answer.

    Only the current secret key (not revoked, no expiry yet) rolls: a restricted key is refused
    (403), a key already rolled is refused (409), so concurrent rolls of one key make exactly
    one new key. The merchant row is locked first; the unique constraint
    ``one_current_secret_key_per_merchant_mode`` backs the rule that at most one secret key per
    mode has no expiry."""
    if calling_key.kind != KeyKind.SECRET:
        raise ApplicationError("Only a secret key can roll; this key is restricted", status=403)
    if not 0 <= expires_in_hours <= ROLL_MAX_EXPIRES_IN_HOURS:
        raise ApplicationError(
            f"expires_in_hours: must be between 0 and {ROLL_MAX_EXPIRES_IN_HOURS}"
        )
    merchant = Merchant.objects.select_for_update().get(pk=calling_key.merchant_id)
    current = (
        SecretKey.objects.select_for_update()
        .filter(
            pk=calling_key.pk,
            kind=KeyKind.SECRET,
            revoked_at__isnull=True,
            expires_at__isnull=True,
        )
        .first()
    )
    if current is None:
        raise ConflictError("This key has already been rolled; roll with the current secret key")
    current.expires_at = timezone.now() + timedelta(hours=expires_in_hours)
    current.save(update_fields=["expires_at"])
    issued = secret_key_issue(merchant=merchant, mode=current.mode)
    audit_record(
        actor=key_actor(calling_key),
        action="merchants.secretkey.roll",
        obj=current,
        before={"mode": current.mode, "key_prefix": current.prefix, "expires_at": None},
        after={
            "mode": current.mode,
            "key_prefix": current.prefix,
            "expires_at": current.expires_at,
            "new_key_prefix": issued.secret_key.prefix,
        },
        request=request,
    )
    return KeyRolled(issued=issued, rolled=current)


def _scopes_checked(scopes: Iterable[str]) -> list[str]:
    wanted = list(dict.fromkeys(scopes))
    unknown = [scope for scope in wanted if scope not in Scope.values]
    if unknown:
        raise ApplicationError(f"scopes: unknown scope {', '.join(unknown)}")
    if not wanted:
        raise ApplicationError("scopes: name at least one scope")
    return [scope for scope in Scope.values if scope in wanted]


@transaction.atomic
def restricted_key_create(
    *,
    calling_key: SecretKey,
    name: str,
    scopes: Iterable[str],
    request: HttpRequest | None = None,
) -> IssuedKey:
    """Issues a restricted key (``rk_<mode>_…``, shown once) of the calling key's merchant and
    mode, holding ``scopes``. A key never grants a scope it does not hold itself (403 naming
    the scopes), so a restricted key cannot make a wider one."""
    wanted = _scopes_checked(scopes)
    missing = scopes_missing(held=calling_key.scope_set, wanted=wanted)
    if missing:
        raise ApplicationError(
            f"scopes: this key cannot grant scopes it does not hold: {', '.join(missing)}",
            status=403,
        )
    merchant = Merchant.objects.select_for_update().get(pk=calling_key.merchant_id)
    if merchant.is_platform:
        raise ApplicationError(PLATFORM_HAS_NO_KEYS_MESSAGE)
    mode = calling_key.mode
    now = timezone.now()
    answering = (
        SecretKey.objects.filter(merchant=merchant, mode=mode, revoked_at__isnull=True)
        .exclude(expires_at__lte=now)
        .count()
    )
    if answering >= MAX_ACTIVE_KEYS_PER_MODE:
        raise ConflictError(
            f"This merchant already has {MAX_ACTIVE_KEYS_PER_MODE} {mode} keys; revoke one first"
        )
    plaintext = secret_key_generate(mode=mode, restricted=True)
    key = SecretKey.objects.create(
        merchant=merchant,
        mode=mode,
        kind=KeyKind.RESTRICTED,
        name=name,
        scopes=wanted,
        key_hash=secret_key_hash(plaintext),
        prefix=secret_key_prefix(plaintext),
    )
    audit_record(
        actor=key_actor(calling_key),
        action="merchants.secretkey.create_restricted",
        obj=key,
        after={"mode": mode, "name": name, "key_prefix": key.prefix, "scopes": wanted},
        request=request,
    )
    return IssuedKey(secret_key=key, plaintext=plaintext)


@transaction.atomic
def key_revoke(
    *, calling_key: SecretKey, key_id: int, request: HttpRequest | None = None
) -> SecretKey:
    """Revokes one of the merchant's keys of the calling key's mode at once: a restricted key,
    or a rolled secret key before its expiry. Another merchant's or mode's key, or one already
    revoked or expired, is 404. Refused: the calling key itself and the current secret key (a
    roll replaces it), 409; a key holding a scope the calling key lacks, 403."""
    merchant = Merchant.objects.select_for_update().get(pk=calling_key.merchant_id)
    key = key_get(merchant=merchant, mode=calling_key.mode, key_id=key_id)
    if key.pk == calling_key.pk:
        raise ConflictError("A key cannot revoke itself; revoke it with another key")
    if key.kind == KeyKind.SECRET and key.expires_at is None:
        raise ConflictError(
            "The current secret key is not revoked but rolled (POST /api/v1/keys/roll)"
        )
    missing = scopes_missing(held=calling_key.scope_set, wanted=key.scope_set)
    if missing:
        raise ApplicationError(
            "This key cannot revoke a key holding scopes it does not hold: " + ", ".join(missing),
            status=403,
        )
    key.revoked_at = timezone.now()
    key.save(update_fields=["revoked_at"])
    audit_record(
        actor=key_actor(calling_key),
        action="merchants.secretkey.revoke",
        obj=key,
        before={"mode": key.mode, "key_prefix": key.prefix, "kind": key.kind, "revoked": False},
        after={"revoked_at": key.revoked_at},
        request=request,
    )
    return key


@transaction.atomic
def webhook_settings_set(
    *, merchant: Merchant, mode: str, url: str, rotate_secret: bool = False
) -> WebhookSettings:
    settings_row, created = WebhookSettings.objects.select_for_update().get_or_create(
        merchant=merchant, mode=mode
    )
    settings_row.url = url
    if created or rotate_secret or not settings_row.secret:
        settings_row.secret = webhook_secret_generate()
    settings_row.save()
    return settings_row


def webhook_secret_overlap_default() -> timedelta:
    """How long a rotated webhook secret keeps signing when the rotation does not say
    (``WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS``)."""
    return timedelta(hours=settings.WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS)


def _secret_stored_readable(settings_row: WebhookSettings) -> str:
    """The row's current secret as stored now, or ``""`` when it has none or no key of
    ``FIELD_ENCRYPTION_KEYS`` decrypts it (such a secret is replaced and not carried over)."""
    try:
        stored = (
            WebhookSettings.objects.filter(pk=settings_row.pk)
            .values_list("secret", flat=True)
            .first()
        )
    except EncryptionKeyError:
        logger.warning(
            "webhook settings %s: the secret being replaced cannot be decrypted; it stops "
            "signing at once",
            settings_row.pk,
        )
        return ""
    return stored or ""


@transaction.atomic
def webhook_secret_rotate(
    *,
    merchant: Merchant,
    mode: str,
    overlap: timedelta | None = None,
    now: datetime | None = None,
) -> WebhookSettings:
    """Issues a new webhook secret. The one it replaces keeps signing beside it (a second
    ``webhook-signature``) for ``overlap`` (default ``WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS``;
    zero: it stops at once), as ``previous_secret`` until ``previous_secret_expires_at``; a
    secret replaced earlier stops then. The old secret is read only to carry it over, and one
    that no key decrypts is dropped, so a secret whose encryption key is lost can be replaced
    too."""
    overlap = webhook_secret_overlap_default() if overlap is None else overlap
    if overlap < timedelta(0) or overlap > timedelta(hours=WEBHOOK_SECRET_OVERLAP_MAX_HOURS):
        raise ApplicationError(
            f"overlap_hours: must be between 0 and {WEBHOOK_SECRET_OVERLAP_MAX_HOURS}"
        )
    now = now or timezone.now()
    settings_row, _ = (
        WebhookSettings.objects.select_for_update()
        .defer("secret", "previous_secret")
        .get_or_create(merchant=merchant, mode=mode)
    )
    previous = _secret_stored_readable(settings_row) if overlap > timedelta(0) else ""
    settings_row.secret = webhook_secret_generate()
    settings_row.previous_secret = previous
    settings_row.previous_secret_expires_at = now + overlap if previous else None
    settings_row.save(
        update_fields=["secret", "previous_secret", "previous_secret_expires_at", "updated_at"]
    )
    return settings_row


def _webhook_settings_state(*, merchant: Merchant, mode: str) -> dict[str, Any] | None:
    """The URL and whether a secret is set (never the secret), for the audit trail; nothing is
    decrypted."""
    row = (
        WebhookSettings.objects.filter(merchant=merchant, mode=mode)
        .annotate(secret_set=ExpressionWrapper(~Q(secret=""), output_field=BooleanField()))
        .values("url", "secret_set")
        .first()
    )
    if row is None:
        return None
    return {"url": row["url"], "secret": "set" if row["secret_set"] else "unset"}


@dataclass(frozen=True)
class WebhookSettingsSaved:
    """Saved webhook settings; ``issued_secret`` is the secret this save generated (the first
    one of the mode), to be shown once, or ``""`` when the secret was kept."""

    settings: WebhookSettings
    issued_secret: str


def webhook_url_check(url: str) -> None:
    """A webhook URL must be empty (no webhooks) or pass ``core.ssrf``'s rule; 400 naming
    ``url`` otherwise."""
    if not url:
        return
    try:
        url_check_public(url)
    except UnsafeURLError as error:
        raise ApplicationError(f"url: this URL cannot receive webhooks: {error}") from error


@transaction.atomic
def webhook_settings_set_recorded(
    *,
    merchant: Merchant,
    mode: str,
    url: str,
    actor: Any,
    request: HttpRequest | None = None,
) -> WebhookSettingsSaved:
    """``webhook_settings_set`` for a URL that passes ``webhook_url_check``, written to the audit
    trail by ``actor`` with the URL before and after and the secret as "generated" or
    "unchanged" (never the secret)."""
    webhook_url_check(url)
    before = _webhook_settings_state(merchant=merchant, mode=mode)
    row = webhook_settings_set(merchant=merchant, mode=mode, url=url)
    generated = before is None or before["secret"] == "unset"  # noqa: S105
    audit_record(
        actor=actor,
        action=WEBHOOK_SETTINGS_SET_ACTION,
        obj=row,
        before=before,
        after={"url": row.url, "secret": "generated" if generated else "unchanged"},
        request=request,
    )
    return WebhookSettingsSaved(settings=row, issued_secret=row.secret if generated else "")


@transaction.atomic
def webhook_secret_rotate_recorded(
    *,
    merchant: Merchant,
    mode: str,
    actor: Any,
    overlap: timedelta | None = None,
    reason: str = "",
    request: HttpRequest | None = None,
) -> WebhookSettings:
    """``webhook_secret_rotate``, written to the audit trail by ``actor`` with when the
    replaced secret stops signing (never a secret)."""
    before = _webhook_settings_state(merchant=merchant, mode=mode)
    rotated = webhook_secret_rotate(merchant=merchant, mode=mode, overlap=overlap)
    audit_record(
        actor=actor,
        action=WEBHOOK_SECRET_ROTATE_ACTION,
        obj=rotated,
        before={"secret": before["secret"] if before is not None else "unset"},
        after={"secret": "rotated", "overlap_ends_at": rotated.previous_secret_expires_at},
        reason=reason,
        request=request,
    )
    return rotated


@dataclass(frozen=True)
class EncryptionKeysRotation:
    keys: int  # how many keys FIELD_ENCRYPTION_KEYS lists
    fields: list[EncryptedFieldRotation]

    @property
    def values(self) -> int:
        return sum(rotation.values for rotation in self.fields)

    @property
    def unreadable(self) -> int:
        return sum(len(rotation.unreadable) for rotation in self.fields)

    @property
    def cleared(self) -> int:
        return sum(len(rotation.cleared) for rotation in self.fields)


def _progress_after(
    progress: Callable[[int, int], None] | None, *, done_before: int, total: int
) -> Callable[[int], None] | None:
    """One field's ``progress(done)`` as the whole run's ``progress(done, total)``."""
    if progress is None:
        return None
    return lambda done: progress(done_before + done, max(total, done_before + done))


def encryption_keys_rotate(
    *,
    actor: str,
    progress: Callable[[int, int], None] | None = None,
    clear_unreadable: bool = False,
) -> EncryptionKeysRotation:
    """Re-encrypts every value stored encrypted (every ``EncryptedTextField``, the webhook
    secrets among them) under the first key of ``FIELD_ENCRYPTION_KEYS``, in locked batches
    that concurrent writes wait for; one audit record per field, with the counts and never a
    value. ``progress(done, total)`` after each batch. A value no listed key decrypts is left
    as it is and counted as unreadable: the old key must not be removed until there is none.
    ``clear_unreadable`` empties such values instead, for when their key is lost for good: a
    webhook secret so cleared is unset until a new one is issued (``webhook_secret_rotate``)."""
    fields = encrypted_fields()
    total = sum(encrypted_field_count(f.model, f.name) for f in fields)
    rotations: list[EncryptedFieldRotation] = []
    done_before = 0
    for model_field in fields:
        rotation = encrypted_field_rotate(
            model_field.model,
            model_field.name,
            progress=_progress_after(progress, done_before=done_before, total=total),
            clear_unreadable=clear_unreadable,
        )
        audit_record(
            actor=actor,
            action=f"{model_field.model._meta.label_lower}.encryption_keys_rotate",
            obj=model_field.model,
            after={**rotation.as_dict(), "unreadable": len(rotation.unreadable)},
            reason="stored values re-encrypted under the first key of FIELD_ENCRYPTION_KEYS",
        )
        rotations.append(rotation)
        done_before += rotation.values
    keys = len(encryption_keys_parse(getattr(settings, "FIELD_ENCRYPTION_KEYS", None)))
    return EncryptionKeysRotation(keys=keys, fields=rotations)

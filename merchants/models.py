"""Merchants, their secret keys (stored only as SHA-256 hashes) and webhook settings (the
signing secret encrypted at rest)."""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from core.fields import EncryptedTextField
from core.models import TimeStampedModel
from merchants.scopes import ALL_SCOPES, Scope


class Mode(models.TextChoices):
    """Test (sandbox) or live; it comes from the key and scopes every merchant-owned object."""

    TEST = "test", "Test"
    LIVE = "live", "Live"


class Merchant(TimeStampedModel):
    name = models.CharField(max_length=200)
    email = models.EmailField()
    is_active = models.BooleanField(default=True)
    # The one merchant that owns the platform's own wallets (where subaccount shares wait for
    # their payouts): made by ``settlements.services.platform_merchant_get``, never by a
    # person; it has no secret keys, so it can never call the API.
    is_platform = models.BooleanField(default=False, editable=False)

    class Meta:
        ordering = ["id"]
        permissions = [("rotate_secret_key", "Can rotate a merchant's secret keys")]
        constraints = [
            models.UniqueConstraint(
                fields=["is_platform"],
                condition=models.Q(is_platform=True),
                name="one_platform_merchant",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk})"

    # DRF treats ``request.user`` as the authenticated principal.
    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def is_anonymous(self) -> bool:
        return False


class KeyKind(models.TextChoices):
    """A secret key holds every scope; a restricted key only those it was created with."""

    SECRET = "secret", "Secret"
    RESTRICTED = "restricted", "Restricted"


class SecretKey(models.Model):
    """A merchant API key, secret (``sk_<mode>_…``) or restricted (``rk_<mode>_…``). The
    plaintext is shown once; only its hash is stored.

    A key answers until it is revoked (``revoked_at``) or its ``expires_at`` passes: a rolled
    secret key keeps answering until the expiry its roll gave it. A merchant has at most one
    current secret key per mode (not revoked, no expiry); rolled ones, which expire, and
    restricted keys sit beside it."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="secret_keys")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    kind = models.CharField(max_length=10, choices=KeyKind.choices, default=KeyKind.SECRET)
    name = models.CharField(max_length=100, blank=True, default="")
    # A restricted key's scopes (``merchants.scopes.Scope`` values); empty for a secret key,
    # which holds them all.
    scopes = ArrayField(
        models.CharField(max_length=32, choices=Scope.choices), default=list, blank=True
    )
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=16, editable=False, help_text="Visible start of the key")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Set by merchants.selectors' key lookup: the merchant's wallets.Wallet of the key's mode,
    # or None (this app imports nothing of wallets).
    wallet: Any

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "mode"],
                condition=models.Q(kind="secret", revoked_at__isnull=True, expires_at__isnull=True),
                name="one_current_secret_key_per_merchant_mode",
            ),
            models.CheckConstraint(
                condition=models.Q(kind="secret", scopes=[]) | models.Q(kind="restricted"),
                name="secret_key_holds_no_listed_scopes",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.mode})"

    @property
    def is_active(self) -> bool:
        """Neither revoked nor expired."""
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()

    @property
    def scope_set(self) -> frozenset[str]:
        """The scopes this key holds: every one for a secret key."""
        if self.kind == KeyKind.SECRET:
            return ALL_SCOPES
        return frozenset(self.scopes)


class WebhookSettings(TimeStampedModel):
    """Where and how the merchant receives signed webhooks, per mode.

    The secret must be readable to sign payloads, so it cannot be hashed: it is stored encrypted
    under ``FIELD_ENCRYPTION_KEYS`` (``core.fields.EncryptedTextField``) and reads back as
    plaintext. It is never shown in the admin or logs.

    After a rotation the secret it replaced keeps signing beside the new one until
    ``previous_secret_expires_at`` (the rotation overlap), encrypted the same way; past that
    instant nothing reads it and the next rotation overwrites it.
    """

    merchant = models.ForeignKey(
        Merchant, on_delete=models.CASCADE, related_name="webhook_settings"
    )
    mode = models.CharField(max_length=4, choices=Mode.choices)
    url = models.URLField(max_length=500, blank=True, default="")
    secret = EncryptedTextField(blank=True, default="")
    previous_secret = EncryptedTextField(blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "webhook settings"
        permissions = [("rotate_webhook_secret", "Can rotate a merchant's webhook secret")]
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "mode"], name="one_webhook_setting_per_mode"
            )
        ]

    def __str__(self) -> str:
        return f"Webhook settings for {self.merchant} ({self.mode})"

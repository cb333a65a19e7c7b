"""Merchants, their secret keys (stored only as SHA-256 hashes) and webhook settings (the
signing secret encrypted at rest)."""

from __future__ import annotations

from typing import Any

from django.db import models

from core.fields import EncryptedTextField


class Mode(models.TextChoices):
    """Test (sandbox) or live; it comes from the key and scopes every merchant-owned object."""

    TEST = "test", "Test"
    LIVE = "live", "Live"


class Merchant(models.Model):
    name = models.CharField(max_length=200)
    email = models.EmailField()
    is_active = models.BooleanField(default=True)
    # The one merchant that owns the platform's own wallets (where subaccount shares wait for
    # their payouts): made by ``settlements.services.platform_merchant_get``, never by a
    # person; it has no secret keys, so it can never call the API.
    is_platform = models.BooleanField(default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

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


class SecretKey(models.Model):
    """A merchant secret key. The plaintext is shown once; only its hash is stored."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="secret_keys")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=16, editable=False, help_text="Visible start of the key")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Set by merchants.selectors' key lookup: the merchant's wallets.Wallet of the key's mode,
    # or None (this app imports nothing of wallets).
    wallet: Any

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "mode"],
                condition=models.Q(revoked_at__isnull=True),
                name="one_active_secret_key_per_merchant_mode",
            )
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.mode})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class WebhookSettings(models.Model):
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
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

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

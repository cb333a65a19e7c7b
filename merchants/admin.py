"""Back office for merchants: keys are shown by prefix only; rotation shows the new key once."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin import ReadOnlyAdminMixin
from merchants.models import Merchant, Mode, SecretKey, WebhookSettings
from merchants.services import secret_key_rotate, webhook_secret_rotate


class SecretKeyInline(ReadOnlyAdminMixin, admin.TabularInline):
    """Keys are issued and revoked by rotation only."""

    model = SecretKey
    allow_change = True
    allow_delete = True
    extra = 0
    can_delete = False
    fields = ("mode", "prefix", "created_at", "revoked_at")
    readonly_fields = fields


@admin.register(Merchant)
class MerchantAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "email", "is_active", "created_at")
    list_filter = ("is_active",)
    search_fields = ("name", "email")
    inlines = [SecretKeyInline]
    actions = ["rotate_test_key", "rotate_live_key"]

    def _rotate(self, request: HttpRequest, queryset: QuerySet[Merchant], mode: str) -> None:
        for merchant in queryset:
            issued = secret_key_rotate(merchant=merchant, mode=mode)
            self.message_user(
                request,
                f"{merchant}: new {mode} key {issued.plaintext} — copy it now, "
                "it will not be shown again. The previous key is revoked.",
                level=messages.WARNING,
            )

    @admin.action(description="Rotate test secret key (revokes the old one)")
    def rotate_test_key(self, request: HttpRequest, queryset: QuerySet[Merchant]) -> None:
        self._rotate(request, queryset, Mode.TEST)

    @admin.action(description="Rotate live secret key (revokes the old one)")
    def rotate_live_key(self, request: HttpRequest, queryset: QuerySet[Merchant]) -> None:
        self._rotate(request, queryset, Mode.LIVE)


@admin.register(SecretKey)
class SecretKeyAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    allow_delete = True
    list_display = ("prefix", "merchant", "mode", "created_at", "revoked_at")
    list_filter = ("mode",)
    search_fields = ("prefix", "merchant__name")
    readonly_fields = ("merchant", "mode", "prefix", "created_at", "revoked_at")
    exclude = ("key_hash",)


@admin.register(WebhookSettings)
class WebhookSettingsAdmin(admin.ModelAdmin):
    list_display = ("merchant", "mode", "url", "has_secret", "updated_at")
    list_filter = ("mode",)
    search_fields = ("merchant__name", "url")
    fields = ("merchant", "mode", "url", "has_secret", "updated_at")
    readonly_fields = ("has_secret", "updated_at")
    actions = ["rotate_secret"]

    @admin.display(boolean=True, description="secret configured")
    def has_secret(self, obj: WebhookSettings) -> bool:
        return bool(obj.secret)

    @admin.action(description="Rotate webhook secret (shown once)")
    def rotate_secret(self, request: HttpRequest, queryset: QuerySet[WebhookSettings]) -> None:
        for row in queryset:
            rotated = webhook_secret_rotate(merchant=row.merchant, mode=row.mode)
            self.message_user(
                request,
                f"{row}: new webhook secret {rotated.secret} — copy it now.",
                level=messages.WARNING,
            )

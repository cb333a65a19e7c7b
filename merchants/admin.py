"""Back office for merchants: keys are shown by prefix only; a new key or webhook secret is shown
once, on a page of its own.

* adding a merchant runs ``merchant_create``: test and live keys issued (shown once) and a wallet
  opened per mode;
* rotating a secret key or a webhook secret needs its permission
  (``merchants.rotate_secret_key``, ``merchants.rotate_webhook_secret``) and a typed reason; a
  rotated webhook secret keeps signing beside the new one for the rotation overlap
  (``WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS``), or stops at once with "rotate now" (a leaked
  secret), and the list shows until when;
* webhook settings are saved by ``webhook_settings_set``: a secret is generated, and the URL must
  be a public ``https`` address (``core.ssrf``).

Keys are listed by prefix with their kind (secret or restricted), name, scopes and expiry
(a rolled secret key answers until then); never their hash. Merchants roll their secret key and
create and revoke restricted keys themselves (the keys routes); rotation here is the emergency
path: every secret key of the mode revoked at once, restricted keys left as they are.

The platform merchant (``is_platform``, the owner of the platform's wallets) is shown with
that flag; it has no keys and the rotation actions leave it out.

Every one of these writes an audit record; secrets are recorded by prefix or as "rotated".
Webhook secrets are encrypted at rest; the admin never loads one, only whether it is set.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups

from audit.backoffice import (
    BackOfficeAdminMixin,
    action_confirmation,
    confirmation_form,
    secrets_shown_once,
)
from audit.services import audit_record
from core.admin import ReadOnlyAdminMixin, ReadOnlyTabularInline
from core.ssrf import UnsafeURLError, url_check_public
from merchants.models import KeyKind, Merchant, Mode, SecretKey, WebhookSettings
from merchants.services import (
    merchant_create,
    secret_key_rotate_recorded,
    webhook_secret_overlap_default,
    webhook_secret_rotate_recorded,
    webhook_settings_set,
)

ROTATION_NOTE = (
    "The previous secret keys of this mode (rolled ones too) are revoked: requests made with "
    "them now get 401. Restricted keys are unchanged."
)


# What the back office shows of a key, under its merchant and on its own page.
KEY_FIELDS = (
    "mode",
    "kind",
    "name",
    "prefix",
    "scope_list",
    "created_at",
    "expires_at",
    "revoked_at",
)


class KeyScopesColumn:
    @admin.display(description="scopes")
    def scope_list(self, obj: SecretKey) -> str:
        return key_scopes_display(obj)


class SecretKeyInline(KeyScopesColumn, ReadOnlyTabularInline):
    """Keys are issued and revoked by rotation only."""

    model = SecretKey
    allow_change = True
    allow_delete = True
    fields = KEY_FIELDS
    readonly_fields = fields


def key_scopes_display(key: SecretKey) -> str:
    """A key's scopes as one cell: "all" for a secret key."""
    if key.kind == KeyKind.SECRET:
        return "all"
    return ", ".join(key.scopes)


@admin.register(Merchant)
class MerchantAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("id", "name", "email", "is_active", "is_platform", "created_at")
    list_filter = ("is_active", "is_platform")
    search_fields = ("name", "email")
    inlines = [SecretKeyInline]
    actions = ["rotate_test_key", "rotate_live_key"]

    def get_fields(self, request: HttpRequest, obj: Merchant | None = None) -> _FieldGroups:
        if obj is None:
            return ["name", "email"]
        return ["name", "email", "is_active"]

    def get_inlines(self, request: HttpRequest, obj: Merchant | None) -> list[Any]:
        return list(self.inlines) if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: Merchant, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created = merchant_create(name=form.cleaned_data["name"], email=form.cleaned_data["email"])
        audit_record(
            actor=request.user,
            action=self.audit_action("add"),
            obj=created.merchant,
            after={
                "name": created.merchant.name,
                "email": created.merchant.email,
                "test_key_prefix": created.test_key.secret_key.prefix,
                "live_key_prefix": created.live_key.secret_key.prefix,
                "wallets": list(created.merchant.wallets.values_list("mode", flat=True)),
            },
            request=request,
        )
        # The admin goes on with the merchant the service created (log entry, response).
        obj.pk = created.merchant.pk
        obj.is_active = created.merchant.is_active
        obj.created_at = created.merchant.created_at
        obj.updated_at = created.merchant.updated_at
        obj._state.adding = False
        obj._state.db = created.merchant._state.db
        issued = (created.test_key.plaintext, created.live_key.plaintext)
        obj.issued_keys = issued  # type: ignore[attr-defined]

    def response_add(
        self, request: HttpRequest, obj: Merchant, post_url_continue: str | None = None
    ) -> HttpResponse:
        issued = getattr(obj, "issued_keys", None)
        if not issued:
            return super().response_add(request, obj, post_url_continue)
        test_key, live_key = issued
        return secrets_shown_once(
            request,
            model_admin=self,
            title=f"Merchant {obj} created",
            secrets=[(f"{obj}: test secret key", test_key), (f"{obj}: live secret key", live_key)],
            note="A test and a live wallet were opened. Give the keys to the merchant over a "
            "secure channel; only their prefixes are kept.",
        )

    # --- Key rotation ------------------------------------------------------------------------

    def has_rotate_secret_key_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "merchants.rotate_secret_key")

    def _rotate(
        self, request: HttpRequest, queryset: QuerySet[Merchant], *, mode: str, action_name: str
    ) -> HttpResponse:
        form = confirmation_form(request)
        if not form.is_bound or not form.is_valid():
            return action_confirmation(
                request,
                model_admin=self,
                queryset=queryset,
                action_name=action_name,
                title=f"Rotate {mode} secret keys",
                intro=f"A new {mode} secret key will be issued to each merchant below and "
                f"every {mode} secret key they hold (rolled ones too) revoked at once: their "
                "server gets 401 until it uses the new key. Restricted keys are unchanged.",
                submit_label=f"Rotate {mode} keys",
                form=form,
            )
        reason = form.cleaned_data["reason"]
        issued: list[tuple[str, str]] = []
        # The platform merchant has no keys (``secret_key_issue`` refuses it).
        for merchant in queryset.filter(is_platform=False).order_by("pk"):
            key = secret_key_rotate_recorded(
                merchant=merchant, mode=mode, actor=request.user, reason=reason, request=request
            )
            issued.append((f"{merchant}: new {mode} secret key", key.plaintext))
        return secrets_shown_once(
            request,
            model_admin=self,
            title=f"New {mode} secret keys",
            secrets=issued,
            note=ROTATION_NOTE,
        )

    @admin.action(
        description="Rotate test secret key (revokes the old one)…",
        permissions=["rotate_secret_key"],
    )
    def rotate_test_key(self, request: HttpRequest, queryset: QuerySet[Merchant]) -> HttpResponse:
        return self._rotate(request, queryset, mode=Mode.TEST, action_name="rotate_test_key")

    @admin.action(
        description="Rotate live secret key (revokes the old one)…",
        permissions=["rotate_secret_key"],
    )
    def rotate_live_key(self, request: HttpRequest, queryset: QuerySet[Merchant]) -> HttpResponse:
        return self._rotate(request, queryset, mode=Mode.LIVE, action_name="rotate_live_key")


@admin.register(SecretKey)
class SecretKeyAdmin(KeyScopesColumn, ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    allow_delete = True
    list_display = (
        "prefix",
        "merchant",
        "mode",
        "kind",
        "name",
        "scope_list",
        "created_at",
        "expires_at",
        "revoked_at",
    )
    list_filter = ("mode", "kind")
    search_fields = ("prefix", "name", "merchant__name")
    list_select_related = ("merchant",)
    readonly_fields = ("merchant", *KEY_FIELDS)
    exclude = ("key_hash", "scopes")


class WebhookSettingsForm(forms.ModelForm):
    class Meta:
        model = WebhookSettings
        fields = ("merchant", "mode", "url")

    def clean_url(self) -> str:
        url = (self.cleaned_data.get("url") or "").strip()
        if not url:
            return url
        try:
            url_check_public(url)
        except UnsafeURLError as error:
            raise ValidationError(f"This URL cannot receive webhooks: {error}") from error
        return url


@admin.register(WebhookSettings)
class WebhookSettingsAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    form = WebhookSettingsForm
    list_display = (
        "merchant",
        "mode",
        "url",
        "has_secret",
        "previous_secret_signs_until",
        "updated_at",
    )
    list_filter = ("mode",)
    search_fields = ("merchant__name", "url")
    list_select_related = ("merchant",)
    actions = ["rotate_secret", "rotate_secret_now"]

    def get_fields(self, request: HttpRequest, obj: WebhookSettings | None = None) -> _FieldGroups:
        if obj is None:
            return ["merchant", "mode", "url"]
        return [
            "merchant",
            "mode",
            "url",
            "has_secret",
            "previous_secret_signs_until",
            "updated_at",
        ]

    def get_readonly_fields(
        self, request: HttpRequest, obj: WebhookSettings | None = None
    ) -> list[str]:
        if obj is None:
            return []
        return ["merchant", "mode", "has_secret", "previous_secret_signs_until", "updated_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[WebhookSettings]:
        # Whether a secret is set, never the secret: nothing here decrypts it, so a row whose
        # key is missing still lists and can be given a new secret.
        return (
            super()
            .get_queryset(request)
            .defer("secret", "previous_secret")
            .annotate(secret_set=ExpressionWrapper(~Q(secret=""), output_field=BooleanField()))
        )

    @admin.display(boolean=True, description="secret configured")
    def has_secret(self, obj: WebhookSettings) -> bool:
        return bool(obj.secret_set)  # type: ignore[attr-defined]

    @admin.display(description="previous secret signs until")
    def previous_secret_signs_until(self, obj: WebhookSettings) -> Any:
        """The end of the rotation overlap (the previous secret is never shown); "-" outside
        one."""
        expires_at = obj.previous_secret_expires_at
        return expires_at if expires_at is not None and expires_at > timezone.now() else "-"

    def save_model(
        self, request: HttpRequest, obj: WebhookSettings, form: forms.ModelForm, change: bool
    ) -> None:
        merchant = obj.merchant if change else form.cleaned_data["merchant"]
        mode = obj.mode if change else form.cleaned_data["mode"]
        previous = (
            WebhookSettings.objects.filter(merchant=merchant, mode=mode)
            .annotate(secret_set=ExpressionWrapper(~Q(secret=""), output_field=BooleanField()))
            .values("url", "secret_set")
            .first()
        )
        row = webhook_settings_set(merchant=merchant, mode=mode, url=form.cleaned_data["url"])
        # webhook_settings_set generates a secret for a new row or one without a secret.
        generated = previous is None or not previous["secret_set"]
        audit_record(
            actor=request.user,
            action=self.audit_action("set"),
            obj=row,
            before=None
            if previous is None
            else {"url": previous["url"], "secret": "set" if previous["secret_set"] else "unset"},
            after={"url": row.url, "secret": "generated" if generated else "unchanged"},
            request=request,
        )
        obj.pk = row.pk
        obj.secret = row.secret
        obj.created_at = row.created_at
        obj.updated_at = row.updated_at
        obj._state.adding = False
        obj._state.db = row._state.db
        if generated:
            obj.issued_secret = row.secret  # type: ignore[attr-defined]

    def response_add(
        self, request: HttpRequest, obj: WebhookSettings, post_url_continue: str | None = None
    ) -> HttpResponse:
        if not getattr(obj, "issued_secret", None):
            return super().response_add(request, obj, post_url_continue)
        return self._secret_issued(request, obj)

    def response_change(self, request: HttpRequest, obj: WebhookSettings) -> HttpResponse:
        if not getattr(obj, "issued_secret", None):
            return super().response_change(request, obj)
        return self._secret_issued(request, obj)

    def _secret_issued(self, request: HttpRequest, obj: WebhookSettings) -> HttpResponse:
        secret = obj.issued_secret  # type: ignore[attr-defined]
        return secrets_shown_once(
            request,
            model_admin=self,
            title=f"Webhook settings saved for {obj.merchant} ({obj.mode})",
            secrets=[(f"{obj.merchant} ({obj.mode}): webhook signing secret", secret)],
            note="The merchant verifies webhook signatures with it.",
        )

    # --- Webhook secret rotation -------------------------------------------------------------

    def has_rotate_webhook_secret_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "merchants.rotate_webhook_secret")

    def _rotate_secrets(
        self,
        request: HttpRequest,
        queryset: QuerySet[WebhookSettings],
        *,
        overlap: timedelta,
        action_name: str,
    ) -> HttpResponse:
        overlap_text = (
            f"the previous secret keeps signing beside it for {overlap.total_seconds() / 3600:g} "
            "hours, so the merchant can switch without missing a webhook"
            if overlap
            else "the previous secret stops signing at once (use this for a leaked secret)"
        )
        form = confirmation_form(request)
        if not form.is_bound or not form.is_valid():
            return action_confirmation(
                request,
                model_admin=self,
                queryset=queryset.select_related("merchant"),
                action_name=action_name,
                title="Rotate webhook secrets",
                intro="A new signing secret will be generated for each row below and webhooks "
                f"are signed with it at once; {overlap_text}.",
                submit_label="Rotate webhook secrets",
                form=form,
            )
        issued: list[tuple[str, str]] = []
        for row in queryset.select_related("merchant").order_by("pk"):
            rotated = webhook_secret_rotate_recorded(
                merchant=row.merchant,
                mode=row.mode,
                overlap=overlap,
                actor=request.user,
                reason=form.cleaned_data["reason"],
                request=request,
            )
            issued.append((f"{row.merchant} ({row.mode}): new webhook secret", rotated.secret))
        return secrets_shown_once(
            request,
            model_admin=self,
            title="New webhook secrets",
            secrets=issued,
            note=f"Webhooks are signed with the new secrets; {overlap_text}.",
        )

    @admin.action(
        description="Rotate webhook secret (shown once; the old one signs for the overlap)…",
        permissions=["rotate_webhook_secret"],
    )
    def rotate_secret(
        self, request: HttpRequest, queryset: QuerySet[WebhookSettings]
    ) -> HttpResponse:
        return self._rotate_secrets(
            request,
            queryset,
            overlap=webhook_secret_overlap_default(),
            action_name="rotate_secret",
        )

    @admin.action(
        description="Rotate webhook secret now (shown once; the old one stops at once)…",
        permissions=["rotate_webhook_secret"],
    )
    def rotate_secret_now(
        self, request: HttpRequest, queryset: QuerySet[WebhookSettings]
    ) -> HttpResponse:
        return self._rotate_secrets(
            request, queryset, overlap=timedelta(0), action_name="rotate_secret_now"
        )

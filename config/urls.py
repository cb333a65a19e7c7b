"""The root URLs: the back office (``/admin/``, TOTP-aware), the API (``config.api_router``), the
checkout pages, the API docs and the health probes."""

from django.conf import settings
from django.contrib import admin
from django.forms import Form
from django.http import HttpRequest
from django.urls import include, path, re_path
from django_otp.admin import OTPAdminAuthenticationForm, OTPAdminSite
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView

from config import health, metrics
from core.api.schema_yaml import SchemaApi
from core.api.views import api_route_not_found


class StaffAdminSite(admin.AdminSite):
    """The back office. With ``OTP_REQUIRED`` (production) it admits only active staff verified
    by a confirmed TOTP device (django-otp) and its login form asks for the token; without it,
    the usual password login. Read at every request, so a settings change applies at once."""

    @property
    def login_form(self) -> type[Form] | None:  # type: ignore[override]
        return OTPAdminAuthenticationForm if settings.OTP_REQUIRED else None

    @property
    def login_template(self) -> str | None:  # type: ignore[override]
        return OTPAdminSite.login_template if settings.OTP_REQUIRED else None

    def has_permission(self, request: HttpRequest) -> bool:
        if not super().has_permission(request):
            return False
        return not settings.OTP_REQUIRED or request.user.is_verified()  # type: ignore[union-attr]  # added by django_otp's OTPMiddleware


# Every app registers its admin on the default site; this gives that site the rule above.
admin.site.__class__ = StaffAdminSite
# "View site" in the admin's header: the service has no home page; its API docs are the site.
admin.site.site_url = "/api/docs/"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("api/schema/", SchemaApi.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("config.api_router")),
    path("checkout/", include("collections_app.urls")),
    # Last: what no API route matched answers the envelope 404, with DEBUG on as well.
    re_path(r"^api(?:/|$)", api_route_not_found, name="api-route-not-found"),
]

handler400 = "core.api.views.bad_request"
handler403 = "core.api.views.permission_denied"
handler404 = "core.api.views.page_not_found"
handler500 = "core.api.views.server_error"

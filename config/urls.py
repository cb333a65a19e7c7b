from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("config.api_router")),
    path("checkout/", include("collections_app.urls")),
]

handler400 = "core.api.views.bad_request"
handler403 = "core.api.views.permission_denied"
handler404 = "core.api.views.page_not_found"
handler500 = "core.api.views.server_error"

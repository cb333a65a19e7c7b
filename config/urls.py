from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from core.api import views as core_views

urlpatterns = [
    path("healthz", core_views.healthz, name="healthz"),
    path("readyz", core_views.readyz, name="readyz"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("core.api.urls")),
    path("checkout/", include("collections_app.urls")),
]

handler400 = "core.api.views.bad_request"
handler403 = "core.api.views.permission_denied"
handler404 = "core.api.views.page_not_found"
handler500 = "core.api.views.server_error"

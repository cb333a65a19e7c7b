"""Every app's API routes, mounted under /api/v1/ by ``config.urls``."""

from django.urls import include, path

urlpatterns = [
    path("", include("wallets.api.urls")),
    path("", include("payouts.api.urls")),
    path("", include("beneficiaries.api.urls")),
    path("", include("payment_items.api.urls")),
    path("", include("collections_app.api.urls")),
    path("", include("refunds.api.urls")),
    path("", include("webhooks.api.urls")),
    path("", include("sweeps.api.urls")),
    path("", include("settlements.api.urls")),
    path("", include("settlements.api.test_helper_urls")),
    path("", include("merchants.api.urls")),
]

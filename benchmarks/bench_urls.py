"""The product's URLs plus the benchmark's authenticated no-op POST."""

from __future__ import annotations

from django.urls import path
from rest_framework.request import Request

from config.urls import urlpatterns as product_urlpatterns
from core.api.base import MerchantApi
from core.api.responses import EnvelopeResponse
from merchants.scopes import Scope


class BenchNoopApi(MerchantApi):
    """Authenticated (secret key), throttled (write scope), parses the JSON body, answers an
    envelope: everything a create goes through except the create itself, the scope check with
    the create's scope included."""

    required_scopes = {"POST": Scope.PAYOUTS_WRITE}

    def post(self, request: Request) -> EnvelopeResponse:
        body = request.data
        return EnvelopeResponse(
            {"received": len(body) if isinstance(body, dict) else 0},
            message="ok",
            status=202,
        )


urlpatterns = [
    *product_urlpatterns,
    path("bench/noop", BenchNoopApi.as_view(), name="bench-noop"),
]

handler400 = "core.api.views.bad_request"
handler403 = "core.api.views.permission_denied"
handler404 = "core.api.views.page_not_found"
handler500 = "core.api.views.server_error"

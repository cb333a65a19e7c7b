"""Routes used only by the core tests: one per authentication style, plus failure cases."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.request import Request

from core.api.base import ForbiddenMerchantApi, MerchantApi, PaymentItemMerchantApi
from core.api.fields import AmountField, StrictSerializer
from core.api.responses import EnvelopeResponse
from merchants.scopes import Scope


class _EchoSerializer(StrictSerializer):
    amount = AmountField()


class UnauthorizedStyleApi(MerchantApi):
    required_scopes = {"GET": Scope.READ, "POST": Scope.PAYOUTS_WRITE}

    def get(self, request: Request) -> EnvelopeResponse:
        return EnvelopeResponse(
            {"merchant_id": request.user.pk, "mode": self.mode(request)}, message="ok"
        )

    def post(self, request: Request) -> EnvelopeResponse:
        serializer = _EchoSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return EnvelopeResponse(serializer.data, message="echo")


class ForbiddenStyleApi(ForbiddenMerchantApi):
    required_scopes = {"GET": Scope.READ}

    def get(self, request: Request) -> EnvelopeResponse:
        return EnvelopeResponse({"ok": True})


class BareForbiddenStyleApi(PaymentItemMerchantApi):
    required_scopes = {"GET": Scope.READ}

    def get(self, request: Request) -> EnvelopeResponse:
        return EnvelopeResponse({"ok": True})


class BrokenApi(MerchantApi):
    required_scopes = {"GET": Scope.READ}

    def get(self, request: Request) -> EnvelopeResponse:
        raise RuntimeError("database password is hunter2")


class UndeclaredApi(MerchantApi):
    """Declares no scope: no key may call it."""

    def get(self, request: Request) -> EnvelopeResponse:
        return EnvelopeResponse({"ok": True})

    def post(self, request: Request) -> EnvelopeResponse:
        return EnvelopeResponse({"ok": True})


urlpatterns = [
    path("t/unauthorized", UnauthorizedStyleApi.as_view()),
    path("t/undeclared", UndeclaredApi.as_view()),
    path("t/forbidden", ForbiddenStyleApi.as_view()),
    path("t/bare", BareForbiddenStyleApi.as_view()),
    path("t/broken", BrokenApi.as_view()),
    path("", include("config.urls")),
]

handler404 = "core.api.views.page_not_found"
handler500 = "core.api.views.server_error"

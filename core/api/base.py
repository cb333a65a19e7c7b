"""Base classes for the merchant API views, one per authentication-failure style."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.views import APIView

from core.api.auth_styles import AuthErrorStyle


class MerchantApi(APIView):
    """Payout-area routes: failed authentication answers 401 in the envelope."""

    auth_error_style = AuthErrorStyle.UNAUTHORIZED

    @staticmethod
    def merchant(request: Request) -> Any:
        """The merchant the secret key authenticated (``merchants.models.Merchant``)."""
        return request.user

    @staticmethod
    def mode(request: Request) -> str:
        return request.auth.mode


class ForbiddenMerchantApi(MerchantApi):
    """Initialize, status-check and search routes: 403 in the envelope."""

    auth_error_style = AuthErrorStyle.FORBIDDEN


class PaymentItemMerchantApi(MerchantApi):
    """Payment-item routes: 403 as ``{message, error, statusCode}`` only."""

    auth_error_style = AuthErrorStyle.FORBIDDEN_BARE

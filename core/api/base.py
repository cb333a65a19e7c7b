"""Base classes for the merchant API views, one per authentication-failure style (spec §5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.request import Request
from rest_framework.views import APIView

from core.api.auth_styles import AuthErrorStyle

if TYPE_CHECKING:
    from merchants.models import Merchant


class MerchantApi(APIView):
    """Payout-area routes: failed authentication answers 401 in the envelope."""

    auth_error_style = AuthErrorStyle.UNAUTHORIZED

    @staticmethod
    def merchant(request: Request) -> Merchant:
        return request.user  # type: ignore[return-value]

    @staticmethod
    def mode(request: Request) -> str:
        return request.auth.mode


class ForbiddenMerchantApi(MerchantApi):
    """Initialize, status-check and search routes: 403 in the envelope."""

    auth_error_style = AuthErrorStyle.FORBIDDEN


class PaymentItemMerchantApi(MerchantApi):
    """Payment-item routes: 403 as ``{message, error, statusCode}`` only."""

    auth_error_style = AuthErrorStyle.FORBIDDEN_BARE

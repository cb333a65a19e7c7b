"""Base classes for the merchant API views, one per authentication-failure style."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rest_framework.request import Request
from rest_framework.views import APIView

from core.api.auth_styles import AuthErrorStyle
from core.api.parsers import StrictJSONParser
from core.api.request_text import request_text_check


class MerchantApi(APIView):
    """Payout-area routes: failed authentication answers 401 in the envelope.

    Once the key is accepted, text no route can use in the path, query string or headers is
    refused (``core.api.request_text``); bodies are read by the strict JSON parser (depth cap,
    no NUL or lone surrogates).
    """

    auth_error_style = AuthErrorStyle.UNAUTHORIZED
    parser_classes = [StrictJSONParser]
    # The scope each HTTP method needs (``core.api.permissions.KeyScopePermission``, applied to
    # every view by default); every route sets its own: a view declaring none answers no key.
    required_scopes: ClassVar[Mapping[str, str]] = {}

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        request_text_check(request, kwargs)

    @staticmethod
    def merchant(request: Request) -> Any:
        """The merchant the secret key authenticated (``merchants.models.Merchant``)."""
        return request.user

    @staticmethod
    def calling_key(request: Request) -> Any:
        """The key that authenticated this request (``merchants.models.SecretKey``, secret or
        restricted)."""
        auth: Any = request.auth
        return auth.key

    @staticmethod
    def key_id(request: Request) -> int:
        """The id of the key that authenticated this request: what a service records as the key
        that acted (for example, to tell the key that approves from the key that created)."""
        auth: Any = request.auth
        return int(auth.pk)

    @staticmethod
    def mode(request: Request) -> str:
        auth: Any = request.auth  # merchants' SecretKey (core imports no app)
        return auth.mode

    @staticmethod
    def actor(request: Request) -> str:
        """Who acted, for an audit record: the merchant and the key's visible prefix."""
        auth: Any = request.auth
        return f"merchant {request.user.pk} key {auth.key.prefix}…"

    @staticmethod
    def wallet(request: Request) -> Any:
        """The merchant's wallet of the key's mode (``wallets.models.Wallet``, or None), as the
        authentication read it with the key: an unlocked read from the start of the request."""
        auth: Any = request.auth
        return auth.wallet


class ForbiddenMerchantApi(MerchantApi):
    """Initialize, status-check and search routes: 403 in the envelope."""

    auth_error_style = AuthErrorStyle.FORBIDDEN


class PaymentItemMerchantApi(MerchantApi):
    """Payment-item routes: 403 as ``{message, error, statusCode}`` only."""

    auth_error_style = AuthErrorStyle.FORBIDDEN_BARE

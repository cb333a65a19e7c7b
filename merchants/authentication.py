"""Bearer secret-key authentication. ``request.user`` is the merchant, ``request.auth`` the
``merchants.selectors.ActiveKey``: the key, its merchant and the merchant's wallet of the key's
mode, read in one query (``request.auth.wallet``; its ``pk`` and ``mode`` are the key's)."""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from core.api.auth_styles import UNAUTHORIZED_MESSAGE
from merchants.selectors import secret_key_get_active


class SecretKeyAuthentication(BaseAuthentication):
    keyword = "bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, credential = header.partition(" ")
        credential = credential.strip()
        if scheme.lower() != self.keyword or not credential or " " in credential:
            raise AuthenticationFailed(UNAUTHORIZED_MESSAGE)
        active = secret_key_get_active(plaintext=credential)
        if active is None:
            raise AuthenticationFailed(UNAUTHORIZED_MESSAGE)
        return active.merchant, active

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'

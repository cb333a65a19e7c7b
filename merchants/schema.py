"""OpenAPI description of bearer secret-key authentication (the ``SecretKeyAuth`` scheme)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

if TYPE_CHECKING:
    from drf_spectacular.openapi import AutoSchema


class SecretKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    """Describes ``SecretKeyAuthentication`` as the ``SecretKeyAuth`` scheme."""

    target_class = "merchants.authentication.SecretKeyAuthentication"
    name = "SecretKeyAuth"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "Authorization: Bearer sk_test_... or sk_live_... (a secret key), or "
            "rk_test_... or rk_live_... (a restricted key); the mode comes from the key",
        }

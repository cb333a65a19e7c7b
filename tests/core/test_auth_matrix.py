"""Every /api/v1 route refuses a request without valid credentials, in its group's shape.

Routes are enumerated from the URL configuration, so a new route is covered automatically.
Routes that authenticate another way (provider notifications signed with HMAC) declare
``authentication_classes = []`` and are checked by their own tests.
"""

from __future__ import annotations

import re

import pytest
from drf_spectacular.generators import EndpointEnumerator
from rest_framework.test import APIClient

from core.api.auth_styles import AuthErrorStyle
from merchants.models import Mode
from merchants.services import secret_key_rotate

pytestmark = pytest.mark.django_db

EXPECTED = {
    AuthErrorStyle.UNAUTHORIZED: (
        401,
        {
            "status": False,
            "message": "Unauthorized: invalid or missing secret key",
            "data": None,
            "statusCode": 401,
        },
    ),
    AuthErrorStyle.FORBIDDEN: (
        403,
        {"status": False, "message": "Forbidden resource", "data": None, "statusCode": 403},
    ),
    AuthErrorStyle.FORBIDDEN_BARE: (
        403,
        {"message": "Forbidden resource", "error": "Forbidden", "statusCode": 403},
    ),
}


def _merchant_routes() -> list[tuple[str, str, AuthErrorStyle]]:
    routes = []
    for path, _regex, method, callback in EndpointEnumerator().get_api_endpoints():
        if not path.startswith("/api/v1/"):
            continue
        view_class = callback.cls
        if view_class.authentication_classes == []:
            continue
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        routes.append((method, concrete, view_class.auth_error_style))
    return routes


ROUTES = _merchant_routes()


def test_routes_were_found() -> None:
    assert ROUTES, "no /api/v1 routes enumerated"


@pytest.mark.parametrize(("method", "path", "style"), ROUTES)
@pytest.mark.parametrize("credential", ["missing", "wrong_scheme", "unknown", "revoked"])
def test_route_refuses_bad_credentials(
    method: str, path: str, style: AuthErrorStyle, credential: str, merchant_account
) -> None:
    client = APIClient()
    key = merchant_account.test_key.plaintext
    if credential == "wrong_scheme":
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    elif credential == "unknown":
        client.credentials(HTTP_AUTHORIZATION="Bearer sk_test_" + "z" * 43)
    elif credential == "revoked":
        secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST)
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    response = client.generic(method, path, data="{}", content_type="application/json")
    status_code, body = EXPECTED[style]
    assert response.status_code == status_code
    assert response.json() == body

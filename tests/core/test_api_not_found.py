"""An unknown route under ``/api/`` answers the JSON envelope 404 whatever ``DEBUG`` says; other
unknown routes keep Django's page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
ENVELOPE_404 = {
    "status": False,
    "message": "Route not found",
    "data": None,
    "statusCode": 404,
}
UNKNOWN_API_PATHS = [
    "/api/nope",
    "/api/v1/nope",
    "/api/v2/transactions",
    "/api/v1/transactions/in/initialize/extra",
    "/api/v1/transactions/bank/",
    "/api",
]


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
@pytest.mark.parametrize("path", UNKNOWN_API_PATHS)
def test_unknown_api_route_is_the_json_envelope(settings, db: None, debug: bool, path: str) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = debug
    response = Client().get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == ENVELOPE_404


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_unknown_api_route_is_a_404_for_every_method_without_a_csrf_token(
    settings, db: None, debug: bool, method: str
) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = debug
    client = Client(enforce_csrf_checks=True)
    response = getattr(client, method)("/api/v1/nope", data="{}", content_type="application/json")
    assert response.status_code == 404
    assert response.json() == ENVELOPE_404


def test_unknown_non_api_route_keeps_djangos_debug_page(settings, db: None) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    response = Client().get("/no-such-page")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_known_api_routes_are_not_shadowed(settings, db: None) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    response = Client().get("/api/v1/transactions/bank")
    assert response.status_code == 401
    assert response.json()["message"] == "Unauthorized: invalid or missing secret key"


@pytest.mark.multiprocess
@pytest.mark.probe
@pytest.mark.parametrize("settings_module", ["config.settings.local", "config.settings.test"])
def test_every_settings_module_answers_the_envelope(settings_module: str, tmp_path: Path) -> None:
    """Fresh interpreters, so each module's own DEBUG applies (local: on; test: off)."""
    script = (
        "import json, django; django.setup();"
        "from django.conf import settings; from django.test import Client;"
        "r = Client().get('/api/v1/nope');"
        "print(json.dumps([settings.DEBUG, r.status_code, r['Content-Type'], r.json()]))"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DJANGO_SETTINGS_MODULE"}}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": settings_module,
            "VAR_DIR": str(tmp_path / "var"),
            "DATABASE_URL": "postgres://postgres@127.0.0.1:1/unreachable",  # never connected to
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    debug, status, content_type, body = json.loads(result.stdout.splitlines()[-1])
    assert debug is (settings_module == "config.settings.local")
    assert status == 404
    assert content_type.startswith("application/json")
    assert body == ENVELOPE_404

"""The API docs in a real browser with no network but our own server.

Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright's sync API) opens ``/api/docs/``
(Swagger UI) and ``/api/redoc/`` (ReDoc) on pytest-django's ``live_server``, with every request
to any other host aborted, as on a machine without internet. The pages must render from our own
static files: every tag group, the operations under them, and a request example. A screenshot
of each page is saved to ``var/artifacts/docs/``.

Skipped when Chromium or Playwright is missing, except under ``REQUIRE_POSTGRES=1`` (CI), where
that fails the run instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from core.api.schema_components import ApiTag
from tests.browser import chromium_context

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "artifacts" / "docs"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def _offline(context: Any) -> list[str]:
    """Aborts every request to another host; returns the list of what was refused."""
    refused: list[str] = []

    def handle(route: Any) -> None:
        url = route.request.url
        if urlsplit(url).hostname in LOCAL_HOSTS or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            refused.append(url)
            route.abort("internetdisconnected")

    context.route("**/*", handle)
    return refused


def test_swagger_ui_lists_every_operation_offline(live_server: Any, tmp_path: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_context(tmp_path, what="API docs browser test") as context:
        refused = _offline(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{live_server.url}/api/docs/")
        page.wait_for_selector(".opblock-summary-path", state="attached")
        tags = page.locator(".opblock-tag-section h3 .nostyle span").all_inner_texts()
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        create = page.locator("#operations-Payouts-payout_create")
        create.locator(".opblock-summary").click()
        create.locator(".body-param__example, .highlight-code").first.wait_for()
        example_text = create.inner_text()
        page.screenshot(path=str(ARTIFACTS / "swagger-ui.png"), full_page=False)
    assert refused == []
    assert errors == []
    assert tags == [tag.value for tag in ApiTag]
    assert len(paths) >= 31
    assert "/api/v1/transactions/in/merchant-wallet/payouts" in paths
    assert "salary-2026-03-ada" in example_text


def test_redoc_renders_offline(live_server: Any, tmp_path: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_context(tmp_path, what="API docs browser test") as context:
        refused = _offline(context)
        page = context.new_page()
        page.goto(f"{live_server.url}/api/redoc/")
        page.get_by_role("heading", name="Create a payout").first.wait_for(state="attached")
        headings = page.locator("h1, h2").all_inner_texts()
        page.screenshot(path=str(ARTIFACTS / "redoc.png"), full_page=False)
    assert refused == []
    assert {tag.value for tag in ApiTag} <= set(headings)

"""What every browser test shares: Debian's Chromium driven by Playwright's sync API, the rule
for when it is missing, and running ORM work beside Playwright's event loop.

``chromium_context(tmp_path, what=..., viewport=...)`` yields a browser context; when Chromium or
Playwright is missing the test is skipped, except under ``REQUIRE_POSTGRES=1`` (CI), where that
fails the run instead. ``local_requests_only(context)`` keeps the browser on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connections

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_SECONDS = 30

T = TypeVar("T")


def browser_unavailable(reason: str, *, what: str) -> None:
    """Skips the test, or fails it under ``REQUIRE_POSTGRES=1`` (CI must run every test)."""
    if os.environ.get("REQUIRE_POSTGRES") == "1":
        pytest.fail(f"the {what} cannot run under REQUIRE_POSTGRES=1: {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def chromium_context(
    tmp_path: Path, *, what: str, viewport: dict[str, int] | None = None
) -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        browser_unavailable(f"{CHROMIUM} is missing (apt-get install chromium)", what=what)
    if importlib.util.find_spec("playwright") is None:
        browser_unavailable("playwright is not installed (pip install -e '.[dev]')", what=what)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            **({"viewport": viewport} if viewport else {}),
        )
        context.set_default_timeout(WAIT_SECONDS * 1000)
        try:
            yield context
        finally:
            context.close()


def local_requests_only(context: Any, *, host: str = "127.0.0.1") -> list[str]:
    """Routes every request of the browser ``context``: those to ``host`` go through, any other
    is aborted and its URL recorded in the list returned (which a test asserts stays empty)."""
    external: list[str] = []

    def route(route: Any) -> None:
        if urlsplit(route.request.url).hostname == host:
            route.continue_()
        else:
            external.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    return external


def loopback_url(url: str) -> str:
    """``http://localhost:PORT`` (how ``live_server`` names itself) as ``http://127.0.0.1:PORT``
    (where it listens)."""
    parts = urlsplit(url)
    if parts.hostname != "localhost":
        return url
    return urlunsplit(parts._replace(netloc=f"127.0.0.1:{parts.port}"))


def in_thread(query: Callable[[], T]) -> T:
    """Runs ORM work in a plain thread (closing its connection after): Playwright's sync API
    keeps an event loop in the test thread, where Django refuses blocking database calls."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = query()
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread
            outcome["error"] = error
        finally:
            connections.close_all()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]

"""What every browser test shares: Debian's Chromium driven by Playwright's sync API, the rule
for when it is missing, and running ORM work beside Playwright's event loop.

``chromium_context(tmp_path, what=..., viewport=...)`` yields a browser context; when Chromium or
Playwright is missing the test is skipped, except under ``REQUIRE_POSTGRES=1`` (CI), where that
fails the run instead.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

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

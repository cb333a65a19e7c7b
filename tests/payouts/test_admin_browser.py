"""The finance lists in a real browser on a 1400 px laptop screen.

Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright's sync API) logs a superuser in to
pytest-django's ``live_server`` at 1400×900 and opens the payout, wallet and ledger lists with a
few rows of realistic width (long merchant and account names, nine-digit amounts). Each list must
fit the window with the navigation and filter sidebars open: no horizontal scroll of the page or
of the results table, every column header on screen. A screenshot of each list is saved to
``var/artifacts/admin/``.

Skipped when Chromium or Playwright is missing, except under ``REQUIRE_POSTGRES=1`` (CI), where
that fails the run instead. Celery publishes to the in-memory broker (``conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from collections_app.models import CollectionTransaction, PaymentStatus
from merchants.models import Merchant, Mode
from merchants.services import MerchantCreated, merchant_create
from payouts.models import Payout, PayoutStatus
from payouts.services import payout_create
from tests.browser import chromium_context, in_thread
from tests.collections_app.factories import CollectionTransactionFactory
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import GOOD_ACCOUNT, GTB_CODE, fund_wallet, new_idempotency_key
from wallets.models import FundingTransfer, LedgerEntry, Wallet
from wallets.selectors import wallet_get
from webhooks.models import Event, WebhookDelivery, WebhookDeliveryAttempt

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

VIEWPORT = {"width": 1400, "height": 900}
ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "artifacts" / "admin"
USERNAME = "finance-lead"
PASSWORD = "pw-lead-12345-browser"

# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture
def finance_rows(merchant_account: MerchantCreated) -> dict[str, Any]:
    """Payouts, wallets and ledger entries as wide as real ones get: two merchants (one with a
    long name), payouts in every status, nine-digit amounts and long beneficiary names."""
    User.objects.create_superuser(USERNAME, "lead@example.com", PASSWORD)
    merchant = merchant_account.merchant
    long_name = merchant_create(
        name="Oluwaseun Adebayo-Okonkwo Logistics and Haulage Ventures Limited",
        email="ventures@example.com",
    ).merchant
    test_wallet = fund_wallet(wallet_get(merchant=merchant, mode=Mode.TEST), "987654321.98")
    live_wallet = fund_wallet(wallet_get(merchant=long_name, mode=Mode.LIVE), "123456789.01")
    for amount in ("250000000.00", "1500.50", "99999.99"):
        payout_create(
            merchant=merchant,
            mode=Mode.TEST,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal(amount),
            idempotency_key=new_idempotency_key(),
            narration="Supplier settlement for November",
        )
    now = timezone.now()
    for index, status in enumerate(PayoutStatus.values):
        final = status in (PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED)
        PayoutFactory(
            wallet=live_wallet if index % 2 else test_wallet,
            status=status,
            amount=Decimal("123456789.00") if index % 2 else Decimal("5000.00"),
            fee_amount=Decimal("53.75"),
            account_name="CHUKWUEMEKA OLUWADAMILARE NWACHUKWU-ADEYEMI ENTERPRISES",
            bank_code="221",
            bank_name="Stanbic IBTC Bank",
            account_number="0012345678",
            nip_session_id=f"0000582511230030{index:014d}" if final else "",
            completed_at=now - timedelta(minutes=index) if final else None,
        )
    return {"merchant": merchant}


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Any]:
    with chromium_context(tmp_path, what="admin browser test", viewport=VIEWPORT) as context:
        yield context


@pytest.fixture
def admin_page(finance_rows: dict[str, Any], live_server: Any, chromium: Any) -> Any:
    """A page logged in to the admin through its login form, at 1400×900."""
    page = chromium.new_page()
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    return page


# --- the check ---------------------------------------------------------------------------------

MEASURE = """() => {
    const table = document.querySelector('#result_list');
    const results = table.closest('.results');
    const box = (el) => el.getBoundingClientRect();
    return {
        viewport: window.innerWidth,
        pageScrollWidth: document.documentElement.scrollWidth,
        tableRight: box(table).right,
        resultsRight: box(results).right,
        resultsScrollWidth: results.scrollWidth,
        resultsClientWidth: results.clientWidth,
        rows: table.querySelectorAll('tbody tr').length,
        navSidebarOpen: !!document.querySelector('#main.shifted'),
        headers: [...table.querySelectorAll('thead th:not(.action-checkbox-column)')].map((th) => ({
            text: th.innerText.trim().toLowerCase(),
            left: box(th).left,
            right: box(th).right,
            width: box(th).width,
        })),
    };
}"""


def assert_list_fits(page: Any, url: str, name: str, headers: list[str] | None, rows: int) -> Path:
    page.goto(url)
    page.wait_for_selector("#result_list")
    layout = page.evaluate(MEASURE)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / f"{name}-1400.png"
    page.screenshot(path=str(screenshot), full_page=True)
    print(f"screenshot: {screenshot}")  # noqa: T201 - the path is the artifact's receipt
    width = VIEWPORT["width"]
    assert layout["viewport"] == width
    assert layout["navSidebarOpen"]  # Django's default: the narrowest the list gets
    assert layout["rows"] == rows
    if headers is not None:
        assert [header["text"] for header in layout["headers"]] == headers
    assert layout["pageScrollWidth"] <= width, layout
    assert layout["tableRight"] <= width, layout
    assert layout["resultsScrollWidth"] <= layout["resultsClientWidth"], layout  # no inner scroll
    for header in layout["headers"]:
        assert header["width"] > 0, header
        assert header["left"] >= 0 and header["right"] <= layout["resultsRight"] + 0.5, header
    for locator in page.locator("#result_list thead th").all():
        assert locator.is_visible()
    return screenshot


def test_the_finance_lists_fit_a_1400_px_screen(admin_page: Any, live_server: Any) -> None:
    payout_rows, wallet_rows, ledger_rows = in_thread(
        lambda: (Payout.objects.count(), Wallet.objects.count(), LedgerEntry.objects.count())
    )
    screenshots = [
        assert_list_fits(
            admin_page,
            f"{live_server.url}/admin/payouts/payout/",
            "payout-changelist",
            [
                "created",
                "internal reference",
                "merchant",
                "status",
                "amount",
                "fee",
                "beneficiary",
                "completed",
            ],
            payout_rows,
        ),
        assert_list_fits(
            admin_page,
            f"{live_server.url}/admin/wallets/wallet/",
            "wallet-changelist",
            ["id", "merchant", "mode", "status", "available", "reserved", "static account"],
            wallet_rows,
        ),
        assert_list_fits(
            admin_page,
            f"{live_server.url}/admin/wallets/ledgerentry/",
            "ledgerentry-changelist",
            [
                "created",
                "wallet",
                "entry type",
                "amount",
                "fee",
                "available δ",
                "available after",
                "reserved after",
                "reference",
            ],
            ledger_rows,
        ),
    ]
    assert all(path.stat().st_size > 0 for path in screenshots)

    # The change page holds what the list left out; it fits as well.
    payout_id = in_thread(lambda: Payout.objects.filter(nip_session_id__gt="").first().pk)
    admin_page.goto(f"{live_server.url}/admin/payouts/payout/{payout_id}/change/")
    assert admin_page.locator(".field-nip_session_id .readonly").inner_text().startswith("0000")
    assert admin_page.locator(".field-amount_display .readonly").inner_text().startswith("₦")
    assert admin_page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
    screenshot = ARTIFACTS / "payout-change-1400.png"
    admin_page.screenshot(path=str(screenshot), full_page=True)
    print(f"screenshot: {screenshot}")  # noqa: T201 - the path is the artifact's receipt


def _collections_and_webhooks(merchant: Merchant) -> None:
    """Paid and pending collections with long merchant references, their events and webhook
    deliveries, and failed delivery attempts with long error texts."""
    from collections_app.services import transaction_confirm

    for index, outcome in enumerate((PaymentStatus.PAID, PaymentStatus.FAILED, None)):
        collection = CollectionTransactionFactory(
            merchant=merchant,
            client_reference=f"INV-2026-11-LEKKI-WAREHOUSE-RESTOCK-{index:012d}",
            amount=Decimal("123456789.00"),
            transaction_fee=Decimal("2000.00"),
            amount_to_be_paid=Decimal("123458789.00"),
            callback_url=(
                "https://merchant.example.com/payments/callback/after-checkout/"
                f"order-confirmation?order={index}&source=checkout-page"
            ),
        )
        if outcome is not None:
            transaction_confirm(collection=collection, outcome=outcome)
    for delivery in WebhookDelivery.objects.all():
        WebhookDeliveryAttempt.objects.create(
            delivery=delivery,
            attempt_number=1,
            url=delivery.url,
            status_code=None,
            latency_ms=10000,
            error="timeout: HTTPSConnectionPool(host='merchant.example.com', port=443): "
            "Read timed out. (read timeout=10)",
        )


def test_the_collection_funding_and_webhook_lists_fit_a_1400_px_screen(
    admin_page: Any, live_server: Any, finance_rows: dict[str, Any]
) -> None:
    in_thread(lambda: _collections_and_webhooks(finance_rows["merchant"]))
    counts = in_thread(
        lambda: {
            "collectiontransaction": CollectionTransaction.objects.count(),
            "fundingtransfer": FundingTransfer.objects.count(),
            "event": Event.objects.count(),
            "webhookdelivery": WebhookDelivery.objects.count(),
            "webhookdeliveryattempt": WebhookDeliveryAttempt.objects.count(),
        }
    )
    assert counts["webhookdeliveryattempt"] > 0
    pages = {
        "collectiontransaction": (
            "collections_app",
            [
                "created",
                "reference",
                "client reference",
                "merchant",
                "channel",
                "amount",
                "fee",
                "status",
            ],
        ),
        "fundingtransfer": (
            "wallets",
            ["created", "provider reference", "wallet", "amount", "source", "sender account name"],
        ),
        "event": ("webhooks", None),
        "webhookdelivery": ("webhooks", None),
        "webhookdeliveryattempt": ("webhooks", None),
    }
    for model, (app, headers) in pages.items():
        assert_list_fits(
            admin_page,
            f"{live_server.url}/admin/{app}/{model}/",
            f"{model}-changelist",
            headers,
            counts[model],
        )

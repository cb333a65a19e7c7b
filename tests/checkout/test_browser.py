"""A real browser through the hosted checkout.

Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright's sync API) pays against
pytest-django's ``live_server``; a real Celery worker process (Redis) delivers the signed
webhooks; a local HTTP server plays the merchant: it is the ``callback_url`` the customer lands
on and the URL the webhooks are POSTed to. The browser reaches nothing but 127.0.0.1: every
other request is aborted, and each test asserts there was none.

The declined-card and cancel flows run at desktop (1280×800) and phone (390×844) width and
save a screenshot of each step under ``var/artifacts/checkout/``.

Skipped when Chromium, Playwright or Redis is missing, except under ``REQUIRE_POSTGRES=1``
(CI), where that fails the run instead.
"""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.utils import timezone

from collections_app.models import CollectionTransaction, PaymentStatus, TransactionAttempt
from merchants.models import Mode
from merchants.services import MerchantCreated, webhook_settings_set
from tests.browser import (
    WAIT_SECONDS,
    browser_unavailable,
    chromium_context,
    in_thread,
    local_requests_only,
    loopback_url,
)
from tests.collections_app.helpers import (
    ReceivedRequest,
    RecordingReceiver,
    celery_worker_running,
    hmac_sha512_hex,
)
from tests.payment_items.factories import PaymentItemFactory
from webhooks.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

ARTIFACTS_DIR = Path(__file__).resolve().parents[2] / "var" / "artifacts" / "checkout"
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
DECLINED_CARD = "4000 0000 0000 0002"
PAID_CARD = "4084 0840 8408 4081"


def _unavailable(reason: str) -> None:
    browser_unavailable(reason, what="checkout browser test")


# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Any]:
    """The browser context, on 127.0.0.1 only; the test fails if anything else was asked for."""
    with chromium_context(tmp_path, what="checkout browser test") as context:
        external = local_requests_only(context)
        yield context
        assert external == [], f"the browser asked for something outside 127.0.0.1: {external}"


@pytest.fixture
def merchant_site() -> Iterator[RecordingReceiver]:
    """The merchant's server: the customer's landing page (GET) and the webhook endpoint."""

    def answer(request: ReceivedRequest) -> tuple[int, bytes, dict[str, str]]:
        if request.method == "GET":
            body = b"<!doctype html><title>Thanks</title><h1>Back at the shop</h1>"
            return 200, body, {"Content-Type": "text/html"}
        return 200, b'{"received":true}', {"Content-Type": "application/json"}

    receiver = RecordingReceiver(answer=answer).start()
    yield receiver
    receiver.stop()


@pytest.fixture
def celery_worker(tmp_path: Path) -> Iterator[subprocess.Popen]:
    """A real worker process on Redis, consuming a queue of its own, against the test DB."""
    with celery_worker_running(tmp_path, unavailable=_unavailable) as worker:
        yield worker


@pytest.fixture
def shop(
    live_server: Any,
    settings: Any,
    merchant_account: MerchantCreated,
    merchant_site: RecordingReceiver,
    fee_schedule: Any,
) -> dict[str, Any]:
    """A merchant with a test key, a ₦7,000.00 item and a webhook URL on the local site."""
    base_url = loopback_url(live_server.url)
    settings.CHECKOUT_BASE_URL = base_url
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    merchant = merchant_account.merchant
    webhook = webhook_settings_set(
        merchant=merchant, mode=Mode.TEST, url=merchant_site.url("/webhook")
    )
    item = PaymentItemFactory(
        merchant=merchant,
        name="School fees",
        amount=Decimal("7000.00"),
        business__business_name="Ade Academy",
    )
    return {
        "base_url": base_url,
        "key": merchant_account.test_key.plaintext,
        "item": item,
        "secret": webhook.secret,
    }


def initialize(shop: dict[str, Any], site: RecordingReceiver, **overrides: str) -> dict:
    body = {
        "callback_url": site.url("/callback?order=1001"),
        "payment_item_id": str(shop["item"].pk),
        "transaction_reference": f"order-{uuid.uuid4().hex[:10]}",
        "channel": "card",
        "amount": "7000.00",
        "customer_info": {
            "email": "ada.obi@example.com",
            "phone_number": "08031234567",
            "first_name": "Ada",
            "last_name": "Obi",
        },
        **overrides,
    }
    response = requests.post(
        f"{shop['base_url']}/api/v1/transactions/in/initialize",
        json=body,
        headers={"Authorization": f"Bearer {shop['key']}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()["data"]


def signed_webhooks_for(
    site: RecordingReceiver, reference: str, secret: str, worker: subprocess.Popen
) -> dict[str, ReceivedRequest]:
    """Waits until the event for ``reference`` reached both the callback URL and the webhook
    URL, and returns those POSTs by path."""

    def for_reference(requests_: list[ReceivedRequest]) -> dict[str, ReceivedRequest]:
        found = {}
        for request in requests_:
            if request.method == "POST" and request.json()["data"]["reference"] == reference:
                found[request.path.split("?")[0]] = request
        return found

    try:
        site.wait_for(lambda seen: len(for_reference(seen)) == 2, timeout=WAIT_SECONDS)
    except AssertionError:
        log = Path(worker.log_path).read_text()[-3000:]  # type: ignore[attr-defined]
        raise AssertionError(f"webhooks not received; worker log:\n{log}") from None
    received = for_reference(site.received("POST"))
    for request in received.values():
        assert request.header("X-Webhook-Signature") == hmac_sha512_hex(request.body, secret)
    return received


def assert_landed_on_callback(page: Any, site: RecordingReceiver, reference: str, status: str):  # type: ignore[no-untyped-def]
    page.wait_for_url(re.compile(r".*/callback\?.*status=.*"))
    query = parse_qs(urlsplit(page.url).query)
    assert query == {"order": ["1001"], "reference": [reference], "status": [status]}
    assert page.locator("h1").inner_text() == "Back at the shop"
    landing = [r for r in site.received("GET", "/callback") if reference in r.path]
    assert len(landing) == 1


def fill_card(page: Any, number: str, expiry: str = "12/39", cvv: str = "123") -> None:
    page.fill("#card_number", number)
    page.fill("#expiry", expiry)
    page.fill("#cvv", cvv)


def assert_fits_the_screen(page: Any) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def wait_for_text(page: Any, test_id: str, text: str) -> None:
    page.wait_for_function(
        '([testId, text]) => document.querySelector(`[data-testid="${testId}"]`)'
        ".textContent === text",
        arg=[test_id, text],
        timeout=5000,
    )


def screenshot(page: Any, flow: str, viewport: str, step: int, what: str) -> None:
    """``var/artifacts/checkout/<flow>-<viewport>-<step>-<what>.png`` (git ignores var/)."""
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(
        path=str(ARTIFACTS_DIR / f"{flow}-{viewport}-{step}-{what}.png"), full_page=True
    )


def stored(reference: str) -> CollectionTransaction:
    return in_thread(lambda: CollectionTransaction.objects.get(reference=reference))


def event_types(reference: str) -> list[str]:
    return in_thread(
        lambda: list(
            Event.objects.filter(reference=reference)
            .order_by("id")
            .values_list("event_type", flat=True)
        )
    )


def countdown_ticks(page: Any) -> None:
    """The countdown shows hours:minutes:seconds and moves on by itself."""
    shown = page.get_by_test_id("countdown").inner_text()
    assert re.fullmatch(r"\d+:[0-5]\d:[0-5]\d", shown), shown
    page.wait_for_function(
        "shown => document.querySelector('[data-countdown-left]').textContent !== shown",
        arg=shown,
        timeout=5000,
    )


# --- the test ----------------------------------------------------------------------------------


@pytest.mark.multiprocess
def test_customer_pays_is_declined_and_transfers_in_a_real_browser(
    shop: dict[str, Any],
    merchant_site: RecordingReceiver,
    celery_worker: subprocess.Popen,
    chromium: Any,
    settings: Any,
) -> None:
    page = chromium.new_page()
    page.set_viewport_size({"width": 375, "height": 740})  # a phone

    # 1. Card, paid with the documented test card.
    created = initialize(shop, merchant_site)
    reference = created["reference"]
    assert created["authorization_url"] == f"{shop['base_url']}/checkout/{reference}"
    page.goto(created["authorization_url"])
    assert page.get_by_test_id("business-name").inner_text() == "Ade Academy"
    assert page.get_by_test_id("item").inner_text() == "School fees"
    assert page.get_by_test_id("amount").inner_text() == "₦7,000.00"
    assert page.get_by_test_id("fee").inner_text() == "₦205.00"
    assert page.get_by_test_id("total").inner_text() == "₦7,205.00"
    assert page.get_by_test_id("reference").inner_text() == reference
    assert_fits_the_screen(page)

    fill_card(page, "4084 0840 8408 4082")  # one digit off: the page's own check stops it
    page.click("#pay-button")
    assert "not valid" in page.locator("#card_number-error").inner_text()
    assert page.url == created["authorization_url"]
    assert (
        in_thread(lambda: CollectionTransaction.objects.get(reference=reference)).no_of_attempts
        == 0
    )

    fill_card(page, "4084084084084081", expiry="12/39", cvv="123")
    assert page.input_value("#card_number") == "4084 0840 8408 4081"  # formatted as typed
    page.click("#pay-button")
    assert_landed_on_callback(page, merchant_site, reference, "paid")
    paid = signed_webhooks_for(merchant_site, reference, shop["secret"], celery_worker)
    event = in_thread(lambda: Event.objects.get(reference=reference))
    for request in paid.values():
        assert request.body == event.body_bytes
        assert request.json()["event"] == "transaction.paid"
        assert request.json()["id"] == event.event_id
    assert (
        in_thread(lambda: CollectionTransaction.objects.get(reference=reference)).payment_status
        == "paid"
    )

    page.goto(created["authorization_url"])  # the link now shows the result, no form
    assert page.get_by_test_id("result-title").inner_text() == "Payment successful"
    assert page.locator("#card-form").count() == 0

    # 2. Card, declined on the last attempt allowed (desktop width this time).
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 1
    page.set_viewport_size({"width": 1280, "height": 800})
    declined = initialize(shop, merchant_site)
    page.goto(declined["authorization_url"])
    assert_fits_the_screen(page)
    fill_card(page, "4000 0000 0000 0002", expiry="01/40", cvv="4321")
    page.click("#pay-button")
    assert_landed_on_callback(page, merchant_site, declined["reference"], "failed")
    failed = signed_webhooks_for(
        merchant_site, declined["reference"], shop["secret"], celery_worker
    )
    assert {request.json()["event"] for request in failed.values()} == {"transaction.failed"}
    declined_txn = in_thread(
        lambda: CollectionTransaction.objects.get(reference=declined["reference"])
    )
    assert declined_txn.payment_status == PaymentStatus.FAILED
    assert declined_txn.meta_data == {"card": {"brand": "visa", "last4": "0002"}}

    # 3. Bank transfer: the account and the exact amount, then the simulated transfer.
    page.set_viewport_size({"width": 375, "height": 740})
    transfer = initialize(shop, merchant_site, channel="bank-transfer")
    assert transfer["authorization_url"] is None
    instructions = transfer["payment_instructions"]
    page.goto(f"{shop['base_url']}/checkout/{transfer['reference']}")
    assert page.get_by_test_id("account-number").inner_text() == instructions["account_number"]
    assert page.get_by_test_id("bank-name").inner_text() == instructions["bank_name"]
    assert page.get_by_test_id("transfer-amount").inner_text() == "₦7,205.00"
    assert instructions["amount"] == "7205.00"
    assert_fits_the_screen(page)
    chromium.grant_permissions(["clipboard-read", "clipboard-write"], origin=shop["base_url"])
    page.get_by_test_id("copy-account-number").click()
    wait_for_text(page, "copy-account-number", "Copied")
    assert page.get_by_test_id("copy-status").inner_text() == "Account number copied"
    assert page.evaluate("navigator.clipboard.readText()") == instructions["account_number"]
    page.get_by_test_id("copy-amount").click()
    wait_for_text(page, "copy-amount", "Copied")
    assert page.get_by_test_id("copy-status").inner_text() == "Amount 7205.00 copied"
    assert page.evaluate("navigator.clipboard.readText()") == "7205.00"
    screenshot(page, "transfer", "phone", 1, "copied")
    page.click("#transfer-button")
    assert_landed_on_callback(page, merchant_site, transfer["reference"], "paid")
    transferred = signed_webhooks_for(
        merchant_site, transfer["reference"], shop["secret"], celery_worker
    )
    data = transferred["/webhook"].json()["data"]
    assert (data["channel"], data["amount_paid"], data["payment_status"]) == (
        "bank-transfer",
        "7205.00",
        "paid",
    )
    assert "payment_instructions" in data["meta_data"]

    # Each event went out once per destination, and the worker did the sending.
    posts = merchant_site.received("POST")
    assert len(posts) == 6
    assert len({(r.header("X-Webhook-Event-Id"), r.path) for r in posts}) == 6
    assert "webhook_delivery_send_task" in Path(celery_worker.log_path).read_text()  # type: ignore[attr-defined]


# --- a declined card, then another ---------------------------------------------------------------


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_decline_then_pay(
    shop: dict[str, Any],
    merchant_site: RecordingReceiver,
    chromium: Any,
    settings: Any,
    viewport: str,
) -> None:
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 3
    flow = "decline-then-pay"
    page = chromium.new_page()
    page.set_viewport_size(VIEWPORTS[viewport])
    created = initialize(shop, merchant_site)
    reference, checkout_url = created["reference"], created["authorization_url"]

    page.goto(checkout_url)
    assert page.get_by_test_id("expiry").inner_text().startswith("Expires at ")
    assert "WAT (Lagos)" in page.locator("time[datetime]").inner_text()
    countdown_ticks(page)
    marks = page.get_by_test_id("card-brands").locator("img")
    assert marks.evaluate_all("marks => marks.map(m => m.alt)") == ["Verve", "Mastercard", "Visa"]
    assert marks.evaluate_all("marks => marks.every(m => m.complete && m.naturalWidth > 0)")
    assert page.get_by_test_id("secured-by").inner_text() == "Secured by Merchant Payments"
    assert_fits_the_screen(page)
    screenshot(page, flow, viewport, 1, "card-form")

    fill_card(page, DECLINED_CARD)
    assert page.locator('img[data-brand="visa"]').evaluate("m => m.classList.contains('is-match')")
    assert page.locator('img[data-brand="verve"]').evaluate(
        "m => !m.classList.contains('is-match')"
    )
    page.click("#pay-button")
    assert page.get_by_test_id("declined").inner_text() == (
        "Your card was declined. You can try another card — 2 attempts left."
    )
    assert page.url == checkout_url
    assert page.input_value("#card_number") == ""
    assert page.locator("#pay-button").is_enabled()
    assert_fits_the_screen(page)
    screenshot(page, flow, viewport, 2, "declined")
    after_decline = stored(reference)
    assert (after_decline.payment_status, after_decline.no_of_attempts) == ("pending", 1)
    assert event_types(reference) == []

    fill_card(page, PAID_CARD)
    screenshot(page, flow, viewport, 3, "second-card")
    page.click("#pay-button")
    assert_landed_on_callback(page, merchant_site, reference, "paid")
    page.goto(checkout_url)
    assert page.get_by_test_id("result-title").inner_text() == "Payment successful"
    assert page.get_by_test_id("card-used").inner_text() == "Visa ending in 4081"
    assert_fits_the_screen(page)
    screenshot(page, flow, viewport, 4, "paid")

    paid = stored(reference)
    assert (paid.payment_status, paid.no_of_attempts) == ("paid", 2)
    assert paid.amount_paid == Decimal("7205.00")
    assert event_types(reference) == ["transaction.paid"]
    outcomes = in_thread(
        lambda: list(
            TransactionAttempt.objects.filter(transaction__reference=reference)
            .order_by("id")
            .values_list("outcome", "applied")
        )
    )
    assert outcomes == [("failed", False), ("paid", True)]


# --- cancel, asked first -------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_cancel_with_confirmation(
    shop: dict[str, Any],
    merchant_site: RecordingReceiver,
    chromium: Any,
    viewport: str,
) -> None:
    flow = "cancel-with-confirmation"
    page = chromium.new_page()
    page.set_viewport_size(VIEWPORTS[viewport])
    created = initialize(shop, merchant_site)
    reference, checkout_url = created["reference"], created["authorization_url"]
    page.goto(checkout_url)
    screenshot(page, flow, viewport, 1, "page")

    # The page's script asks inline, without leaving the page or a browser dialog.
    page.on("dialog", lambda dialog: pytest.fail(f"unexpected {dialog.type} dialog"))
    page.click("#cancel-link")
    question = page.get_by_test_id("cancel-confirm")
    question.wait_for(state="visible")
    assert question.locator("h2").inner_text() == "Cancel this payment?"
    assert page.url == checkout_url
    assert_fits_the_screen(page)
    screenshot(page, flow, viewport, 2, "confirm-inline")

    page.get_by_test_id("keep-paying").click()
    question.wait_for(state="hidden")
    assert page.locator("#card-form").is_visible()
    assert page.locator("#cancel-link").is_visible()
    assert page.url == checkout_url
    screenshot(page, flow, viewport, 3, "kept-paying")
    assert stored(reference).payment_status == PaymentStatus.PENDING

    # The confirmation as a page of its own (where the link leads without the script).
    page.goto(f"{checkout_url}/cancel")
    assert page.locator("h2#cancel-title").inner_text() == "Cancel this payment?"
    assert_fits_the_screen(page)
    screenshot(page, flow, viewport, 4, "confirm-page")
    page.get_by_test_id("keep-paying").click()
    page.wait_for_url(checkout_url)
    assert page.locator("#card-form").is_visible()
    assert stored(reference).payment_status == PaymentStatus.PENDING

    page.click("#cancel-link")
    page.get_by_test_id("cancel-yes").click()
    assert_landed_on_callback(page, merchant_site, reference, "cancelled")
    page.goto(checkout_url)
    assert page.get_by_test_id("result-title").inner_text() == "Payment cancelled"
    assert_fits_the_screen(page)
    screenshot(page, flow, viewport, 5, "cancelled")
    cancelled = stored(reference)
    assert (cancelled.payment_status, cancelled.no_of_attempts) == ("cancelled", 1)
    assert event_types(reference) == ["transaction.cancelled"]


# --- the countdown reaching zero ------------------------------------------------------------------


def test_countdown_reaching_zero_says_so_and_offers_a_reload(
    shop: dict[str, Any], merchant_site: RecordingReceiver, chromium: Any
) -> None:
    page = chromium.new_page()
    page.set_viewport_size(VIEWPORTS["phone"])
    created = initialize(shop, merchant_site)
    reference, checkout_url = created["reference"], created["authorization_url"]
    in_thread(
        lambda: CollectionTransaction.objects.filter(reference=reference).update(
            expires_at=timezone.now() + timedelta(seconds=3)
        )
    )
    page.goto(checkout_url)
    assert re.fullmatch(r"0:00:0[0-3]", page.get_by_test_id("countdown").inner_text())
    notice = page.get_by_test_id("expired-notice")
    notice.wait_for(state="visible", timeout=10_000)
    assert page.get_by_test_id("expiry").inner_text().startswith("Expired at ")
    assert page.locator("#pay-button").is_disabled()
    screenshot(page, "countdown", "phone", 1, "expired")
    notice.get_by_role("button", name="Reload the page").click()
    assert page.get_by_test_id("result-title").inner_text() == "This payment link has expired"
    screenshot(page, "countdown", "phone", 2, "reloaded")
    assert stored(reference).payment_status == PaymentStatus.EXPIRED

"""The hosted checkout page: states, the sandbox card and transfer forms, redirects, CSRF, and
that no card data is stored or logged."""

from __future__ import annotations

import logging
import re
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import pytest
from django.apps import apps
from django.contrib.staticfiles import finders
from django.core import serializers
from django.test import Client
from django.utils import timezone

from collections_app.checkout import CardPaymentForm, card_brand, luhn_valid
from collections_app.models import (
    Channel,
    CollectionTransaction,
    ConfirmationSource,
    PaymentStatus,
    TransactionAttempt,
)
from collections_app.services import CustomerInfo, transaction_initialize
from collections_app.views import callback_redirect_url
from merchants.models import Mode
from tests.checkout.conftest import CALLBACK_URL
from tests.collections_app.factories import CollectionTransactionFactory
from tests.payment_items.factories import PaymentItemFactory
from webhooks.models import Event

pytestmark = pytest.mark.django_db

PAID_CARD = "4084 0840 8408 4081"
DECLINED_CARD = "4000 0000 0000 0002"
OTHER_VALID_CARD = "4242 4242 4242 4242"
BRAND_SAMPLE_NUMBERS = ("5061020000000000094", "5399838383838381", "4084084084084081")


def future_expiry() -> str:
    return f"12/{(timezone.localdate().year + 3) % 100:02d}"


def page_url(transaction: CollectionTransaction, action: str = "") -> str:
    suffix = f"/{action}" if action else ""
    return f"/checkout/{transaction.reference}{suffix}"


def card_post(  # type: ignore[no-untyped-def]
    client: Client,
    transaction: CollectionTransaction,
    number: str,
    *,
    follow: bool = False,
    **extra: str,
):
    form = {"card_number": number, "expiry": future_expiry(), "cvv": "123", **extra}
    return client.post(page_url(transaction, "card"), form, follow=follow)


def redirect_query(response) -> tuple[str, dict[str, list[str]]]:  # type: ignore[no-untyped-def]
    location = response["Location"]
    parts = urlsplit(location)
    return f"{parts.scheme}://{parts.netloc}{parts.path}", parse_qs(parts.query)


def reload(transaction: CollectionTransaction) -> CollectionTransaction:
    return CollectionTransaction.objects.get(pk=transaction.pk)


# --- pending card ------------------------------------------------------------------------------


def test_pending_card_page_shows_the_payment_and_the_card_form(
    client: Client, card_transaction: CollectionTransaction, django_assert_num_queries
) -> None:
    with django_assert_num_queries(1):
        response = client.get(page_url(card_transaction))
    assert response.status_code == 200
    html = response.content.decode()
    for text in (
        "Ade Academy",
        card_transaction.merchant.name,
        "Tuition",
        "₦7,000.00",
        "₦205.00",
        "₦7,205.00",
        card_transaction.reference,
        'id="card-form"',
        "csrfmiddlewaretoken",
        "4084 0840 8408 4081",
        "Test mode",
    ):
        assert text in html, text
    assert f'action="/checkout/{card_transaction.reference}/card"' in html
    assert "/static/checkout/checkout.js" in html
    assert "/static/checkout/checkout.css" in html


def test_checkout_answers_are_not_cached_and_lock_down_content(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    response = client.get(page_url(card_transaction))
    assert response["Cache-Control"] == "no-store"
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"
    # Not "no-referrer": browsers then send "Origin: null" on the form posts, which Django's
    # CSRF origin check refuses.
    assert response["Referrer-Policy"] == "same-origin"


def test_a_post_from_the_pages_own_origin_passes_the_csrf_origin_check(
    card_transaction: CollectionTransaction,
) -> None:
    client = Client(enforce_csrf_checks=True)
    html = client.get(page_url(card_transaction)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    foreign = client.post(
        page_url(card_transaction, "cancel"),
        {"csrfmiddlewaretoken": token},
        HTTP_ORIGIN="https://evil.example",
    )
    assert foreign.status_code == 403
    same = client.post(
        page_url(card_transaction, "cancel"),
        {"csrfmiddlewaretoken": token},
        HTTP_ORIGIN="http://testserver",
    )
    assert same.status_code == 303


def test_paid_test_card_confirms_and_redirects_to_the_callback(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    response = card_post(client, card_transaction, PAID_CARD)
    assert response.status_code == 303
    base, query = redirect_query(response)
    assert base == "https://merchant.example.com/payments/callback"
    assert query == {
        "order": ["42"],
        "reference": [card_transaction.reference],
        "status": ["paid"],
    }
    paid = reload(card_transaction)
    assert paid.payment_status == PaymentStatus.PAID
    assert paid.amount_paid == Decimal("7205.00")
    assert paid.gateway_used == "sandbox"
    assert paid.meta_data == {"card": {"brand": "visa", "last4": "4081"}}
    attempt = TransactionAttempt.objects.get(transaction=card_transaction)
    assert attempt.source == ConfirmationSource.CHECKOUT
    assert attempt.applied is True
    assert attempt.meta == {"card": {"brand": "visa", "last4": "4081"}}
    assert Event.objects.get(transaction=card_transaction).event_type == "transaction.paid"


def test_declined_card_below_the_limit_keeps_the_transaction_pending(
    client: Client, card_transaction: CollectionTransaction, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 3
    response = card_post(client, card_transaction, DECLINED_CARD)
    assert response.status_code == 303
    assert response["Location"] == page_url(card_transaction)
    pending = reload(card_transaction)
    assert pending.payment_status == PaymentStatus.PENDING
    assert pending.no_of_attempts == 1
    assert pending.meta_data is None
    assert pending.gateway_reference is None
    attempt = TransactionAttempt.objects.get(transaction=card_transaction)
    assert (attempt.outcome, attempt.applied, attempt.source) == ("failed", False, "checkout")
    assert attempt.meta == {"card": {"brand": "visa", "last4": "0002"}}
    assert (
        attempt.note == "declined (attempt 1 of 3); the transaction stays pending for another try"
    )
    assert not Event.objects.exists()


def test_page_after_a_decline_says_so_and_shows_the_card_form_again(
    client: Client, card_transaction: CollectionTransaction, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 3
    response = card_post(client, card_transaction, DECLINED_CARD, follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    assert (
        '<div class="alert" role="alert" data-testid="declined">Your card was declined. '
        "You can try another card — 2 attempts left.</div>"
    ) in html
    assert 'id="card-form"' in html
    assert "4000000000000002" not in html


def test_the_last_attempt_left_is_named_in_the_singular(
    client: Client, card_transaction: CollectionTransaction, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 3
    card_post(client, card_transaction, DECLINED_CARD)
    html = card_post(client, card_transaction, DECLINED_CARD, follow=True).content.decode()
    assert "You can try another card — 1 attempt left." in html
    assert reload(card_transaction).no_of_attempts == 2


def test_a_fresh_page_shows_no_decline(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    html = client.get(page_url(card_transaction)).content.decode()
    assert 'data-testid="declined"' not in html
    assert "Your card was declined" not in html
    assert "the payment fails after 3 declined cards" in html  # the test-card hint


def test_the_decline_that_reaches_the_limit_fails_the_transaction(
    client: Client, card_transaction: CollectionTransaction, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 3
    for _ in range(2):
        assert card_post(client, card_transaction, DECLINED_CARD)["Location"] == page_url(
            card_transaction
        )
    response = card_post(client, card_transaction, DECLINED_CARD)
    assert response.status_code == 303
    assert redirect_query(response)[1]["status"] == ["failed"]
    failed = reload(card_transaction)
    assert failed.payment_status == PaymentStatus.FAILED
    assert failed.no_of_attempts == 3
    assert failed.paid_at is None
    assert failed.meta_data == {"card": {"brand": "visa", "last4": "0002"}}
    assert Event.objects.get(transaction=card_transaction).event_type == "transaction.failed"
    applied = TransactionAttempt.objects.filter(transaction=card_transaction)
    assert list(applied.values_list("applied", flat=True)) == [False, False, True]


def test_a_limit_of_one_fails_on_the_first_decline(
    client: Client, card_transaction: CollectionTransaction, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 1
    response = card_post(client, card_transaction, DECLINED_CARD)
    assert redirect_query(response)[1]["status"] == ["failed"]
    assert reload(card_transaction).payment_status == PaymentStatus.FAILED


def test_a_good_card_after_a_decline_pays(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    card_post(client, card_transaction, DECLINED_CARD)
    response = card_post(client, card_transaction, PAID_CARD)
    assert response.status_code == 303
    assert redirect_query(response)[1]["status"] == ["paid"]
    paid = reload(card_transaction)
    assert paid.payment_status == PaymentStatus.PAID
    assert paid.no_of_attempts == 2
    assert paid.amount_paid == Decimal("7205.00")
    assert paid.meta_data == {"card": {"brand": "visa", "last4": "4081"}}
    assert Event.objects.get(transaction=card_transaction).event_type == "transaction.paid"


def test_result_page_after_the_final_decline_shows_the_card_used(
    client: Client, card_transaction: CollectionTransaction, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 1
    card_post(client, card_transaction, DECLINED_CARD)
    html = client.get(page_url(card_transaction)).content.decode()
    assert "Payment declined" in html
    assert "Visa ending in 0002" in html
    assert 'id="card-form"' not in html
    assert 'data-testid="declined"' not in html


def test_another_valid_card_is_refused_with_the_test_cards_named(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    response = card_post(client, card_transaction, OTHER_VALID_CARD)
    assert response.status_code == 400
    html = response.content.decode()
    assert "can&#x27;t be used in test mode" in html
    assert "4084 0840 8408 4081" in html
    assert reload(card_transaction).payment_status == PaymentStatus.PENDING
    assert not TransactionAttempt.objects.exists()
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("card_number", "4084 0840 8408 4082", "not valid; check the digits"),
        ("card_number", "4084 08x0 8408 4081", "12 to 19 digits"),
        ("card_number", "40840840", "12 to 19 digits"),
        ("card_number", "", "This field is required"),
        ("expiry", "01/20", "This card has expired"),
        ("expiry", "13/30", "month must be 01 to 12"),
        ("expiry", "1230", "as MM/YY"),
        ("cvv", "12", "3 or 4 digits"),
        ("cvv", "12a", "3 or 4 digits"),
        ("cvv", "12345", "Ensure this value has at most 4 characters"),
    ],
)
def test_server_rejects_bad_card_input(
    client: Client, card_transaction: CollectionTransaction, field: str, value: str, message: str
) -> None:
    form = {"card_number": PAID_CARD, "expiry": future_expiry(), "cvv": "123", field: value}
    response = client.post(page_url(card_transaction, "card"), form)
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert re.search(rf'id="{field}"[^>]*aria-invalid="true"', html, re.S)
    assert reload(card_transaction).payment_status == PaymentStatus.PENDING
    assert not TransactionAttempt.objects.exists()


def test_a_rejected_form_does_not_echo_the_card_number(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    response = card_post(client, card_transaction, PAID_CARD, cvv="1")
    assert response.status_code == 400
    html = response.content.decode()
    assert "4084 0840 8408 4081" in html  # the documented test card hint
    assert "4084084084084081" not in html
    assert 'value="4084' not in html


def test_expiry_this_month_is_accepted() -> None:
    today = date(2026, 5, 31)
    form = CardPaymentForm(
        {"card_number": PAID_CARD, "expiry": "05/26", "cvv": "1234"}, today=today
    )
    assert form.is_valid(), form.errors
    expired = CardPaymentForm(
        {"card_number": PAID_CARD, "expiry": "04/26", "cvv": "123"}, today=today
    )
    assert not expired.is_valid()
    assert expired.errors["expiry"] == ["This card has expired."]


@pytest.mark.parametrize(
    ("number", "valid"),
    [
        ("4084084084084081", True),
        ("4000000000000002", True),
        ("4242424242424242", True),
        ("5061020000000000094", True),
        ("4084084084084082", False),
        ("1234567812345678", False),
    ],
)
def test_luhn(number: str, valid: bool) -> None:
    assert luhn_valid(number) is valid


@pytest.mark.parametrize(
    ("number", "brand"),
    [
        ("4084084084084081", "visa"),
        ("5399838383838381", "mastercard"),
        ("2223000048400011", "mastercard"),
        ("5061020000000000094", "verve"),
        ("378282246310005", "amex"),
        ("6011000990139424", "card"),
    ],
)
def test_card_brand(number: str, brand: str) -> None:
    assert card_brand(number) == brand


# --- bank transfer -----------------------------------------------------------------------------


def test_bank_transfer_page_shows_the_account_and_exact_amount(
    client: Client, transfer_transaction: CollectionTransaction
) -> None:
    html = client.get(page_url(transfer_transaction)).content.decode()
    assert "9012345678" in html
    assert "Sandbox Collections Bank" in html
    assert 'data-testid="transfer-amount">₦7,205.00<' in html
    assert "sent the transfer (simulate)" in html
    assert 'id="card-form"' not in html


def test_simulated_transfer_pays_the_exact_amount(
    client: Client, transfer_transaction: CollectionTransaction
) -> None:
    response = client.post(page_url(transfer_transaction, "transfer"))
    assert response.status_code == 303
    assert redirect_query(response)[1]["status"] == ["paid"]
    paid = reload(transfer_transaction)
    assert paid.payment_status == PaymentStatus.PAID
    assert paid.amount_paid == Decimal("7205.00")
    attempt = TransactionAttempt.objects.get(transaction=transfer_transaction)
    assert (attempt.source, attempt.amount_paid) == ("checkout", Decimal("7205.00"))


def test_bank_channel_gets_a_sandbox_account_on_its_checkout_page(
    client: Client, fee_schedule
) -> None:  # type: ignore[no-untyped-def]
    item = PaymentItemFactory(amount=Decimal("7000.00"))
    created = transaction_initialize(
        merchant=item.merchant,
        mode=Mode.TEST,
        payment_item_id=item.pk,
        transaction_reference="bank-1",
        channel=Channel.BANK,
        amount=Decimal("7000.00"),
        customer_info=CustomerInfo("ada@example.com", "08031234567", "Ada", "Obi"),
        callback_url="https://93.184.216.34/callback",
    ).transaction
    assert created.authorization_url.endswith(f"/checkout/{created.reference}")
    html = client.get(page_url(created)).content.decode()
    assert created.virtual_account_number in html
    assert "sent the transfer (simulate)" in html
    response = client.post(page_url(created, "transfer"))
    assert response.status_code == 303
    assert reload(created).payment_status == PaymentStatus.PAID


def test_card_only_and_transfer_only_actions(
    client: Client,
    card_transaction: CollectionTransaction,
    transfer_transaction: CollectionTransaction,
) -> None:
    assert client.post(page_url(card_transaction, "transfer")).status_code == 400
    assert card_post(client, transfer_transaction, PAID_CARD).status_code == 400
    assert reload(card_transaction).payment_status == PaymentStatus.PENDING
    assert reload(transfer_transaction).payment_status == PaymentStatus.PENDING


def test_customer_can_cancel(client: Client, card_transaction: CollectionTransaction) -> None:
    response = client.post(page_url(card_transaction, "cancel"))
    assert response.status_code == 303
    assert redirect_query(response)[1]["status"] == ["cancelled"]
    assert reload(card_transaction).payment_status == PaymentStatus.CANCELLED


# --- cancel asks first -------------------------------------------------------------------------


def test_cancel_on_the_page_is_a_link_to_the_confirmation(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    html = client.get(page_url(card_transaction)).content.decode()
    link = re.search(r'<a [^>]*id="cancel-link"[^>]*>Cancel payment</a>', html)
    assert link is not None
    assert f'href="/checkout/{card_transaction.reference}/cancel"' in link.group(0)
    # The same question inline, hidden until the page's script opens it.
    panel = re.search(r'<section [^>]*id="cancel-confirm"[^>]*>', html).group(0)
    assert "data-cancel-panel hidden" in panel


def test_confirmation_step_asks_before_cancelling(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    response = client.get(page_url(card_transaction, "cancel"))
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    html = response.content.decode()
    assert "<title>Cancel this payment? &middot; Ade Academy</title>" in html
    assert '<h2 id="cancel-title" tabindex="-1">Cancel this payment?</h2>' in html
    assert "₦7,205.00" in html
    form = re.search(r'<form method="post" action="([^"]+)"[^>]*>(.*?)</form>', html, re.S)
    assert form.group(1) == page_url(card_transaction, "cancel")
    assert "csrfmiddlewaretoken" in form.group(2)
    assert ">Yes, cancel</button>" in form.group(2)
    keep = re.search(r'<a class="button" href="([^"]+)"[^>]*>Keep paying</a>', html)
    assert keep.group(1) == page_url(card_transaction)
    assert "data-cancel-panel" not in html  # shown as it is, no script needed
    assert reload(card_transaction).payment_status == PaymentStatus.PENDING
    assert not TransactionAttempt.objects.exists()


def test_confirming_on_the_confirmation_step_cancels(
    card_transaction: CollectionTransaction,
) -> None:
    client = Client(enforce_csrf_checks=True)
    html = client.get(page_url(card_transaction, "cancel")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = client.post(
        page_url(card_transaction, "cancel"),
        {"csrfmiddlewaretoken": token},
        HTTP_ORIGIN="http://testserver",
    )
    assert response.status_code == 303
    assert redirect_query(response)[1]["status"] == ["cancelled"]
    assert reload(card_transaction).payment_status == PaymentStatus.CANCELLED
    assert Event.objects.get(transaction=card_transaction).event_type == "transaction.cancelled"


@pytest.mark.parametrize("status", [PaymentStatus.PAID, PaymentStatus.CANCELLED])
def test_confirmation_step_of_a_final_transaction_goes_back_to_the_page(
    client: Client, status: str
) -> None:
    paid_at = timezone.now() if status == PaymentStatus.PAID else None
    txn = CollectionTransactionFactory(payment_status=status, paid_at=paid_at)
    response = client.get(page_url(txn, "cancel"))
    assert response.status_code == 303
    assert response["Location"] == page_url(txn)


def test_confirmation_step_of_a_live_transaction_goes_back_to_the_page(client: Client) -> None:
    txn = CollectionTransactionFactory(
        mode=Mode.LIVE, authorization_url="https://checkout.paystack.com/abc123"
    )
    response = client.get(page_url(txn, "cancel"))
    assert response.status_code == 303
    assert response["Location"] == page_url(txn)
    assert reload(txn).payment_status == PaymentStatus.PENDING


def test_confirmation_step_of_an_unknown_reference_is_a_404_page(client: Client, db: None) -> None:
    response = client.get("/checkout/TXN_UNKNOWN/cancel")
    assert response.status_code == 404
    assert "Payment link not found" in response.content.decode()


# --- expiry --------------------------------------------------------------------------------------


def test_expiry_is_shown_with_its_time_zone_and_a_countdown(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    expires_at = timezone.now() + timedelta(hours=23, minutes=41, seconds=30)
    CollectionTransaction.objects.filter(pk=card_transaction.pk).update(expires_at=expires_at)
    html = client.get(page_url(card_transaction)).content.decode()
    lagos = expires_at.astimezone(ZoneInfo("Africa/Lagos"))
    expected_text = f"{lagos:%H:%M} WAT (Lagos), {lagos.day} {lagos:%b %Y}"
    time_tag = re.search(r"<time ([^>]*)>([^<]*)</time>", html)
    assert time_tag.group(2) == expected_text
    assert f'datetime="{lagos.isoformat(timespec="seconds")}"' in time_tag.group(1)
    assert lagos.isoformat(timespec="seconds").endswith("+01:00")
    seconds_left = int(re.search(r'data-seconds-left="(\d+)"', time_tag.group(1)).group(1))
    assert 23 * 3600 + 41 * 60 + 25 <= seconds_left <= 23 * 3600 + 41 * 60 + 30
    countdown = re.search(r'data-testid="countdown">([^<]*)</span> left', html).group(1)
    assert re.fullmatch(r"23:41:(2[5-9]|30)", countdown)
    assert "Expires at" in html
    assert 'data-expired-notice data-testid="expired-notice" hidden' in html


def test_expiry_is_also_named_on_the_transfer_instructions(
    client: Client, transfer_transaction: CollectionTransaction
) -> None:
    html = client.get(page_url(transfer_transaction)).content.decode()
    lagos = transfer_transaction.expires_at.astimezone(ZoneInfo("Africa/Lagos"))
    assert f"It can be used until {lagos:%H:%M} WAT (Lagos), {lagos.day} {lagos:%b %Y}." in html


def test_final_transaction_shows_no_expiry(client: Client) -> None:
    txn = CollectionTransactionFactory(payment_status=PaymentStatus.CANCELLED)
    html = client.get(page_url(txn)).content.decode()
    assert "<time" not in html
    assert "Expires at" not in html


# --- copy buttons --------------------------------------------------------------------------------


def test_transfer_page_has_copy_buttons_for_the_account_number_and_amount(
    client: Client, transfer_transaction: CollectionTransaction
) -> None:
    html = client.get(page_url(transfer_transaction)).content.decode()
    buttons = re.findall(r'<button type="button" class="copy"([^>]*)>Copy</button>', html)
    assert len(buttons) == 2
    account, amount = buttons
    assert 'data-copy="9012345678"' in account
    assert 'aria-label="Copy account number 9012345678"' in account
    assert 'data-copy="7205.00"' in amount  # what a banking app accepts: no sign, no commas
    assert 'aria-label="Copy amount 7205.00"' in amount
    assert " hidden" in account  # shown by the script, which is what makes them work
    assert re.search(r'<p class="visually-hidden" role="status" aria-live="polite"', html)
    assert "/static/checkout/checkout.js" in html


def test_card_page_has_no_copy_buttons(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    assert "data-copy=" not in client.get(page_url(card_transaction)).content.decode()


# --- card brands and the secured line ------------------------------------------------------------


def test_card_form_shows_the_brand_marks_and_the_secured_line(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    html = client.get(page_url(card_transaction)).content.decode()
    marks = re.findall(
        r'<img class="brand" src="([^"]+)" alt="([^"]+)"[^>]*data-brand="(\w+)"', html
    )
    assert marks == [
        ("/static/checkout/brand-verve.svg", "Verve", "verve"),
        ("/static/checkout/brand-mastercard.svg", "Mastercard", "mastercard"),
        ("/static/checkout/brand-visa.svg", "Visa", "visa"),
    ]
    assert {brand for _, _, brand in marks} <= {card_brand(n) for n in BRAND_SAMPLE_NUMBERS}
    assert '<img src="/static/checkout/lock.svg" alt=""' in html
    assert "Secured by Merchant Payments" in html


@pytest.mark.parametrize(
    "name", ["brand-verve.svg", "brand-mastercard.svg", "brand-visa.svg", "lock.svg"]
)
def test_brand_marks_are_served_from_our_static_files(settings, name: str) -> None:  # type: ignore[no-untyped-def]
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True
    response = Client().get(f"/static/checkout/{name}")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert body == Path(finders.find(f"checkout/{name}")).read_bytes()
    assert body.startswith(b'<svg xmlns="http://www.w3.org/2000/svg"')


# --- terminal, expired, unknown ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "title"),
    [
        (PaymentStatus.PAID, "Payment successful"),
        (PaymentStatus.FAILED, "Payment declined"),
        (PaymentStatus.CANCELLED, "Payment cancelled"),
        (PaymentStatus.EXPIRED, "This payment link has expired"),
    ],
)
def test_terminal_transaction_shows_its_result_and_no_forms(
    client: Client, status: str, title: str
) -> None:
    paid_at = timezone.now() if status == PaymentStatus.PAID else None
    txn = CollectionTransactionFactory(
        payment_status=status, paid_at=paid_at, callback_url=CALLBACK_URL
    )
    response = client.get(page_url(txn))
    assert response.status_code == 200
    html = response.content.decode()
    assert title in html
    assert "<form" not in html
    assert "checkout.js" not in html
    assert (
        f'href="https://merchant.example.com/payments/callback?order=42&amp;reference='
        f'{txn.reference}&amp;status={status}"' in html
    )


@pytest.mark.parametrize("action", ["card", "transfer", "cancel"])
def test_terminal_transaction_refuses_every_post(client: Client, action: str) -> None:
    txn = CollectionTransactionFactory(payment_status=PaymentStatus.FAILED)
    form = {"card_number": PAID_CARD, "expiry": future_expiry(), "cvv": "123"}
    response = client.post(page_url(txn, action), form)
    assert response.status_code == 409
    assert "already complete" in response.content.decode()
    assert reload(txn).payment_status == PaymentStatus.FAILED
    assert not TransactionAttempt.objects.exists()


def test_pending_transaction_past_its_expiry_is_expired_when_opened(client: Client) -> None:
    txn = CollectionTransactionFactory(expires_at=timezone.now() - timedelta(minutes=1))
    response = client.get(page_url(txn))
    assert response.status_code == 200
    assert "This payment link has expired" in response.content.decode()
    assert reload(txn).payment_status == PaymentStatus.EXPIRED
    assert Event.objects.get(transaction=txn).event_type == "transaction.expired"
    refused = card_post(client, txn, PAID_CARD)
    assert refused.status_code == 409
    assert reload(txn).payment_status == PaymentStatus.EXPIRED


@pytest.mark.parametrize("reference", ["TXN_UNKNOWN", "X" * 41])
def test_unknown_reference_is_a_404_page(client: Client, db: None, reference: str) -> None:
    response = client.get(f"/checkout/{reference}")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "Payment link not found" in response.content.decode()
    assert client.post(f"/checkout/{reference}/card", {}).status_code == 404


@pytest.mark.parametrize("reference", ["%00", "TXN_%00", "ab%00c", "TXN_%01%1F", "%7F"])
@pytest.mark.parametrize(
    ("method", "action"),
    [
        ("get", ""),
        ("post", "/card"),
        ("post", "/transfer"),
        ("post", "/cancel"),
        ("get", "/return"),
    ],
)
def test_a_reference_holding_control_characters_is_a_404_page(
    card_transaction: CollectionTransaction, reference: str, method: str, action: str
) -> None:
    """A NUL in the reference reached PostgreSQL, which refuses it in a query: a 500, and a
    JSON one on an HTML page."""
    client = Client(raise_request_exception=False)
    form = {"card_number": PAID_CARD, "expiry": future_expiry(), "cvv": "123"}
    url = f"/checkout/{reference}{action}"
    response = client.get(url) if method == "get" else client.post(url, form)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "Payment link not found" in response.content.decode()
    assert reload(card_transaction).payment_status == PaymentStatus.PENDING
    assert not TransactionAttempt.objects.exists()


@pytest.mark.parametrize("reference", ["TXN_%ED%A0%80", "%C3%28", "TXN_%E2%80%AE"])
def test_a_reference_that_is_not_text_is_a_404_page(client: Client, db: None, reference) -> None:
    response = client.get(f"/checkout/{reference}")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert client.post(f"/checkout/{reference}/cancel").status_code == 404


def test_get_is_not_accepted_on_actions(client: Client, card_transaction) -> None:  # type: ignore[no-untyped-def]
    assert client.get(page_url(card_transaction, "card")).status_code == 405
    assert client.post(page_url(card_transaction)).status_code == 405


# --- CSRF --------------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["card", "transfer", "cancel"])
def test_posts_without_a_csrf_token_are_refused(
    card_transaction: CollectionTransaction, action: str
) -> None:
    client = Client(enforce_csrf_checks=True)
    form = {"card_number": PAID_CARD, "expiry": future_expiry(), "cvv": "123"}
    response = client.post(page_url(card_transaction, action), form)
    assert response.status_code == 403
    assert "Please try again" in response.content.decode()
    assert reload(card_transaction).payment_status == PaymentStatus.PENDING


def test_post_with_the_pages_csrf_token_is_accepted(
    card_transaction: CollectionTransaction,
) -> None:
    client = Client(enforce_csrf_checks=True)
    html = client.get(page_url(card_transaction)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = card_post(client, card_transaction, PAID_CARD, csrfmiddlewaretoken=token)
    assert response.status_code == 303
    assert reload(card_transaction).payment_status == PaymentStatus.PAID


# --- live mode ---------------------------------------------------------------------------------


def test_live_transaction_page_offers_no_sandbox_actions(client: Client) -> None:
    txn = CollectionTransactionFactory(
        mode=Mode.LIVE, authorization_url="https://checkout.paystack.com/abc123"
    )
    html = client.get(page_url(txn)).content.decode()
    assert "Test mode" not in html
    assert 'id="card-form"' not in html
    assert "simulate" not in html
    assert "Cancel payment" not in html
    assert 'href="https://checkout.paystack.com/abc123"' in html
    for action in ("card", "transfer", "cancel"):
        response = (
            card_post(client, txn, PAID_CARD)
            if action == "card"
            else client.post(page_url(txn, action))
        )
        assert response.status_code == 403
    assert reload(txn).payment_status == PaymentStatus.PENDING


def test_return_route_in_test_mode_goes_back_to_the_page(
    client: Client, card_transaction: CollectionTransaction
) -> None:
    response = client.get(page_url(card_transaction, "return"))
    assert response.status_code == 303
    assert response["Location"] == page_url(card_transaction)


# --- callback URL ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("callback_url", "expected"),
    [
        ("https://shop.example/cb", "https://shop.example/cb?reference=TXN_1&status=paid"),
        (
            "https://shop.example/cb?order=1&x=",
            "https://shop.example/cb?order=1&x=&reference=TXN_1&status=paid",
        ),
        (
            "https://shop.example/cb?status=old&reference=evil&a=1",
            "https://shop.example/cb?a=1&reference=TXN_1&status=paid",
        ),
        (
            "https://shop.example/cb#done",
            "https://shop.example/cb?reference=TXN_1&status=paid#done",
        ),
    ],
)
def test_callback_redirect_url(callback_url: str, expected: str) -> None:
    assert callback_redirect_url(callback_url, reference="TXN_1", status="paid") == expected


# --- no card data kept ---------------------------------------------------------------------------


def _database_dump() -> str:
    return "\n".join(
        serializers.serialize("json", model.objects.all())
        for model in apps.get_models()
        if model._meta.managed
    )


@pytest.mark.parametrize("number", [PAID_CARD, DECLINED_CARD, OTHER_VALID_CARD])
def test_card_number_and_cvv_are_never_stored_or_logged(
    client: Client,
    card_transaction: CollectionTransaction,
    caplog: pytest.LogCaptureFixture,
    number: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    cvv = "7391"
    card_post(client, card_transaction, number, cvv=cvv)
    card_post(client, card_transaction, number, cvv="7")  # a rejected form too
    digits = number.replace(" ", "")
    dump = _database_dump()
    assert digits not in dump
    assert number not in dump
    assert digits[:12] not in dump
    assert f'"{cvv}"' not in dump
    assert "cvv" not in dump.lower()
    logged = caplog.text + " ".join(repr(record.__dict__) for record in caplog.records)
    assert digits not in logged
    assert number not in logged
    assert cvv not in logged

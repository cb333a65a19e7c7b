"""The hosted checkout (server-rendered HTML, not part of the JSON API).

``GET /checkout/<reference>`` shows what is being paid for, when the link expires (local time
with its zone, and a countdown the page's script keeps running) and, for a pending test-mode
transaction, the sandbox form for its channel. Each outcome goes through
``transaction_confirm`` (like the test helper) and then sends the customer to the transaction's
``callback_url`` with ``reference`` and ``status`` added to its query string (303 See Other).
A declined card below ``COLLECTION_CARD_ATTEMPT_LIMIT`` sends the customer back to the page
instead (303), which says so and shows the card form again. ``GET .../cancel`` asks for
confirmation; only the ``POST`` from it cancels.

A final transaction shows its result and accepts nothing (409); an expired one says so; an
unknown reference is a 404 page. Live transactions are paid on the provider's page; the page
here links to it and offers no sandbox buttons (POSTs answer 403).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import render
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.debug import sensitive_post_parameters

from collections_app.checkout import (
    CARD_BRAND_MARKS,
    NOT_A_TEST_CARD,
    TEST_CARD_DECLINED,
    TEST_CARD_PAID,
    TRANSFER_CHANNELS,
    CardPaymentForm,
    card_attempt_limit,
    card_declined_notice,
    checkout_cancel,
    checkout_card_pay,
    checkout_transfer_simulate,
)
from collections_app.models import Channel, CollectionTransaction, PaymentStatus
from collections_app.provider_verify import transaction_provider_verify
from collections_app.providers.registry import SANDBOX, collection_provider_name
from collections_app.selectors import transaction_get_for_checkout
from collections_app.services import (
    ConfirmationResult,
    transaction_expire,
)
from core.dates import local_clock_text, local_isoformat, local_text
from core.exceptions import ApplicationError
from core.money import format_amount

logger = logging.getLogger(__name__)

PAGE_TEMPLATE = "checkout/page.html"
CANCEL_TEMPLATE = "checkout/cancel.html"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
RESULT_TEXT: dict[str, tuple[str, str]] = {
    PaymentStatus.PAID: ("Payment successful", "Your payment was received."),
    PaymentStatus.FAILED: (
        "Payment declined",
        "The payment did not go through and you were not charged.",
    ),
    PaymentStatus.CANCELLED: ("Payment cancelled", "This payment was cancelled."),
    PaymentStatus.EXPIRED: (
        "This payment link has expired",
        "It can no longer be paid. Ask the merchant for a new payment link.",
    ),
}


class HttpResponseSeeOther(HttpResponseRedirect):
    status_code = 303


def callback_redirect_url(callback_url: str, *, reference: str, status: str) -> str:
    """``callback_url`` with ``reference`` and ``status`` set in its query string (other
    parameters kept in order)."""
    parts = urlsplit(callback_url)
    query = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if name not in ("reference", "status")
    ]
    query += [("reference", reference), ("status", status)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def naira(amount: Decimal) -> str:
    return f"₦{amount:,.2f}"


def _group_digits(number: str) -> str:
    return " ".join(number[i : i + 4] for i in range(0, len(number), 4))


def countdown_text(seconds: int) -> str:
    """``23:41:05``: hours (any number), minutes and seconds left."""
    hours, rest = divmod(max(seconds, 0), 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


@dataclass(frozen=True)
class CheckoutExpiry:
    """When a pending checkout link expires, as the page shows it: ``text`` is the local time
    with its zone (``08:05 WAT (Lagos), 24 Nov 2026``), ``iso`` the instant with its offset
    for ``<time datetime>``, ``full`` the same to the second (its tooltip), ``seconds_left``
    what the page's script counts down from and ``left`` the countdown at render time."""

    text: str
    iso: str
    full: str
    seconds_left: int
    left: str

    @classmethod
    def of(cls, expires_at: datetime) -> CheckoutExpiry:
        # Rounded up: the countdown never reaches zero before the link has expired.
        seconds_left = max(math.ceil((expires_at - timezone.now()).total_seconds()), 0)
        return cls(
            text=local_clock_text(expires_at),
            iso=local_isoformat(expires_at),
            full=local_text(expires_at),
            seconds_left=seconds_left,
            left=countdown_text(seconds_left),
        )


class CheckoutView(View):
    """Loads the transaction (404 when unknown), expires it when its time is up, and marks
    every answer private and uncacheable."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = super().dispatch(request, *args, **kwargs)
        response["Cache-Control"] = "no-store"
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response["Referrer-Policy"] = "same-origin"
        return response

    @staticmethod
    def load(reference: str) -> CollectionTransaction:
        found = transaction_get_for_checkout(reference=reference)
        if found is None:
            raise Http404("Unknown checkout reference")
        if found.payment_status == PaymentStatus.PENDING and found.expires_at <= timezone.now():
            transaction_expire(transaction_id=found.pk)
            found = transaction_get_for_checkout(reference=reference)
            if found is None:
                raise Http404("Unknown checkout reference")
        return found

    @staticmethod
    def sandbox(collection: CollectionTransaction) -> bool:
        return collection_provider_name(collection.mode) == SANDBOX

    def page(
        self,
        request: HttpRequest,
        collection: CollectionTransaction,
        *,
        status: int = 200,
        form: CardPaymentForm | None = None,
        error: str = "",
        template: str = PAGE_TEMPLATE,
    ) -> HttpResponse:
        pending = collection.payment_status == PaymentStatus.PENDING
        sandbox = self.sandbox(collection)
        own_page = f"/checkout/{collection.reference}"
        provider_url = collection.authorization_url or ""
        title, detail = RESULT_TEXT.get(collection.payment_status, ("", ""))
        show_card_form = sandbox and pending and collection.channel == Channel.CARD
        context = {
            "transaction": collection,
            "business_name": collection.business.business_name,
            "merchant_name": collection.merchant.name,
            "item_name": collection.payment_item.name,
            "amount": naira(collection.amount),
            "fee": naira(collection.transaction_fee),
            "total": naira(collection.amount_to_be_paid),
            "reference": collection.reference,
            "status": collection.payment_status,
            "pending": pending,
            "test_mode": sandbox,
            "own_page": own_page,
            "show_card_form": show_card_form,
            "show_transfer": (
                sandbox
                and pending
                and collection.channel in TRANSFER_CHANNELS
                and bool(collection.virtual_account_number)
            ),
            "show_cancel": sandbox and pending,
            "provider_url": (
                provider_url
                if not sandbox and pending and provider_url and own_page not in provider_url
                else ""
            ),
            "result_title": title,
            "result_detail": detail,
            "return_url": (
                ""
                if pending
                else callback_redirect_url(
                    collection.callback_url,
                    reference=collection.reference,
                    status=collection.payment_status,
                )
            ),
            "card": (collection.meta_data or {}).get("card"),
            "form_errors": form.errors if form is not None else {},
            "error": error,
            "test_card_paid": _group_digits(TEST_CARD_PAID),
            "test_card_declined": _group_digits(TEST_CARD_DECLINED),
            "expiry": CheckoutExpiry.of(collection.expires_at) if pending else None,
            "declined": (
                card_declined_notice(collection=collection) if show_card_form and not error else ""
            ),
            "card_brands": CARD_BRAND_MARKS,
            "card_attempt_limit": card_attempt_limit(),
            "copy_amount": format_amount(collection.amount_to_be_paid),
        }
        return render(request, template, context, status=status)

    def refusal(
        self, request: HttpRequest, collection: CollectionTransaction, *, channels: frozenset
    ) -> HttpResponse | None:
        """The page with a message when this POST cannot be accepted, else ``None``."""
        if collection.payment_status != PaymentStatus.PENDING:
            return self.page(
                request,
                collection,
                status=409,
                error="This payment is already complete; nothing more can be done here.",
            )
        if not self.sandbox(collection):
            return self.page(
                request,
                collection,
                status=403,
                error="Test-mode payment options are not available for live payments.",
            )
        if collection.channel not in channels:
            return self.page(
                request,
                collection,
                status=400,
                error="This payment method is not available for this payment.",
            )
        return None

    def outcome(self, request: HttpRequest, result: ConfirmationResult) -> HttpResponse:
        if result.attempts_left is not None:
            # Declined, and the customer may try another card: back to the page (which says so).
            return HttpResponseSeeOther(f"/checkout/{result.transaction.reference}")
        collection = self.load(result.transaction.reference)
        if not result.applied:
            return self.page(
                request,
                collection,
                status=409,
                error="This payment is already complete; nothing more can be done here.",
            )
        return HttpResponseSeeOther(
            callback_redirect_url(
                collection.callback_url,
                reference=collection.reference,
                status=collection.payment_status,
            )
        )


class CheckoutPageView(CheckoutView):
    http_method_names = ["get", "head"]

    def get(self, request: HttpRequest, reference: str) -> HttpResponse:
        return self.page(request, self.load(reference))


@method_decorator(sensitive_post_parameters("card_number", "expiry", "cvv"), name="dispatch")
class CheckoutCardPayView(CheckoutView):
    http_method_names = ["post"]

    def post(self, request: HttpRequest, reference: str) -> HttpResponse:
        collection = self.load(reference)
        refused = self.refusal(request, collection, channels=frozenset({Channel.CARD}))
        if refused is not None:
            return refused
        form = CardPaymentForm(request.POST)
        if not form.is_valid():
            return self.page(request, collection, status=400, form=form)
        outcome = form.test_outcome()
        if outcome is None:
            return self.page(request, collection, status=400, error=NOT_A_TEST_CARD)
        result = checkout_card_pay(collection=collection, outcome=outcome, card=form.summary())
        return self.outcome(request, result)


class CheckoutTransferSimulateView(CheckoutView):
    http_method_names = ["post"]

    def post(self, request: HttpRequest, reference: str) -> HttpResponse:
        collection = self.load(reference)
        refused = self.refusal(request, collection, channels=TRANSFER_CHANNELS)
        if refused is not None:
            return refused
        return self.outcome(request, checkout_transfer_simulate(collection=collection))


class CheckoutCancelView(CheckoutView):
    """``GET`` asks "Cancel this payment?" on a page of its own (it works without JavaScript;
    the checkout's script shows the same question inline); only the ``POST`` cancels. When
    there is nothing to cancel here, ``GET`` goes back to the checkout page."""

    http_method_names = ["get", "head", "post"]

    def get(self, request: HttpRequest, reference: str) -> HttpResponse:
        collection = self.load(reference)
        if collection.payment_status != PaymentStatus.PENDING or not self.sandbox(collection):
            return HttpResponseSeeOther(f"/checkout/{collection.reference}")
        return self.page(request, collection, template=CANCEL_TEMPLATE)

    def post(self, request: HttpRequest, reference: str) -> HttpResponse:
        collection = self.load(reference)
        refused = self.refusal(request, collection, channels=frozenset(Channel.values))
        if refused is not None:
            return refused
        return self.outcome(request, checkout_cancel(collection=collection))


class CheckoutReturnView(CheckoutView):
    """Where the live provider sends the customer back: verify (when still pending), then on
    to the merchant's callback URL with the status as it stands."""

    http_method_names = ["get", "head"]

    def get(self, request: HttpRequest, reference: str) -> HttpResponse:
        collection = self.load(reference)
        if collection.payment_status == PaymentStatus.PENDING and not self.sandbox(collection):
            try:
                transaction_provider_verify(collection=collection)
            except ApplicationError as error:
                logger.warning("checkout return %s: verify failed (%s)", reference, error)
            collection = self.load(reference)
        if collection.payment_status == PaymentStatus.PENDING and self.sandbox(collection):
            return HttpResponseSeeOther(f"/checkout/{reference}")
        return HttpResponseSeeOther(
            callback_redirect_url(
                collection.callback_url,
                reference=collection.reference,
                status=collection.payment_status,
            )
        )

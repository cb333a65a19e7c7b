"""Hosted checkout: the sandbox card form, the simulated transfer and cancellation.

Test cards (test mode only; any expiry in the future, any 3- or 4-digit CVV):

* ``4084 0840 8408 4081`` → paid
* ``4000 0000 0000 0002`` → declined: the decline is recorded (``no_of_attempts`` grows) and the
  transaction stays ``pending`` so the customer can try another card, until the decline that
  brings ``no_of_attempts`` to ``COLLECTION_CARD_ATTEMPT_LIMIT`` (default 3): that one makes the
  transaction ``failed``

Any other card number that passes the checks is refused on the page with a message naming the
test cards; nothing is attempted and the transaction stays pending.

The card number and CVV are used only to pick the outcome: they are never stored, logged or
shown again. What is kept (in the attempt's ``meta`` and the transaction's ``meta_data``) is
the brand and the last four digits.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import date
from typing import Any

from django import forms
from django.conf import settings
from django.utils import timezone

from collections_app.models import (
    Channel,
    CollectionTransaction,
    ConfirmationSource,
    PaymentStatus,
)
from collections_app.selectors import transaction_attempt_last
from collections_app.services import SANDBOX_GATEWAY, ConfirmationResult, transaction_confirm

TEST_CARD_PAID = "4084084084084081"
TEST_CARD_DECLINED = "4000000000000002"
TEST_CARD_OUTCOMES = {TEST_CARD_PAID: PaymentStatus.PAID, TEST_CARD_DECLINED: PaymentStatus.FAILED}
NOT_A_TEST_CARD = (
    "This card can't be used in test mode. Use 4084 0840 8408 4081 to pay, or "
    "4000 0000 0000 0002 to see a declined card."
)
TRANSFER_CHANNELS = frozenset({Channel.BANK, Channel.BANK_TRANSFER})
# The marks shown on the card form, named as ``card_brand`` names the networks.
CARD_BRAND_MARKS: tuple[tuple[str, str], ...] = (
    ("verve", "Verve"),
    ("mastercard", "Mastercard"),
    ("visa", "Visa"),
)

_SEPARATORS_RE = re.compile(r"[\s-]+")
_EXPIRY_RE = re.compile(r"(\d{1,2})\s*/\s*(\d{2}|\d{4})", re.ASCII)


def luhn_valid(number: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = int(char)
        if index % 2 == 1:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def card_brand(number: str) -> str:
    """The network by number prefix (good enough for a receipt line)."""
    prefix6 = int(number[:6]) if len(number) >= 6 else 0
    prefix4, prefix2 = prefix6 // 100, prefix6 // 10000
    if number.startswith("4"):
        return "visa"
    if 506099 <= prefix6 <= 506198 or 650002 <= prefix6 <= 650027:
        return "verve"
    if 51 <= prefix2 <= 55 or 2221 <= prefix4 <= 2720:
        return "mastercard"
    if prefix2 in (34, 37):
        return "amex"
    return "card"


@dataclass(frozen=True)
class CardSummary:
    """What may be kept about a card."""

    brand: str
    last4: str

    def as_meta(self) -> dict[str, Any]:
        return {"card": {"brand": self.brand, "last4": self.last4}}


class CardPaymentForm(forms.Form):
    """Checked again on the server whatever the page's script said."""

    card_number = forms.CharField(max_length=30, strip=True)
    expiry = forms.CharField(max_length=7, strip=True)
    cvv = forms.CharField(max_length=4, strip=True)

    def __init__(self, *args: Any, today: date | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.today = today or timezone.localdate()

    def clean_card_number(self) -> str:
        number = _SEPARATORS_RE.sub("", self.cleaned_data["card_number"])
        if not number.isascii() or not number.isdigit() or not 12 <= len(number) <= 19:
            raise forms.ValidationError("Enter the 12 to 19 digits of the card number.")
        if not luhn_valid(number):
            raise forms.ValidationError("This card number is not valid; check the digits.")
        return number

    def clean_expiry(self) -> tuple[int, int]:
        match = _EXPIRY_RE.fullmatch(self.cleaned_data["expiry"])
        if match is None:
            raise forms.ValidationError("Enter the expiry date as MM/YY.")
        month, year = int(match.group(1)), int(match.group(2))
        if year < 100:
            year += 2000
        if not 1 <= month <= 12:
            raise forms.ValidationError("The expiry month must be 01 to 12.")
        if (year, month) < (self.today.year, self.today.month):
            raise forms.ValidationError("This card has expired.")
        if year > self.today.year + 20:
            raise forms.ValidationError("Check the expiry year.")
        return month, year

    def clean_cvv(self) -> str:
        cvv = self.cleaned_data["cvv"]
        if not re.fullmatch(r"\d{3,4}", cvv, re.ASCII):
            raise forms.ValidationError("The CVV is the 3 or 4 digits on the back of the card.")
        return cvv

    def summary(self) -> CardSummary:
        number = self.cleaned_data["card_number"]
        return CardSummary(brand=card_brand(number), last4=number[-4:])

    def test_outcome(self) -> str | None:
        return TEST_CARD_OUTCOMES.get(self.cleaned_data["card_number"])


def _sandbox_reference() -> str:
    return f"SBX_{secrets.token_hex(8).upper()}"


def card_attempt_limit() -> int:
    return settings.COLLECTION_CARD_ATTEMPT_LIMIT


def card_attempts_left(*, collection: CollectionTransaction) -> int:
    """How many more cards the customer may try on a pending transaction: at least the one
    whose decline fails it, even when the limit was lowered after earlier attempts."""
    return max(card_attempt_limit() - collection.no_of_attempts, 1)


def card_declined_message(*, attempts_left: int) -> str:
    noun = "attempt" if attempts_left == 1 else "attempts"
    return f"Your card was declined. You can try another card — {attempts_left} {noun} left."


def card_declined_notice(*, collection: CollectionTransaction) -> str:
    """What the card form says when the latest attempt on this pending transaction was a card
    declined on it, with the attempts left; ``""`` otherwise (no query before any attempt)."""
    if collection.no_of_attempts == 0:
        return ""
    last = transaction_attempt_last(collection=collection)
    if (
        last is None
        or last.applied
        or last.outcome != PaymentStatus.FAILED
        or last.source != ConfirmationSource.CHECKOUT
        or last.status_before != PaymentStatus.PENDING
    ):
        return ""
    return card_declined_message(attempts_left=card_attempts_left(collection=collection))


def checkout_card_pay(
    *, collection: CollectionTransaction, outcome: str, card: CardSummary
) -> ConfirmationResult:
    """A test card's outcome, confirmed like any other (brand and last four kept in the
    attempt, and in the transaction when applied). A decline below the attempt limit leaves the
    transaction pending (``attempts_left`` in the result)."""
    return transaction_confirm(
        collection=collection,
        outcome=outcome,
        gateway_reference=_sandbox_reference(),
        gateway_used=SANDBOX_GATEWAY,
        source=ConfirmationSource.CHECKOUT,
        meta_data=card.as_meta(),
        attempt_limit=card_attempt_limit(),
    )


def checkout_transfer_simulate(*, collection: CollectionTransaction) -> ConfirmationResult:
    """Test mode: the customer says the exact amount was sent to the sandbox account."""
    return transaction_confirm(
        collection=collection,
        outcome=PaymentStatus.PAID,
        gateway_reference=_sandbox_reference(),
        gateway_used=SANDBOX_GATEWAY,
        source=ConfirmationSource.CHECKOUT,
        amount_paid=collection.amount_to_be_paid,
    )


def checkout_cancel(*, collection: CollectionTransaction) -> ConfirmationResult:
    return transaction_confirm(
        collection=collection,
        outcome=PaymentStatus.CANCELLED,
        gateway_used=SANDBOX_GATEWAY,
        source=ConfirmationSource.CHECKOUT,
    )

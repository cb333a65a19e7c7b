"""The service's one Paystack client.

Every call goes to ``settings.PAYSTACK_BASE_URL`` with ``Authorization: Bearer
<PAYSTACK_SECRET_KEY>``, within ``settings.PAYSTACK_TIMEOUT_SECONDS``, and answers a
``PaystackAnswer``: the HTTP status, the JSON body, the ``ProviderExchange`` kept for audit
(never the key, never the ``Authorization`` header) and, when Paystack gave no usable answer,
why (``RetryLater``). The client never raises for provider or network trouble: each adapter
decides what a ``RetryLater`` means for its own money.

The client, its settings and its answers are ``integrations.base``'s, shared by every vendor;
the call itself and the classification of "try again later" live in ``core.provider_http``
(``provider_call``, ``RetryLater``). Any other answer (2xx
with a JSON object, a 4xx refusal) is Paystack's word and is left to the adapter. Amounts
travel in kobo (``kobo_from_naira`` / ``naira_from_kobo``). Webhooks are signed with
``x-paystack-signature``, the hex HMAC-SHA512 of the raw body keyed with the secret key
(``paystack_signature_valid``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings

from core.money import minor_units_from_decimal, minor_units_to_decimal
from core.provider_http import REDACTED as REDACTED  # the placeholder of a redacted secret
from core.signing import hmac_sha512_hex_compute, hmac_sha512_hex_valid
from integrations.base import ProviderAnswer, ProviderClient

SIGNATURE_HEADER = "x-paystack-signature"


class PaystackAnswer(ProviderAnswer):
    """One call's outcome: what Paystack said (if anything) and its audit record."""

    def body_says_ok(self) -> bool:
        """Paystack's ``"status": true``."""
        return self.body.get("status") is True


def kobo_from_naira(amount: Decimal) -> int:
    """``Decimal("1500.00")`` -> ``150000``; more than two decimals is a ``ValueError``."""
    return minor_units_from_decimal(amount)


def naira_from_kobo(kobo: Any) -> Decimal | None:
    """Paystack's integer kobo (or a string of ASCII digits) as naira; anything else (a float,
    a bool, a fraction of a kobo) is None."""
    if isinstance(kobo, str) and kobo.isascii() and kobo.isdigit():
        kobo = int(kobo)
    if isinstance(kobo, bool) or not isinstance(kobo, int):
        return None
    return minor_units_to_decimal(kobo)


def paystack_signature_compute(raw_body: bytes, *, secret_key: str | None = None) -> str:
    """The ``x-paystack-signature`` Paystack sends with ``raw_body``."""
    key = settings.PAYSTACK_SECRET_KEY if secret_key is None else secret_key
    return hmac_sha512_hex_compute(raw_body, secret=key)


def paystack_signature_valid(
    raw_body: bytes, signature_header: str | None, *, secret_key: str | None = None
) -> bool:
    """True when ``signature_header`` signs ``raw_body`` with the secret key (by default
    ``settings.PAYSTACK_SECRET_KEY``). Missing, non-ASCII or non-hex headers are invalid."""
    key = settings.PAYSTACK_SECRET_KEY if secret_key is None else secret_key
    return hmac_sha512_hex_valid(raw_body, signature_header, secret=key)


class PaystackClient(ProviderClient[PaystackAnswer]):
    settings_prefix = "PAYSTACK"
    answer_class = PaystackAnswer

    def signature_valid(self, raw_body: bytes, signature_header: str | None) -> bool:
        return paystack_signature_valid(raw_body, signature_header, secret_key=self._secret_key)

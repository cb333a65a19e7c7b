"""Factories for payout rows. They write no ledger entries: use them for reads (list, details,
admin). Money-moving scenarios go through ``payouts.services``."""

from __future__ import annotations

from decimal import Decimal

import factory

from payouts.models import (
    AttemptOutcome,
    Payout,
    PayoutAttempt,
    PayoutResolution,
    PayoutRoute,
    PayoutStatus,
)
from wallets.selectors import bank_get_by_code


class PayoutFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Payout

    # ``wallet`` is required: PayoutFactory(wallet=...)
    merchant = factory.LazyAttribute(lambda o: o.wallet.merchant)
    mode = factory.LazyAttribute(lambda o: o.wallet.mode)
    internal_reference = factory.Sequence(lambda n: f"po_20250101_{n:020x}")
    idempotency_key = factory.Sequence(lambda n: f"factory-key-{n}")
    request_fingerprint = "0" * 64
    account_number = "0123456789"
    account_name = "ADEYEMI TUNDE"
    bank_code = "058"
    bank_name = "Guaranty Trust Bank"
    bank_id = factory.LazyFunction(lambda: bank_get_by_code(bank_code="058").pk)
    currency = "NGN"
    amount = Decimal("1000.00")
    fee_amount = Decimal("10.00")
    total_debit_amount = factory.LazyAttribute(lambda o: o.amount + o.fee_amount)
    status = PayoutStatus.RESERVED
    narration = "Invoice"
    provider_name = "sandbox"


class PayoutResolutionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PayoutResolution

    payout = factory.SubFactory(PayoutFactory)
    from_status = PayoutStatus.AMBIGUOUS
    to_status = PayoutStatus.SUCCESSFUL
    reason = "Confirmed with the provider by phone"


class PayoutAttemptFactory(factory.django.DjangoModelFactory):
    """``PayoutAttemptFactory(payout=...)``: attempt 1 under the payout's reference by default."""

    class Meta:
        model = PayoutAttempt

    number = 1
    provider_name = "sandbox"
    reference = factory.LazyAttribute(
        lambda o: (
            o.payout.internal_reference
            if o.number == 1
            else f"{o.payout.internal_reference}-{o.number}"
        )
    )
    outcome = AttemptOutcome.IN_FLIGHT


class PayoutRouteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PayoutRoute

    mode = "test"
    bank_code = ""
    provider_name = "sandbox"
    weight = 1
    priority = 100
    active = True

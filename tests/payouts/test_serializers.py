"""``PayoutOutputSerializer`` builds the Payout resource directly; it must say exactly what
DRF's walk over its declared fields says, for any payout, given as a model instance or as the
list's named row of its columns."""

from __future__ import annotations

from collections import namedtuple
from datetime import UTC, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from payouts.api.serializers import PayoutOutputSerializer
from payouts.models import Payout, PayoutStatus
from payouts.selectors import PAYOUT_RESOURCE_FIELDS

text = st.text(max_size=12)
instants = st.datetimes(
    min_value=datetime(2020, 1, 1),  # noqa: DTZ001 (hypothesis takes naive bounds)
    max_value=datetime(2100, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)
amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999999.99"), places=2)

payouts = st.builds(
    Payout,
    id=st.integers(1, 2**63 - 1),
    internal_reference=text,
    idempotency_key=text,
    account_number=st.from_regex(r"\A[0-9]{10}\Z"),
    account_name=text,
    bank_code=text,
    bank_name=text,
    currency=st.just("NGN"),
    amount=amounts,
    fee_amount=amounts,
    total_debit_amount=amounts,
    status=st.sampled_from(PayoutStatus.values),
    narration=st.none() | text,
    error_message=st.none() | text,
    nip_session_id=st.just("") | text,
    returned_at=st.none() | instants,
    return_reason=st.just("") | text,
    created_at=instants,
    completed_at=st.none() | instants,
    updated_at=instants,
)


@settings(max_examples=300, derandomize=True, database=None)
@given(payout=payouts)
def test_the_payout_resource_is_what_the_declared_fields_say(payout: Payout) -> None:
    serializer = PayoutOutputSerializer()

    generic = serializers.Serializer.to_representation(serializer, payout)

    assert serializer.to_representation(payout) == dict(generic)
    assert list(serializer.to_representation(payout)) == list(generic)


PayoutRow = namedtuple("PayoutRow", PAYOUT_RESOURCE_FIELDS)  # as ``values_list(named=True)``


@settings(max_examples=100, derandomize=True, database=None)
@given(payout=payouts)
def test_a_named_row_of_the_resource_columns_says_what_its_payout_says(payout: Payout) -> None:
    serializer = PayoutOutputSerializer()
    row = PayoutRow(*(getattr(payout, name) for name in PAYOUT_RESOURCE_FIELDS))

    assert serializer.to_representation(row) == serializer.to_representation(payout)

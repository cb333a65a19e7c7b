"""Every (from, to) pair of the collection transaction state machine: allowed ones move the
transaction, all others raise; final statuses have no way out."""

from __future__ import annotations

from itertools import product

import pytest

from collections_app.models import CollectionTransaction, PaymentStatus
from collections_app.state_machine import (
    ALLOWED_TRANSITIONS,
    FINAL_STATUSES,
    IllegalTransitionError,
    collection_transition,
    transition_allowed,
    transition_check,
)
from core.exceptions import ConflictError

S = PaymentStatus
EXPECTED_ALLOWED = {
    (S.PENDING, S.PAID),
    (S.PENDING, S.FAILED),
    (S.PENDING, S.CANCELLED),
    (S.PENDING, S.EXPIRED),
}
ALL_PAIRS = list(product(S.values, S.values))
FORBIDDEN = [pair for pair in ALL_PAIRS if pair not in EXPECTED_ALLOWED]


def test_the_map_is_exactly_the_documented_one() -> None:
    actual = {
        (source, target) for source, targets in ALLOWED_TRANSITIONS.items() for target in targets
    }
    assert actual == EXPECTED_ALLOWED
    assert set(ALLOWED_TRANSITIONS) == set(S.values)


@pytest.mark.parametrize(("from_status", "to_status"), sorted(EXPECTED_ALLOWED))
def test_allowed_transition_moves_the_transaction(from_status: str, to_status: str) -> None:
    collection = CollectionTransaction(payment_status=from_status)
    collection_transition(collection=collection, to_status=to_status)
    assert collection.payment_status == to_status


@pytest.mark.parametrize(("from_status", "to_status"), FORBIDDEN)
def test_forbidden_transition_raises_and_leaves_the_status(
    from_status: str, to_status: str
) -> None:
    collection = CollectionTransaction(payment_status=from_status)
    with pytest.raises(IllegalTransitionError) as raised:
        collection_transition(collection=collection, to_status=to_status)
    assert collection.payment_status == from_status
    assert raised.value.from_status == from_status
    assert raised.value.to_status == to_status


@pytest.mark.parametrize(("from_status", "to_status"), ALL_PAIRS)
def test_transition_allowed_agrees_with_the_check(from_status: str, to_status: str) -> None:
    expected = (from_status, to_status) in EXPECTED_ALLOWED
    assert transition_allowed(from_status=from_status, to_status=to_status) is expected


@pytest.mark.parametrize("final_status", FINAL_STATUSES)
def test_final_statuses_have_no_way_out(final_status: str) -> None:
    assert ALLOWED_TRANSITIONS[final_status] == frozenset()
    assert CollectionTransaction(payment_status=final_status).is_final is True


def test_final_statuses_are_exactly_those_with_no_way_out() -> None:
    without_way_out = {status for status, targets in ALLOWED_TRANSITIONS.items() if not targets}
    assert set(FINAL_STATUSES) == without_way_out
    assert CollectionTransaction(payment_status=S.PENDING).is_final is False


def test_unknown_status_is_refused() -> None:
    with pytest.raises(IllegalTransitionError):
        transition_check(from_status="successful", to_status=S.PAID)


def test_the_error_is_a_409_naming_the_transaction() -> None:
    with pytest.raises(IllegalTransitionError) as raised:
        transition_check(from_status=S.PAID, to_status=S.FAILED)
    assert isinstance(raised.value, ConflictError)
    assert raised.value.status == 409
    assert raised.value.message == "transaction cannot move from paid to failed"


def test_forbidden_pairs_cover_every_other_combination() -> None:
    assert len(FORBIDDEN) + len(EXPECTED_ALLOWED) == len(S.values) ** 2 == 25

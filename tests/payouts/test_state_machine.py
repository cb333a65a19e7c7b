"""Every (from, to) pair of the payout state machine: allowed ones pass, all others raise."""

from __future__ import annotations

from itertools import product

import pytest

from payouts.models import FINAL_STATUSES, Payout, PayoutStatus
from payouts.state_machine import (
    ALLOWED_TRANSITIONS,
    IllegalTransitionError,
    payout_transition,
    transition_check,
)

S = PayoutStatus
EXPECTED_ALLOWED = {
    (S.RESERVED, S.PROCESSING),
    (S.RESERVED, S.FAILED),
    (S.PROCESSING, S.DISPATCHED),
    (S.PROCESSING, S.FAILED),
    (S.DISPATCHED, S.SUCCESSFUL),
    (S.DISPATCHED, S.FAILED),
    (S.DISPATCHED, S.AMBIGUOUS),
    (S.AMBIGUOUS, S.SUCCESSFUL),
    (S.AMBIGUOUS, S.FAILED),
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
def test_allowed_transition_moves_the_payout(from_status: str, to_status: str) -> None:
    payout = Payout(status=from_status)
    payout_transition(payout=payout, to_status=to_status)
    assert payout.status == to_status


@pytest.mark.parametrize(("from_status", "to_status"), FORBIDDEN)
def test_forbidden_transition_raises_and_leaves_the_status(
    from_status: str, to_status: str
) -> None:
    payout = Payout(status=from_status)
    with pytest.raises(IllegalTransitionError) as raised:
        payout_transition(payout=payout, to_status=to_status)
    assert payout.status == from_status
    assert raised.value.from_status == from_status
    assert raised.value.to_status == to_status


@pytest.mark.parametrize("final_status", FINAL_STATUSES)
def test_final_statuses_have_no_way_out(final_status: str) -> None:
    assert ALLOWED_TRANSITIONS[final_status] == frozenset()


def test_unknown_status_is_refused() -> None:
    with pytest.raises(IllegalTransitionError):
        transition_check(from_status="paid", to_status=S.SUCCESSFUL)


def test_forbidden_pairs_cover_every_other_combination() -> None:
    assert len(FORBIDDEN) + len(EXPECTED_ALLOWED) == len(S.values) ** 2 == 36

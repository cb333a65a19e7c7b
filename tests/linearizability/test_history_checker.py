"""The history checker on hand-written histories, and against an exhaustive search.

No database and no processes: these run on every backend. The exhaustive search tries every
order of the operations that respects real time (unknown operations placed anywhere after their
invocation, or left out) against the sequential model of one idempotency key; the checker's
direct rules must agree with it on every generated history.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.linearizability.history import (
    Operation,
    Outcome,
    history_check,
    history_summary,
)

SAME = {"account_number": "0123456789", "bank_code": "058", "amount": "1000.00"}
OTHER = {"account_number": "0123456789", "bank_code": "058", "amount": "2500.00"}
PAYOUT_1 = {
    "id": 1,
    "internal_reference": "po_20260101_aaaaaaaaaaaaaaaaaaaa",
    "amount": "1000.00",
    "fee_amount": "10.00",
    "total_debit_amount": "1010.00",
}
PAYOUT_2 = {**PAYOUT_1, "id": 2, "internal_reference": "po_20260101_bbbbbbbbbbbbbbbbbbbb"}
PAYOUT_OTHER = {
    "id": 3,
    "internal_reference": "po_20260101_cccccccccccccccccccc",
    "amount": "2500.00",
    "fee_amount": "10.00",
    "total_debit_amount": "2510.00",
}


def accepted(
    client: str,
    start: float,
    end: float,
    *,
    duplicate: bool,
    payout: dict[str, Any] = PAYOUT_1,
    params: dict[str, str] = SAME,
) -> Operation:
    return Operation(
        client=client,
        params=params,
        invoked_at=start,
        completed_at=end,
        status=202,
        body={"status": True, "data": {"payout": payout, "duplicate": duplicate}},
    )


def conflict(client: str, start: float, end: float, *, params: dict[str, str] = OTHER) -> Operation:
    return Operation(
        client=client,
        params=params,
        invoked_at=start,
        completed_at=end,
        status=409,
        body={"status": False, "message": "Idempotency key already used", "data": None},
    )


def lost(client: str, start: float, end: float, *, params: dict[str, str] = SAME) -> Operation:
    return Operation(
        client=client,
        params=params,
        invoked_at=start,
        completed_at=end,
        error="TimeoutError: timed out",
    )


# --- Histories that one payout explains --------------------------------------------------------


def test_a_creator_and_overlapping_replays_pass() -> None:
    history = [
        accepted("c1", 0.0, 0.5, duplicate=False),
        accepted("c2", 0.1, 0.3, duplicate=True),  # completes before the creator does
        accepted("c3", 0.2, 0.9, duplicate=True),
    ]

    verdict = history_check(history)

    assert verdict.ok, verdict.explanation
    assert verdict.creator is history[0]
    assert verdict.payout == PAYOUT_1


def test_a_replay_whose_interval_only_touches_the_creators_is_concurrent_with_it() -> None:
    verdict = history_check(
        [accepted("c1", 1.0, 2.0, duplicate=False), accepted("c2", 0.0, 1.0, duplicate=True)]
    )

    assert verdict.ok, verdict.explanation


def test_a_request_with_other_parameters_may_be_the_creator_when_it_could_come_first() -> None:
    history = [
        accepted("c1", 0.0, 0.4, duplicate=False, payout=PAYOUT_OTHER, params=OTHER),
        conflict("c2", 0.1, 0.5, params=SAME),
        conflict("c3", 0.2, 0.6, params=SAME),
        accepted("c4", 0.3, 0.7, duplicate=True, payout=PAYOUT_OTHER, params=OTHER),
    ]

    verdict = history_check(history)

    assert verdict.ok, verdict.explanation
    assert verdict.creator is history[0]


def test_a_creator_whose_answer_was_lost_explains_the_replays_of_its_retries() -> None:
    history = [
        lost("c1", 0.0, 0.5),
        accepted("c1-retry", 0.6, 0.9, duplicate=True),
        accepted("c2", 0.2, 0.8, duplicate=True),
    ]

    verdict = history_check(history)

    assert verdict.ok, verdict.explanation
    assert verdict.creator is None
    assert "c1" in verdict.explanation
    assert verdict.unknown == (history[0],)


def test_a_server_error_is_unknown_and_may_have_created_the_payout() -> None:
    crashed = Operation(
        client="c1", params=SAME, invoked_at=0.0, completed_at=0.1, status=500, body={}
    )

    verdict = history_check([crashed, accepted("c2", 0.2, 0.3, duplicate=True)])

    assert crashed.outcome is Outcome.UNKNOWN
    assert verdict.ok, verdict.explanation


def test_a_history_of_unknown_operations_only_passes() -> None:
    assert history_check([lost("c1", 0.0, 1.0), lost("c2", 0.5, 1.0)]).ok
    assert history_check([]).ok


# --- Histories that no single payout explains -------------------------------------------------


def test_two_payout_ids_under_one_key_fail() -> None:
    verdict = history_check(
        [
            accepted("c1", 0.0, 0.5, duplicate=False, payout=PAYOUT_1),
            accepted("c2", 0.0, 0.5, duplicate=False, payout=PAYOUT_2),
        ]
    )

    assert not verdict.ok
    assert verdict.explanation.startswith("two payouts under one key")
    assert "c1" in verdict.explanation
    assert "c2" in verdict.explanation


def test_replays_of_two_payouts_fail_even_without_two_creators() -> None:
    verdict = history_check(
        [
            accepted("c1", 0.0, 0.5, duplicate=False, payout=PAYOUT_1),
            accepted("c2", 0.1, 0.6, duplicate=True, payout=PAYOUT_2),
        ]
    )

    assert not verdict.ok
    assert verdict.explanation.startswith("two payouts under one key")


def test_a_duplicate_that_completed_before_the_creator_was_invoked_fails() -> None:
    verdict = history_check(
        [
            accepted("c1", 0.0, 0.2, duplicate=True),
            accepted("c2", 0.3, 0.5, duplicate=False),
        ]
    )

    assert not verdict.ok
    assert "completed before the creating request was invoked" in verdict.explanation
    assert "c1" in verdict.explanation


def test_a_conflict_that_completed_before_the_creator_was_invoked_fails() -> None:
    verdict = history_check([conflict("c1", 0.0, 0.2), accepted("c2", 0.3, 0.5, duplicate=False)])

    assert not verdict.ok
    assert "completed before the creating request was invoked" in verdict.explanation


def test_two_answers_saying_duplicate_false_fail_even_for_one_payout() -> None:
    verdict = history_check(
        [
            accepted("c1", 0.0, 0.5, duplicate=False),
            accepted("c2", 0.1, 0.6, duplicate=False),
        ]
    )

    assert not verdict.ok
    assert verdict.explanation.startswith("more than one answer says duplicate: false")


def test_replays_without_any_possible_creator_fail() -> None:
    verdict = history_check(
        [accepted("c1", 0.0, 0.5, duplicate=True), accepted("c2", 0.1, 0.6, duplicate=True)]
    )

    assert not verdict.ok
    assert "no operation could have created" in verdict.explanation


def test_a_lost_operation_invoked_after_a_replay_completed_cannot_be_its_creator() -> None:
    verdict = history_check([accepted("c1", 0.0, 0.5, duplicate=True), lost("c2", 0.6, 1.0)])

    assert not verdict.ok
    assert "no operation could have created" in verdict.explanation


def test_a_lost_operation_with_other_parameters_cannot_create_the_replayed_payout() -> None:
    verdict = history_check(
        [accepted("c1", 0.1, 0.5, duplicate=True), lost("c2", 0.0, 1.0, params=OTHER)]
    )

    assert not verdict.ok


def test_conflicts_alone_fail() -> None:
    verdict = history_check([conflict("c1", 0.0, 0.5), conflict("c2", 0.1, 0.6)])

    assert not verdict.ok
    assert "no operation could have created" in verdict.explanation


def test_a_409_for_the_creators_own_parameters_fails() -> None:
    verdict = history_check(
        [accepted("c1", 0.0, 0.5, duplicate=False), conflict("c2", 0.1, 0.6, params=SAME)]
    )

    assert not verdict.ok
    assert verdict.explanation.startswith("a 409 answered a request with the same parameters")


def test_a_202_for_other_parameters_fails() -> None:
    verdict = history_check(
        [
            accepted("c1", 0.0, 0.5, duplicate=False),
            accepted("c2", 0.1, 0.6, duplicate=True, params=OTHER),
        ]
    )

    assert not verdict.ok
    assert "parameters differ" in verdict.explanation


def test_a_payout_for_another_amount_than_requested_fails() -> None:
    verdict = history_check(
        [accepted("c1", 0.0, 0.5, duplicate=False, payout=PAYOUT_OTHER, params=SAME)]
    )

    assert not verdict.ok
    assert "amount" in verdict.explanation


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"status": False, "message": "insufficient available wallet balance"}),
        (202, {"status": True, "data": {"duplicate": False}}),
        (202, {"status": True, "data": {"payout": PAYOUT_1}}),
    ],
)
def test_an_answer_outside_the_model_fails(status: int, body: dict[str, Any]) -> None:
    odd = Operation(
        client="c1", params=SAME, invoked_at=0.0, completed_at=0.1, status=status, body=body
    )

    verdict = history_check([odd])

    assert odd.outcome is Outcome.UNEXPECTED
    assert not verdict.ok
    assert verdict.explanation.startswith("an answer the idempotent create never gives")


def test_an_operation_completed_before_its_invocation_is_rejected() -> None:
    with pytest.raises(ValueError, match="before invoked"):
        accepted("c1", 1.0, 0.5, duplicate=False)


# --- The summary -------------------------------------------------------------------------------


def test_the_summary_counts_statuses_and_names_the_creator_and_the_slowest() -> None:
    history = [
        accepted("c1", 10.0, 10.25, duplicate=False),
        accepted("c2", 10.1, 11.5, duplicate=True),
        conflict("c3", 10.2, 10.3),
        lost("c4", 10.0, 10.5),
    ]

    summary = history_summary(history)

    assert "4 operations" in summary
    assert "202×2" in summary
    assert "409×1" in summary
    assert "no answer×1" in summary
    assert "creator: c1 invoked +0.000s, completed +0.250s" in summary
    assert "max latency: 1.400s (c2)" in summary
    assert "amount=2500.00" in summary  # the parameter that differs is shown
    assert len(summary.splitlines()) == 4 + len(history)


# --- Agreement with an exhaustive search -------------------------------------------------------


def linearizable_by_search(history: list[Operation]) -> bool:
    """Depth-first search for a linearization: the next operation is one that no remaining
    answered operation precedes in real time; answered operations must all be placed, unknown
    ones may be placed (only their creation matters) or left out."""
    if any(op.outcome is Outcome.UNEXPECTED for op in history):
        return False
    operations = tuple(history)

    def precedes(first: Operation, second: Operation) -> bool:
        return first.outcome is not Outcome.UNKNOWN and first.completed_at < second.invoked_at

    def step(state: tuple[Any, Any] | None, op: Operation) -> tuple[Any, Any] | None | bool:
        """The model's next state, or False when it would not give ``op``'s answer."""
        params = tuple(sorted(op.params.items()))
        outcome = op.outcome
        if state is None:
            if outcome is Outcome.UNKNOWN:
                return (params, None)
            if outcome is Outcome.CREATED and op.payout["amount"] == op.params["amount"]:
                return (params, op.payout_identity())
            return False
        held_params, identity = state
        if outcome is Outcome.UNKNOWN:
            return state
        if params != held_params:
            return state if outcome is Outcome.CONFLICT else False
        if outcome is not Outcome.REPLAYED:
            return False
        if identity is None:
            amount = dict(held_params)["amount"]
            return (held_params, op.payout_identity()) if op.payout["amount"] == amount else False
        return state if op.payout_identity() == identity else False

    @cache
    def search(remaining: frozenset[int], state: tuple[Any, Any] | None) -> bool:
        if all(operations[i].outcome is Outcome.UNKNOWN for i in remaining):
            return True
        for i in remaining:
            if any(precedes(operations[j], operations[i]) for j in remaining if j != i):
                continue
            following = step(state, operations[i])
            if following is not False and search(remaining - {i}, following):
                return True
        return False

    return search(frozenset(range(len(operations))), None)


PAYOUTS = [PAYOUT_1, PAYOUT_2, PAYOUT_OTHER]


@st.composite
def operations(draw: st.DrawFn, client: str, payout: dict[str, Any]) -> Operation:
    params = draw(st.sampled_from([SAME, SAME, OTHER]))
    start = draw(st.integers(min_value=0, max_value=8))
    end = start + draw(st.integers(min_value=0, max_value=5))
    kind = draw(st.sampled_from(["created", "replayed", "replayed", "conflict", "lost", "error"]))
    if kind in ("created", "replayed"):
        payout = draw(st.sampled_from([payout, payout, payout, *PAYOUTS]))
        return accepted(
            client, start, end, duplicate=kind == "replayed", payout=payout, params=params
        )
    if kind == "conflict":
        return conflict(client, start, end, params=params)
    if kind == "lost":
        return lost(client, start, end, params=params)
    return Operation(
        client=client, params=params, invoked_at=start, completed_at=end, status=502, body={}
    )


@st.composite
def histories(draw: st.DrawFn) -> list[Operation]:
    """Up to six operations, most 202s carrying one payout, on small integer times (so that
    intervals often touch or nest)."""
    payout = draw(st.sampled_from(PAYOUTS))
    size = draw(st.integers(min_value=0, max_value=6))
    return [draw(operations(f"c{n}", payout)) for n in range(size)]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(histories())
def test_the_checker_agrees_with_an_exhaustive_search(history: list[Operation]) -> None:
    verdict = history_check(history)

    assert verdict.ok == linearizable_by_search(history), (
        f"checker says {verdict.ok}: {verdict.explanation}\n{history_summary(history)}"
    )

"""transition_check against a map of its own, and IllegalTransitionError reaching an API view."""

from __future__ import annotations

from itertools import product
from types import MappingProxyType

import pytest
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.test import APIClient
from rest_framework.views import APIView

from core.api.responses import EnvelopeResponse
from core.exceptions import ApplicationError, ConflictError
from core.state_machine import IllegalTransitionError, transition_check

DOOR_TRANSITIONS: MappingProxyType[str, frozenset[str]] = MappingProxyType(
    {
        "open": frozenset({"closed"}),
        "closed": frozenset({"open", "locked"}),
        "locked": frozenset(),
    }
)
ALLOWED_PAIRS = sorted(
    (source, target) for source, targets in DOOR_TRANSITIONS.items() for target in targets
)
FORBIDDEN_PAIRS = [
    pair for pair in product(DOOR_TRANSITIONS, DOOR_TRANSITIONS) if pair not in ALLOWED_PAIRS
]


def door_check(from_status: str, to_status: str) -> None:
    transition_check(
        allowed=DOOR_TRANSITIONS, subject="door", from_status=from_status, to_status=to_status
    )


@pytest.mark.parametrize(("from_status", "to_status"), ALLOWED_PAIRS)
def test_allowed_transition_passes(from_status: str, to_status: str) -> None:
    door_check(from_status, to_status)


@pytest.mark.parametrize(("from_status", "to_status"), FORBIDDEN_PAIRS)
def test_forbidden_transition_raises_with_both_statuses(from_status: str, to_status: str) -> None:
    with pytest.raises(IllegalTransitionError) as raised:
        door_check(from_status, to_status)
    assert raised.value.subject == "door"
    assert raised.value.from_status == from_status
    assert raised.value.to_status == to_status


def test_the_message_names_the_subject_and_both_statuses() -> None:
    with pytest.raises(IllegalTransitionError) as raised:
        door_check("locked", "open")
    assert raised.value.message == "door cannot move from locked to open"
    assert str(raised.value) == "door cannot move from locked to open"


def test_a_status_missing_from_the_map_has_no_way_out() -> None:
    with pytest.raises(IllegalTransitionError):
        door_check("ajar", "closed")


def test_a_transition_to_the_same_status_needs_the_map_to_allow_it() -> None:
    with pytest.raises(IllegalTransitionError):
        door_check("open", "open")


def test_the_error_is_a_conflict() -> None:
    error = IllegalTransitionError(subject="door", from_status="locked", to_status="open")
    assert isinstance(error, ConflictError)
    assert isinstance(error, ApplicationError)
    assert error.status == 409
    assert error.headers == {}


# --- through a DRF view --------------------------------------------------------------------------


class _LockedDoorApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    def post(self, request: Request) -> EnvelopeResponse:
        door_check("locked", "open")
        return EnvelopeResponse({"status": "open"}, message="Door opened")


urlpatterns = [path("t/door/open", _LockedDoorApi.as_view())]


@pytest.mark.django_db
@pytest.mark.urls(__name__)
def test_an_illegal_transition_in_a_view_is_a_409_envelope(api_client: APIClient) -> None:
    response = api_client.post("/t/door/open", {}, format="json")
    assert response.status_code == 409
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "status": False,
        "message": "door cannot move from locked to open",
        "data": None,
        "statusCode": 409,
    }

"""Schemathesis against the service's own ``/api/schema/``, every operation, through the WSGI app.

For each operation: schema-valid (positive) and schema-invalid (negative) requests with a valid
test key, and positive requests aimed at existing objects where the path has parameters. Every
response must be a non-5xx, with a status code, content type, headers and body the schema
documents. Separately, every operation refuses requests without credentials (no key, an unknown
key, another scheme) with 401/403 in its documented error shape.

Bounded and reproducible: a fixed number of examples per operation, derandomized, no example
database, so the whole module fits in ``make test``.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.fuzz.conftest import FuzzWorld

SCHEMA = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
OPERATIONS = {
    operation.label: operation
    for operation in (result.ok() for result in SCHEMA.get_all_operations())
}
LABELS = sorted(OPERATIONS)

EXAMPLES_PER_OPERATION = 25
AUTH_EXAMPLES_PER_OPERATION = 4

CONFORMANCE_CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def _bounded(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )


def _path_parameter_names(label: str) -> set[str]:
    operation = OPERATIONS[label]
    return {parameter.name for parameter in operation.path_parameters}


def _without_credentials(case: Any) -> None:
    if case.headers:
        case.headers = {
            name: value
            for name, value in case.headers.items()
            if name.lower() not in ("authorization", "x-provider-signature")
        }


def test_the_schema_lists_every_route_group() -> None:
    paths = {operation.path for operation in OPERATIONS.values()}
    assert len(OPERATIONS) >= 15
    for expected in (
        "/api/v1/transactions/in/merchant-wallet/payouts",
        "/api/v1/transactions/in/merchant-wallet/payouts/{payout_id}",
        "/api/v1/transactions/in/merchant-wallet/payouts/{payout_id}/requery",
        "/api/v1/transactions/in/merchant-wallet",
        "/api/v1/transactions/bank",
        "/api/v1/transactions/in/initialize",
        "/api/v1/transactions/in/payment-items",
    ):
        assert expected in paths


@pytest.mark.django_db
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
@pytest.mark.parametrize("label", LABELS)
def test_operation_conforms_to_its_schema(
    label: str, mode: GenerationMode, fuzz_world: FuzzWorld
) -> None:
    operation = OPERATIONS[label]
    calls: list[int] = []

    @_bounded(EXAMPLES_PER_OPERATION)
    @given(case=operation.as_strategy(generation_mode=mode))
    def check(case: Any) -> None:
        response = case.call(headers=fuzz_world.headers)
        calls.append(response.status_code)
        case.validate_response(response, checks=CONFORMANCE_CHECKS)

    check()
    assert calls, f"{label}: no request was generated"


@pytest.mark.django_db
@pytest.mark.parametrize("label", [label for label in LABELS if _path_parameter_names(label)])
def test_operation_on_existing_objects_conforms_to_its_schema(
    label: str, fuzz_world: FuzzWorld
) -> None:
    operation = OPERATIONS[label]
    known = fuzz_world.path_parameters(_path_parameter_names(label))
    statuses: list[int] = []

    @_bounded(EXAMPLES_PER_OPERATION)
    @given(case=operation.as_strategy(path_parameters=known))
    def check(case: Any) -> None:
        response = case.call(headers=fuzz_world.headers)
        statuses.append(response.status_code)
        case.validate_response(response, checks=CONFORMANCE_CHECKS)

    check()
    assert any(200 <= status < 300 for status in statuses), (
        f"{label}: no request on an existing object succeeded: {sorted(set(statuses))}"
    )


@pytest.mark.django_db
@pytest.mark.parametrize("label", LABELS)
def test_operation_refuses_requests_without_valid_credentials(
    label: str, fuzz_world: FuzzWorld
) -> None:
    operation = OPERATIONS[label]
    refusals = (
        {},
        {"Authorization": "Bearer sk_test_this_key_does_not_exist_0000000000000000"},
        {"Authorization": f"Basic {fuzz_world.test_key}"},
        {"Authorization": f"Bearer {fuzz_world.test_key[:-2]}"},
    )
    seen: list[int] = []

    @_bounded(AUTH_EXAMPLES_PER_OPERATION)
    @given(case=operation.as_strategy())
    def check(case: Any) -> None:
        _without_credentials(case)
        for headers in refusals:
            response = case.call(headers=headers)
            seen.append(response.status_code)
            assert response.status_code in (401, 403), (
                f"{label} answered {response.status_code} to {headers or 'no credentials'}: "
                f"{response.text[:300]}"
            )
            case.validate_response(response, checks=CONFORMANCE_CHECKS)

    check()
    assert seen

"""Schemathesis against the service's own ``/api/schema/``, every operation, through the WSGI app.

For each operation: schema-valid (positive) and schema-invalid (negative) requests with a valid
test key, and positive requests aimed at existing objects where the path has parameters. Every
response must be a non-5xx, with a status code, content type, headers and body the schema
documents. Separately, every operation refuses requests without credentials (no key, an unknown
key, another scheme) with 401/403 in its documented error shape.

Hostile values: schema-valid requests with one place made hostile (a path parameter, a query
parameter, a header, or the JSON body) by NUL bytes, lone surrogates, control characters, very
long text, extreme numbers and dates, unstorable keys and nesting past the parser's depth cap.
Signed provider notifications are signed after the mutation, so the body reaches the parser.
Every answer must be a non-5xx the schema documents, in the envelope; what is refused for
certain (unstorable text, NUL, nesting too deep) is a 4xx that stores nothing.

Bounded and reproducible: a fixed number of examples per operation, derandomized, no example
database, so the whole module fits in ``make test``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from collections_app.models import CollectionTransaction, TransactionAttempt
from core.api.parsers import MAX_JSON_DEPTH
from integrations.paystack import paystack_signature_compute
from payouts.models import Payout, PayoutBatch
from tests.fuzz.conftest import FuzzWorld
from wallets.api.views import funding_signature_compute
from wallets.models import FundingTransfer, LedgerEntry
from webhooks.models import Event

FUZZ_FUNDING_SECRET = "fuzz-funding-secret"
FUZZ_PAYSTACK_SECRET = "fuzz-paystack-secret"
FUZZ_FLUTTERWAVE_HASH = "fuzz-flutterwave-hash"

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
    known = fuzz_world.path_parameters(_path_parameter_names(label), label=label)
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


# --- hostile values -------------------------------------------------------------------------------

HOSTILE_EXAMPLES_PER_OPERATION = 20
UNSTORABLE = ("\x00", "\ud800", "\udfff")
SIGNERS: dict[str, Callable[[bytes], dict[str, str]]] = {
    "POST /api/v1/webhooks/funding": lambda body: {
        "X-Provider-Signature": funding_signature_compute(body, secret=FUZZ_FUNDING_SECRET)
    },
    "POST /api/v1/webhooks/paystack": lambda body: {
        "X-Paystack-Signature": paystack_signature_compute(body, secret_key=FUZZ_PAYSTACK_SECRET)
    },
    "POST /api/v1/webhooks/flutterwave": lambda body: {"verif-hash": FUZZ_FLUTTERWAVE_HASH},
}
STORED = (
    FundingTransfer,
    LedgerEntry,
    Payout,
    PayoutBatch,
    CollectionTransaction,
    TransactionAttempt,
    Event,
)

hostile_text = st.one_of(
    st.tuples(st.text(max_size=8), st.sampled_from(UNSTORABLE), st.text(max_size=8)).map("".join),
    st.text(alphabet=st.characters(max_codepoint=0x1F), min_size=1, max_size=8),
    st.text(min_size=500, max_size=600),
    st.sampled_from(["é" * 64, "\u202e\u0000", "ｆ" * 128]),
    st.sampled_from(["9999-12-31", "0001-01-01", "10000-01-01", "9999-12-31T23:59:59+14:00"]),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
)


def _nested_list(depth: int) -> Any:
    return functools.reduce(lambda inner, _: [inner], range(depth), 1)


hostile_json = st.one_of(
    hostile_text,
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(MAX_JSON_DEPTH, 200).map(_nested_list),
)


def _unstorable(value: Any) -> bool:
    return isinstance(value, str) and any(character in value for character in UNSTORABLE)


def _too_deep(value: Any) -> bool:
    depth = 0
    while isinstance(value, list) and value:
        depth, value = depth + 1, value[0]
    return depth >= MAX_JSON_DEPTH


def _as_sent(value: str) -> str:
    """The text a server receives for ``value`` in a URL: a lone surrogate can only travel as
    its (invalid) UTF-8 bytes, which the server decodes to U+FFFD."""
    return value.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")


def _stored() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in STORED)


@pytest.mark.django_db
@pytest.mark.parametrize("label", LABELS)
def test_operation_survives_hostile_values(
    label: str, fuzz_world: FuzzWorld, settings: Any
) -> None:
    settings.FUNDING_WEBHOOK_SECRET = FUZZ_FUNDING_SECRET
    settings.PAYSTACK_SECRET_KEY = FUZZ_PAYSTACK_SECRET
    settings.FLUTTERWAVE_WEBHOOK_HASH = FUZZ_FLUTTERWAVE_HASH
    operation = OPERATIONS[label]
    path_names = sorted(_path_parameter_names(label))
    known = fuzz_world.path_parameters(set(path_names), label=label)
    places = ["query", "header"] + (["path"] if path_names else [])
    if operation.body:
        places += ["body value", "body key", "body too deep"]
    refusals: list[int] = []

    @_bounded(HOSTILE_EXAMPLES_PER_OPERATION)
    @given(case=operation.as_strategy(path_parameters=known), data=st.data())
    def check(case: Any, data: st.DataObject) -> None:
        place = data.draw(st.sampled_from(places), label="place")
        headers = dict(fuzz_world.headers)
        raw_body: bytes | None = None
        refused = False
        if place == "path":
            name = data.draw(st.sampled_from(path_names), label="parameter")
            value = data.draw(hostile_text, label="value")
            case.path_parameters = {
                **(case.path_parameters or {}),
                name: quote(value, safe="", errors="surrogatepass"),
            }
            refused = _unstorable(value)
        elif place == "query":
            value = data.draw(hostile_text, label="value")
            name = data.draw(st.sampled_from(["page", "limit", "to_date", "from_date", "q"]))
            case.query = {**(case.query or {}), name: _as_sent(value)}
            refused = "\x00" in value
        elif place == "header":
            # What a client can put on the wire: latin-1 text, NUL included, no line breaks.
            value = "v" + data.draw(
                st.text(
                    alphabet=st.characters(codec="latin-1", exclude_characters="\r\n"),
                    max_size=200,
                ),
                label="value",
            )
            headers["X-Request-Id"] = value
            refused = "\x00" in value
        elif isinstance(case.body, dict):
            body = dict(case.body)
            if place == "body value" and body:
                key = data.draw(st.sampled_from(sorted(body)), label="field")
                body[key] = data.draw(hostile_json, label="value")
                refused = _unstorable(body[key]) or _too_deep(body[key])
            elif place == "body key":
                body[data.draw(hostile_text.filter(_unstorable), label="key")] = "x"
                refused = True
            else:
                depth = data.draw(st.integers(MAX_JSON_DEPTH + 1, 5000), label="depth")
                raw_body = (
                    json.dumps(body)[:-1]
                    + (", " if body else "")
                    + '"deep": '
                    + "[" * depth
                    + "]" * depth
                    + "}"
                ).encode()
                refused = True
            if raw_body is None:
                raw_body = json.dumps(body).encode("utf-8", errors="surrogatepass")
        if raw_body is None and isinstance(case.body, dict | list):
            raw_body = json.dumps(case.body).encode()
        kwargs: dict[str, Any] = {}
        if raw_body is not None:
            # Sent as bytes: the client never sees (nor checks) the hostile document.
            headers["Content-Type"] = "application/json"
            kwargs["data"] = raw_body
            if label in SIGNERS:
                headers.update(SIGNERS[label](raw_body))
        before = _stored()
        response = case.call(headers=headers, **kwargs)
        case.validate_response(response, checks=CONFORMANCE_CHECKS)
        if "text/csv" in str(response.headers.get("content-type", "")):
            # A statement asked for as CSV (format=csv) and answered as CSV: a success.
            assert response.status_code == 200
            assert not refused, (place, response.status_code)
            return
        body_json = response.json()
        assert body_json["statusCode"] == response.status_code, body_json
        if refused:
            assert 400 <= response.status_code < 500, (place, response.status_code, body_json)
            assert body_json["data"] is None
            assert _stored() == before
            refusals.append(response.status_code)

    check()
    assert refusals, f"{label}: no hostile request was refused"

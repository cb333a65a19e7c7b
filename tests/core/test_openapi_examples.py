"""The schema agrees with the server: every example validates strictly (OpenAPI 3.0) against
its own schema, the example requests run against the app and every real answer validates
strictly too, with a message the examples show; every answered enum is declared; the YAML
schema reads the same under YAML 1.2; a generated client can be built from it."""

from __future__ import annotations

import io
import json
import shutil
import socket
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import responses
from openapi_schema_validator import OAS30Validator
from openapi_spec_validator import OpenAPIV30SpecValidator
from rest_framework.test import APIClient
from ruamel.yaml import YAML

from core import ssrf
from core.api.schema import NULL_ALTERNATIVE
from core.api.schema_yaml import schema_yaml_dump
from merchants.services import MerchantCreated
from tests.payment_items.factories import PaymentItemFactory
from tests.settlements.factories_api import (
    SettlementFactory,
    SettlementShareFactory,
    settled_collection,
)

METHODS = ("get", "post", "put", "patch", "delete")
API = "/api/v1"
# Response properties holding a choice the server makes: each must be a declared enum.
CHOICE_PROPERTIES = {
    "status",
    "payment_status",
    "payment_channel",
    "payment_type",
    "entry_type",
    "type",
    "result",
    "target",
}
# Not a choice of the server's: a form field's type is whatever the merchant's catalogue says.
FREE_TEXT = {("FormFieldOutput", "type")}


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    return response.json()


def _operations(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield f"{method.upper()} {path}", item[method]


def _strict_errors(body_schema: dict[str, Any], schema: dict[str, Any], value: Any) -> list[str]:
    """What OpenAPI 3.0's strict validator finds wrong with ``value`` (refs resolved in the
    whole document)."""
    document = dict(body_schema, components=schema["components"])
    validator = OAS30Validator(document)
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(value)]


def _resolve(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _string_properties(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for component, node in schema["components"]["schemas"].items():
        for name, prop in node.get("properties", {}).items():
            yield component, name, prop


@pytest.mark.slow  # a full OpenAPI 3.0 validation: seconds
def test_the_schema_is_a_valid_openapi_3_0_document(schema: dict[str, Any]) -> None:
    assert schema["openapi"].startswith("3.0.")
    errors = [error.message for error in OpenAPIV30SpecValidator(schema).iter_errors()]
    assert errors == []


def test_every_example_validates_strictly_against_its_own_schema(schema: dict[str, Any]) -> None:
    wrong = []
    for name, operation in _operations(schema):
        bodies = [("request", operation.get("requestBody", {}).get("content", {}))]
        bodies += [(code, r.get("content", {})) for code, r in operation["responses"].items()]
        for where, content in bodies:
            body = content.get("application/json") or {}
            for title, example in (body.get("examples") or {}).items():
                errors = _strict_errors(body["schema"], schema, example["value"])
                wrong += [f"{name} {where} {title!r} {error}" for error in errors]
    assert wrong == [], "\n".join(wrong)


def test_a_paid_collection_is_paid_in_every_example(schema: dict[str, Any]) -> None:
    assert schema["components"]["schemas"]["PaymentStatusEnum"]["enum"] == [
        "pending",
        "paid",
        "failed",
        "cancelled",
        "expired",
    ]
    text = json.dumps(schema)
    assert '"payment_status": "successful"' not in text
    assert "Transaction marked successful" not in text
    status = schema["paths"][f"{API}/transactions/in/check-transaction-status/{{reference}}"]
    assert "your transaction_reference is not looked up" in status["get"]["description"]


def test_every_choice_the_server_answers_is_a_declared_enum(schema: dict[str, Any]) -> None:
    outputs = {
        name
        for name in schema["components"]["schemas"]
        if not name.endswith(("Input", "Request", "Params"))
    }
    undeclared = []
    for component, name, prop in _string_properties(schema):
        if component not in outputs or name not in CHOICE_PROPERTIES:
            continue
        if (component, name) in FREE_TEXT or prop.get("type") == "boolean":
            continue
        options = prop.get("oneOf") or prop.get("allOf") or [prop]
        choices = [_resolve(option, schema) for option in options]
        if not any("enum" in choice for choice in choices):
            undeclared.append(f"{component}.{name}")
    assert undeclared == []


def test_no_nullable_reference_is_left_without_a_type(schema: dict[str, Any]) -> None:
    found = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("nullable") is True and "type" not in node and "allOf" in node:
                found.append(where)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}[{index}]")

    walk(schema, "#")
    assert found == []
    payout_item = schema["components"]["schemas"]["PayoutBatchItemOutput"]["properties"]
    assert payout_item["payout"]["oneOf"][1] == NULL_ALTERNATIVE
    assert _strict_errors(payout_item["payout"], schema, None) == []


@pytest.mark.slow  # renders and parses the whole schema twice: seconds
def test_the_yaml_schema_reads_the_same_under_yaml_1_2(
    schema: dict[str, Any], api_client: APIClient
) -> None:
    response = api_client.get("/api/schema/", HTTP_ACCEPT="application/yaml")
    assert response.status_code == 200
    loaded = YAML(typ="safe", pure=True).load(io.StringIO(response.content.decode()))
    create = loaded["paths"][f"{API}/transactions/in/merchant-wallet/payouts"]["post"]
    request = create["requestBody"]["content"]["application/json"]["examples"]["ToAnAccount"]
    assert request["value"]["account_number"] == "0123456789"
    assert request["value"]["bank_code"] == "058"
    accepted = create["responses"]["202"]["content"]["application/json"]["examples"]["Accepted"]
    assert accepted["value"]["data"]["payout"]["amount"] == "2500.00"
    assert json.loads(json.dumps(loaded)) == schema


@pytest.mark.parametrize(
    "text", ["0123456789", "058", "2500.00", "1e3", "0x1F", "0o17", "true", "null", ".inf", "+1"]
)
def test_a_string_a_yaml_1_2_reader_would_take_for_another_type_is_quoted(text: str) -> None:
    value = {"text": text, "number": 7, "decimal": 2.5, "flag": False, "nothing": None}
    loaded = YAML(typ="safe", pure=True).load(io.StringIO(schema_yaml_dump(value).decode()))
    assert loaded == value


# --- the examples against the server ------------------------------------------------------------


def _response_examples(operation: dict[str, Any], code: str) -> list[Any]:
    body = operation["responses"][code]["content"].get("application/json", {})
    return [example["value"] for example in (body.get("examples") or {}).values()]


def _request_example(schema: dict[str, Any], method: str, path: str, title: str) -> Any:
    operation = schema["paths"][path][method]
    return operation["requestBody"]["content"]["application/json"]["examples"][title]["value"]


def _shape(data: Any) -> Any:
    """The field names of an answer's ``data`` (of a page's first item too), not its values."""
    if not isinstance(data, dict):
        return type(data).__name__
    shape: dict[str, Any] = {"fields": sorted(data)}
    items = data.get("items")
    if isinstance(items, list) and items and isinstance(items[0], dict):
        shape["item_fields"] = sorted(items[0])
    return shape


class Checked:
    """Calls the app; checks each answer strictly against the operation's declared schema, and
    a success against its examples: the message is one an example shows, and the example with
    that message has the answer's fields."""

    def __init__(self, client: APIClient, schema: dict[str, Any]) -> None:
        self.client, self.schema = client, schema
        self.wrong: list[str] = []
        self.answered: set[str] = set()

    def call(self, method: str, template: str, *, path: str | None = None, **kwargs: Any) -> Any:
        operation = self.schema["paths"][template][method]
        response = getattr(self.client, method)(path or template, format="json", **kwargs)
        code = str(response.status_code)
        name = f"{operation['operationId']} {code}"
        self.answered.add(operation["operationId"])
        if code not in operation["responses"]:
            self.wrong.append(f"{name}: status not declared ({response.content[:200]!r})")
            return None
        content = operation["responses"][code]["content"]
        media = response["Content-Type"].split(";")[0]
        if media not in content:
            self.wrong.append(f"{name}: {media} not declared")
            return None
        if media != "application/json":
            return response.content.decode()
        body = response.json()
        errors = _strict_errors(content[media]["schema"], self.schema, body)
        self.wrong += [f"{name}: {error}" for error in errors]
        examples = _response_examples(operation, code) if code.startswith("2") else []
        same = [example for example in examples if example["message"] == body["message"]]
        if examples and not same:
            shown = sorted({example["message"] for example in examples})
            self.wrong.append(f"{name}: message {body['message']!r} not among {shown}")
        if same and _shape(body["data"]) not in [_shape(example["data"]) for example in same]:
            self.wrong.append(
                f"{name}: fields {_shape(body['data'])} not as shown {_shape(same[0]['data'])}"
            )
        return body


@pytest.fixture
def _public_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    def resolve(host: str, port: int) -> list[str]:
        if host.endswith("example.com"):
            return ["93.184.216.34"]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(ssrf, "system_resolver", resolve)


def _payout_flow(checked: Checked, schema: dict[str, Any]) -> None:
    wallet = f"{API}/transactions/in/merchant-wallet"
    payouts = f"{wallet}/payouts"
    fund = f"{API}/test-helpers/wallet/fund"
    checked.call("post", fund, data=_request_example(schema, "post", fund, "FundNGN50,000"))
    checked.call("get", f"{API}/transactions/bank")
    enquiry = f"{payouts}/name-enquiry"
    checked.call(
        "post", enquiry, data=_request_example(schema, "post", enquiry, "AnAccountAtGTBank")
    )
    quote = f"{payouts}/quote"
    checked.call("post", quote, data=_request_example(schema, "post", quote, "QuoteNGN2,500"))
    created = checked.call(
        "post", payouts, data=_request_example(schema, "post", payouts, "ToAnAccount")
    )
    payout = f"{payouts}/{{payout_id}}"
    payout_id = created["data"]["payout"]["id"]
    checked.call("get", payout, path=payout.format(payout_id=payout_id))
    checked.call("post", f"{payout}/requery", path=f"{payouts}/{payout_id}/requery")
    checked.call("get", payouts)

    beneficiaries = f"{wallet}/beneficiaries"
    saved = checked.call(
        "post",
        beneficiaries,
        data=_request_example(schema, "post", beneficiaries, "SaveAnAccount"),
    )
    beneficiary = f"{beneficiaries}/{{beneficiary_id}}"
    beneficiary_path = beneficiary.format(beneficiary_id=saved["data"]["id"])
    checked.call("get", beneficiaries)
    checked.call("get", beneficiary, path=beneficiary_path)
    to_saved = _request_example(schema, "post", payouts, "ToASavedBeneficiary")
    checked.call("post", payouts, data=dict(to_saved, beneficiary_id=saved["data"]["id"]))
    checked.call("delete", beneficiary, path=beneficiary_path)

    bulk = f"{payouts}/bulk"
    batch = checked.call("post", bulk, data=_request_example(schema, "post", bulk, "ThreePayouts"))
    checked.call("get", f"{bulk}/{{batch_id}}", path=f"{bulk}/{batch['data']['batch']['id']}")

    _payout_controls_flow(checked, schema)

    alerts = f"{wallet}/alerts"
    checked.call("get", alerts)
    checked.call("put", alerts, data=_request_example(schema, "put", alerts, "AlertBelowNGN5000"))
    checked.call("get", wallet)
    checked.call("get", f"{wallet}/ledger")
    days = {"from_date": "2026-03-01", "to_date": "2026-03-02"}
    checked.call("get", f"{wallet}/statement", data=days)
    csv = checked.call("get", f"{wallet}/statement/csv", data=days)
    assert csv.lstrip("\ufeff").startswith("date,opening_available,")


def _payout_controls_flow(checked: Checked, schema: dict[str, Any]) -> None:
    """Approval threshold, a held payout, approve with the creating key, cancel."""
    wallet = f"{API}/transactions/in/merchant-wallet"
    payouts = f"{wallet}/payouts"
    approvals = f"{wallet}/approvals"
    checked.call("get", approvals)
    on = _request_example(schema, "put", approvals, "ApprovalFromNGN500,000")
    checked.call("put", approvals, data=on)
    checked.call("put", approvals, data={"approval_threshold": "2000.00"})
    to_account = _request_example(schema, "post", payouts, "ToAnAccount")
    held = checked.call("post", payouts, data=dict(to_account, idempotency_key="held-1"))
    payout_id = held["data"]["payout"]["id"]
    assert held["data"]["payout"]["approval"]["status"] == "pending"
    approve, cancel = f"{payouts}/{{payout_id}}/approve", f"{payouts}/{{payout_id}}/cancel"
    same_key = checked.call("post", approve, path=approve.format(payout_id=payout_id))
    assert same_key["statusCode"] == 403
    cancelled = checked.call("post", cancel, path=cancel.format(payout_id=payout_id))
    assert cancelled["data"]["error_message"] == "Cancelled by the merchant"
    again = checked.call("post", cancel, path=cancel.format(payout_id=payout_id))
    assert again["statusCode"] == 409
    assert (
        checked.call("post", approve, path=approve.format(payout_id=payout_id))["statusCode"] == 409
    )
    off = _request_example(schema, "put", approvals, "TurnApprovalOff")
    checked.call("put", approvals, data=off)


def _sweep_flow(checked: Checked, schema: dict[str, Any]) -> None:
    """Run after the payout flow (the wallet is funded); the test helper ends the settlement
    account's cooling-off period, so "sweep now" pays."""
    sweep = f"{API}/transactions/in/merchant-wallet/sweep"
    checked.call(
        "put", sweep, data=_request_example(schema, "put", sweep, "DailyAt17:00KeepingNGN50,000")
    )
    checked.call("get", sweep)
    checked.call("post", f"{API}/test-helpers/sweep/settlement-account/activate")
    checked.call(
        "put", sweep, data=_request_example(schema, "put", sweep, "WeeklyOnFriday,AccountUnchanged")
    )
    made = checked.call("post", f"{sweep}/run")
    assert made["statusCode"] == 202
    again = checked.call("post", f"{sweep}/run")
    assert again["data"]["duplicate"] is True


def _webhook_settings_flow(checked: Checked, schema: dict[str, Any]) -> None:
    """The webhook settings read, set (the first save answers the secret), rotated both ways
    and pinged (the merchant's server answered by ``responses``)."""
    settings_path = f"{API}/webhook-settings"
    checked.call("get", settings_path)
    set_url = _request_example(schema, "put", settings_path, "SetTheURL")
    first = checked.call("put", settings_path, data=set_url)
    assert first["data"]["secret"] is not None
    again = checked.call("put", settings_path, data=set_url)
    assert again["data"]["secret"] is None
    rotate = f"{settings_path}/rotate-secret"
    for title in ("DefaultOverlap(24H)", "KeepTheOldSecretFor48H"):
        checked.call("post", rotate, data=_request_example(schema, "post", rotate, title))
    checked.call("get", settings_path)
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, set_url["url"], status=200, body='{"received":true}')
        pinged = checked.call("post", f"{settings_path}/test")
    assert pinged["data"]["succeeded"] is True


def _collection_flow(checked: Checked, schema: dict[str, Any], merchant: Any) -> None:
    item = PaymentItemFactory(merchant=merchant, amount=Decimal("7000.00"))
    checked.call("get", f"{API}/transactions/in/payment-items")
    one_item = f"{API}/transactions/in/payment-item/{{payment_item_id}}"
    checked.call("get", one_item, path=one_item.format(payment_item_id=item.pk))
    initialize = f"{API}/transactions/in/initialize"
    body = dict(_request_example(schema, "post", initialize, "Card"), payment_item_id=str(item.pk))
    started = checked.call("post", initialize, data=body)
    checked.call("post", initialize, data=body)  # the same reference again
    reference = started["data"]["reference"]
    status = f"{API}/transactions/in/check-transaction-status/{{reference}}"
    search = f"{API}/transactions/in/search-transaction/{{reference}}"
    complete = f"{API}/test-helpers/transactions/{{reference}}/complete"
    paid = checked.call(
        "post",
        complete,
        path=complete.format(reference=reference),
        data=_request_example(schema, "post", complete, "Paid"),
    )
    assert paid["data"]["payment_status"] == "paid"
    answer = checked.call("get", status, path=status.format(reference=reference))
    assert answer["data"]["payment_status"] == "paid"
    checked.call("get", search, path=search.format(reference=reference))
    _refund_flow(checked, schema, reference)
    settled = checked.call("post", f"{API}/test-helpers/settlements/run")
    assert settled["data"]["settlements"][0]["transaction_count"] == 1
    # Your own transaction_reference is not looked up: the documented 400.
    client_reference = started["data"]["client_reference"]
    unknown = checked.call("get", status, path=status.format(reference=client_reference))
    assert (unknown["statusCode"], unknown["message"]) == (400, "Transaction not found")

    events = checked.call("get", f"{API}/events")
    assert events["data"]["items"], "the paid collection's event"
    event = f"{API}/events/{{event_id}}"
    checked.call("get", event, path=event.format(event_id=events["data"]["items"][0]["id"]))


def _refund_flow(checked: Checked, schema: dict[str, Any], reference: str) -> None:
    """A partial refund of the paid collection, the list and the refund (sandbox: processed)."""
    refunds = f"{API}/transactions/in/refunds"
    body = dict(
        _request_example(schema, "post", refunds, "APartialRefund"),
        transaction_reference=reference,
    )
    created = checked.call("post", refunds, data=body)
    refund_id = created["data"]["refund"]["refund_id"]
    checked.call("get", refunds)
    one = f"{refunds}/{{refund_id}}"
    checked.call("get", one, path=one.format(refund_id=refund_id))


def _keys_flow(checked: Checked, schema: dict[str, Any]) -> None:
    """Last: a restricted key made, listed and revoked, then the calling key rolled (it keeps
    answering for the example's day)."""
    keys = f"{API}/keys"
    created = checked.call("post", keys, data=_request_example(schema, "post", keys, "ReadOnly"))
    listed = checked.call("get", keys)
    assert created["data"]["key"]["id"] in [key["id"] for key in listed["data"]]
    one = f"{keys}/{{key_id}}"
    checked.call("delete", one, path=one.format(key_id=created["data"]["key"]["id"]))
    roll = f"{keys}/roll"
    rolled = checked.call("post", roll, data=_request_example(schema, "post", roll, "OneDay"))
    assert rolled["data"]["rolled_key"]["expires_at"] is not None


def _settlement_flow(checked: Checked, merchant: Any) -> None:
    settlement = SettlementFactory(merchant=merchant, transaction_count=1)
    SettlementShareFactory(settlement=settlement)
    settled_collection(settlement=settlement)
    checked.call("get", f"{API}/settlements")
    one = f"{API}/settlements/{{settlement_id}}"
    checked.call("get", one, path=one.format(settlement_id=settlement.settlement_id))
    transactions = f"{one}/transactions"
    checked.call(
        "get", transactions, path=transactions.format(settlement_id=settlement.settlement_id)
    )
    missing = checked.call("get", one, path=one.format(settlement_id="stl_unknown"))
    assert (missing["statusCode"], missing["message"]) == (404, "Settlement not found")


def test_the_csv_statement_answers_csv_whatever_the_accept_header_and_errors_as_json(
    test_client: APIClient,
) -> None:
    path = f"{API}/transactions/in/merchant-wallet/statement/csv"
    answer = test_client.get(path, {"from_date": "2026-03-01"}, HTTP_ACCEPT="application/json")
    assert (answer.status_code, answer["Content-Type"]) == (200, "text/csv; charset=utf-8")
    refused = test_client.get(path, {"from_date": "2026-02-30"}, HTTP_ACCEPT="text/csv")
    assert (refused.status_code, refused["Content-Type"]) == (400, "application/json")
    assert refused.json()["status"] is False
    assert "from_date" in refused.json()["message"]


@pytest.mark.usefixtures("_public_dns")
def test_the_example_requests_answer_as_the_schema_says(
    schema: dict[str, Any],
    test_client: APIClient,
    merchant_account: MerchantCreated,
    settings: Any,
) -> None:
    checked = Checked(test_client, schema)
    _payout_flow(checked, schema)
    _sweep_flow(checked, schema)
    _webhook_settings_flow(checked, schema)
    _collection_flow(checked, schema, merchant_account.merchant)
    _settlement_flow(checked, merchant_account.merchant)
    switch = f"{API}/test-helpers/payout-providers/{{provider_name}}"  # last: sandbox goes down
    checked.call(
        "post",
        switch,
        path=switch.format(provider_name="sandbox"),
        data=_request_example(schema, "post", switch, "SwitchSandboxDown"),
    )
    _keys_flow(checked, schema)
    assert checked.wrong == [], "\n".join(checked.wrong)
    # Not run here: the provider routes (signed by the providers), resending an event and
    # returning a successful payout (they need a delivery or a completed transfer).
    unanswered = {operation["operationId"] for _, operation in _operations(schema)}
    unanswered -= checked.answered
    assert unanswered == {
        "funding_notification",
        "webhooks_paystack",
        "webhooks_flutterwave",
        "event_resend",
        "test_helper_payout_return",
    }


# --- a generated client -------------------------------------------------------------------------


@pytest.mark.multiprocess
def test_a_generated_client_builds_and_imports(schema: dict[str, Any], tmp_path: Path) -> None:
    generator = shutil.which("openapi-python-client")
    if generator is None:
        pytest.skip("openapi-python-client is not installed (a throwaway venv on PATH gives it)")
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    subprocess.run(
        [generator, "generate", "--path", "schema.json", "--meta", "none", "--output-path",
         "merchant_client"],
        cwd=tmp_path, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    # The client needs httpx and attrs: imported by the generator's own interpreter.
    python = Path(generator).resolve().parent / "python"
    module = "merchant_client.api.wallet.merchant_wallet_statement_csv"
    imported = subprocess.run(
        [str(python), "-c", f"import inspect, {module} as m; print(inspect.getsource(m))"],
        cwd=tmp_path, check=True, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "response.text" in imported.stdout

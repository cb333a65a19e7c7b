"""The refunds back office: read-only list and detail, and refunding a collection with the
finance approver's permission, audited, errors as messages."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from audit.models import AuditRecord
from merchants.models import Merchant
from refunds.models import Refund
from tests.audit.factories import StaffUserFactory
from tests.refunds.factories import RefundFactory, collection_settle, paid_collection, wallet_of
from wallets.services import wallet_fund

pytestmark = pytest.mark.django_db

REFUND_URL = reverse("admin:refunds_refund_collection")


def client_for(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def approver():  # type: ignore[no-untyped-def]
    return StaffUserFactory(username="approver", roles=["finance_approver"])


@pytest.fixture
def viewer():  # type: ignore[no-untyped-def]
    return StaffUserFactory(username="viewer", roles=["finance_viewer"])


def form(client: Client, **fields: str):  # type: ignore[no-untyped-def]
    page = client.get(REFUND_URL, {"reference": fields.get("transaction_reference", "")})
    key = page.context["form"].initial["idempotency_key"]
    return client.post(REFUND_URL, {"idempotency_key": key, **fields}, follow=True), key


def test_list_and_detail_are_read_only(viewer) -> None:  # type: ignore[no-untyped-def]
    refund = RefundFactory()
    client = client_for(viewer)

    listed = client.get(reverse("admin:refunds_refund_changelist"))
    detail = client.get(reverse("admin:refunds_refund_change", args=[refund.pk]))

    assert listed.status_code == 200
    assert refund.refund_id in listed.content.decode()
    assert b"Refund a collection" not in listed.content
    assert detail.status_code == 200
    assert client.post(reverse("admin:refunds_refund_add")).status_code == 403


def test_viewer_may_not_refund(viewer, merchant: Merchant) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)
    client = client_for(viewer)

    response = client.post(
        REFUND_URL,
        {"transaction_reference": collection.reference, "reason": "x", "idempotency_key": "k"},
    )

    assert response.status_code == 403
    assert not Refund.objects.exists()


def test_approver_refunds_part_of_a_collection_audited(approver, merchant: Merchant) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)
    client = client_for(approver)
    assert b"Refund a collection" in client.get(reverse("admin:refunds_refund_changelist")).content

    response, key = form(
        client,
        transaction_reference=collection.reference,
        amount="1500.00",
        reason="customer called support",
    )

    assert response.status_code == 200
    refund = Refund.objects.get()
    assert refund.amount == Decimal("1500.00")
    assert refund.idempotency_key == key
    assert refund.initiated_by == "staff:approver"
    assert "accepted" in response.content.decode()
    record = AuditRecord.objects.get(action="refunds.refund.create")
    assert record.reason == "customer called support"
    assert record.actor == approver
    # The same form posted again replays the refund: no second refund, no second record.
    client.post(
        REFUND_URL,
        {
            "transaction_reference": collection.reference,
            "amount": "1500.00",
            "reason": "customer called support",
            "idempotency_key": key,
        },
    )
    assert Refund.objects.count() == 1
    assert AuditRecord.objects.filter(action="refunds.refund.create").count() == 1


def test_blank_amount_refunds_all_that_is_left(approver, merchant: Merchant) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)
    collection_settle(collection)
    wallet_fund(wallet_id=wallet_of(merchant).pk, amount=Decimal("205.00"), reference="f")

    form(client_for(approver), transaction_reference=collection.reference, reason="all of it")

    assert Refund.objects.get().amount == Decimal("7205.00")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"transaction_reference": "TXN_NOPE"}, "Transaction not found"),
        ({"amount": "99999"}, "amount: exceeds the refundable amount 7205.00"),
    ],
)
def test_errors_are_messages_and_change_nothing(
    approver, merchant: Merchant, fields: dict[str, str], message: str
) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)

    response, _ = form(
        client_for(approver),
        **{"transaction_reference": collection.reference, "reason": "x", **fields},
    )

    assert response.status_code == 200
    assert message.lower() in response.content.decode().lower()  # the admin capitalises it
    assert not Refund.objects.exists()
    assert not AuditRecord.objects.filter(action="refunds.refund.create").exists()


def test_a_malformed_amount_is_a_form_error(approver, merchant: Merchant) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)

    response, _ = form(
        client_for(approver),
        transaction_reference=collection.reference,
        amount="1.234",
        reason="x",
    )

    assert response.status_code == 200
    assert "at most two decimal places" in response.content.decode()
    assert not Refund.objects.exists()


def test_a_paid_collections_page_offers_refund_to_the_approver(
    approver, viewer, merchant: Merchant
) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)
    page = reverse("admin:collections_app_collectiontransaction_change", args=[collection.pk])

    approver_page = client_for(approver).get(page)
    viewer_page = client_for(viewer).get(page)

    assert approver_page.status_code == 200
    assert f"{REFUND_URL}?reference={collection.reference}" in approver_page.content.decode()
    assert viewer_page.status_code == 200
    assert REFUND_URL not in viewer_page.content.decode()

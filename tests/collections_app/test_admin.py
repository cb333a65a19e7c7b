"""Collections back office: transactions are read-only; the fee schedule is editable."""

from __future__ import annotations

import pytest
from django.test import Client

from collections_app.models import CollectionTransaction, PaymentStatus
from tests.collections_app.factories import CollectionTransactionFactory

pytestmark = pytest.mark.django_db


def test_transaction_list_and_detail_render(admin_client: Client) -> None:
    txn = CollectionTransactionFactory()
    listing = admin_client.get("/admin/collections_app/collectiontransaction/")
    assert listing.status_code == 200
    assert txn.reference in listing.content.decode()
    detail = admin_client.get(f"/admin/collections_app/collectiontransaction/{txn.pk}/change/")
    assert detail.status_code == 200
    assert txn.request_fingerprint not in detail.content.decode()


def test_transactions_cannot_be_changed_in_admin(admin_client: Client) -> None:
    txn = CollectionTransactionFactory()
    response = admin_client.post(
        f"/admin/collections_app/collectiontransaction/{txn.pk}/change/",
        {"payment_status": "paid"},
    )
    assert response.status_code == 403
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PENDING
    assert admin_client.get("/admin/collections_app/collectiontransaction/add/").status_code == 403
    assert CollectionTransaction.objects.count() == 1


def test_fee_schedule_admin_renders(admin_client: Client, fee_schedule) -> None:
    response = admin_client.get(
        f"/admin/collections_app/collectionfeeschedule/{fee_schedule.pk}/change/"
    )
    assert response.status_code == 200

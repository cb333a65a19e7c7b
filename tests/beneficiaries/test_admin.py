"""The read-only beneficiary admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from beneficiaries.models import Beneficiary
from merchants.models import Mode
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import assert_admin_forbidden, client_for
from tests.beneficiaries.factories import BeneficiaryFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/beneficiaries/beneficiary/"


@pytest.fixture
def superuser_client():
    return client_for(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))


def test_the_list_shows_merchant_mode_nickname_account_and_deletion(
    superuser_client, merchant_account
) -> None:
    BeneficiaryFactory(
        merchant=merchant_account.merchant,
        mode=Mode.LIVE,
        account_number="0123456789",
        nickname="Warehouse rent",
    )
    page = superuser_client.get(CHANGELIST)
    assert page.status_code == 200
    text = page.content.decode()
    for expected in ("Ade Stores", "Warehouse rent", "SALAMI NGOZI UCHE", "0123456789"):
        assert expected in text
    assert "Guaranty Trust Bank" in text


def test_the_deleted_filter(superuser_client, merchant_account) -> None:
    BeneficiaryFactory(merchant=merchant_account.merchant, nickname="kept")
    BeneficiaryFactory(
        merchant=merchant_account.merchant, nickname="gone", deleted_at=timezone.now()
    )
    saved = superuser_client.get(CHANGELIST, {"deleted": "no"}).content.decode()
    deleted = superuser_client.get(CHANGELIST, {"deleted": "yes"}).content.decode()
    assert "kept" in saved and "gone" not in saved
    assert "gone" in deleted and "kept" not in deleted


def test_nothing_is_added_changed_or_deleted_through_the_admin(
    superuser_client, merchant_account
) -> None:
    beneficiary = BeneficiaryFactory(merchant=merchant_account.merchant, nickname="Rent")
    assert_admin_forbidden(superuser_client.get(f"{CHANGELIST}add/"))
    changed = superuser_client.post(
        f"{CHANGELIST}{beneficiary.pk}/change/", {"nickname": "Changed"}
    )
    assert changed.status_code == 403
    deleted = superuser_client.post(f"{CHANGELIST}{beneficiary.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 403
    beneficiary.refresh_from_db()
    assert beneficiary.nickname == "Rent"
    assert Beneficiary.objects.filter(deleted_at__isnull=True).count() == 1
    assert superuser_client.get(f"{CHANGELIST}{beneficiary.pk}/change/").status_code == 200


def test_staff_without_the_view_permission_get_the_admin_403(merchant_account) -> None:
    client = client_for(StaffUserFactory())
    assert_admin_forbidden(client.get(CHANGELIST))


def test_the_view_permission_is_enough_to_read(merchant_account) -> None:
    BeneficiaryFactory(merchant=merchant_account.merchant, nickname="Rent")
    client = client_for(StaffUserFactory(permissions=["beneficiaries.view_beneficiary"]))
    assert client.get(CHANGELIST).status_code == 200

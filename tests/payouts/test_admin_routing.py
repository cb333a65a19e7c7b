"""Back office of routing: the attempts inline and provider health on a payout's page, routing
rules changed with an audit record (and refused when a test route would reach a live provider),
and the provider health page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from audit.models import AuditRecord
from payouts.models import PayoutRoute
from payouts.services import payout_dispatch
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import client_for
from tests.payouts.helpers import reload
from wallets.models import Wallet

pytestmark = pytest.mark.django_db

ROUTES = "/admin/payouts/payoutroute/"


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("ops-lead", "ops@example.com", "pw-12345"))
    return client


def _route_form(**overrides: Any) -> dict[str, Any]:
    return {
        "mode": "test",
        "bank_code": "058",
        "min_amount": "",
        "max_amount": "5000.00",
        "provider_name": "sandbox-b",
        "weight": "1",
        "priority": "10",
        "active": "on",
        **overrides,
    }


def test_the_payout_page_lists_its_attempts_and_their_providers_health(
    admin_client: Client, funded_wallet: Wallet, create_payout: Callable[..., Any]
) -> None:
    payout = create_payout().payout
    payout_dispatch(payout_id=payout.pk)

    response = admin_client.get(f"/admin/payouts/payout/{reload(payout).pk}/change/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "Attempts (each send to a provider)" in page
    assert payout.internal_reference in page and "successful" in page
    assert '<table class="provider-health">' in page


def test_adding_a_route_is_audited(admin_client: Client) -> None:
    response = admin_client.post(f"{ROUTES}add/", _route_form())

    assert response.status_code == 302, response.content.decode()[:2000]
    route = PayoutRoute.objects.get()
    assert (route.provider_name, route.bank_code, str(route.max_amount)) == (
        "sandbox-b",
        "058",
        "5000.00",
    )
    assert AuditRecord.objects.filter(action="payouts.payoutroute.add").exists()


def test_a_test_route_to_a_live_provider_is_refused(admin_client: Client) -> None:
    response = admin_client.post(f"{ROUTES}add/", _route_form(provider_name="paystack"))

    assert response.status_code == 200
    assert "cannot carry test payouts" in response.content.decode()
    assert not PayoutRoute.objects.exists()


def test_staff_without_the_route_permission_cannot_change_routes() -> None:
    client = client_for(StaffUserFactory())

    assert client.post(f"{ROUTES}add/", _route_form()).status_code == 403
    assert not PayoutRoute.objects.exists()


def test_the_provider_health_page_lists_every_provider(admin_client: Client) -> None:
    response = admin_client.get("/admin/payouts/payoutprovidercircuit/")

    page = response.content.decode()
    assert response.status_code == 200
    for name in ("sandbox", "sandbox-b", "paystack"):
        assert f"<td>{name}</td>" in page

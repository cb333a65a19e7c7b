"""Money on the back office's payout pages reads as everywhere else: ``₦1,200.00``."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client

from payouts.services import payout_dispatch

pytestmark = pytest.mark.django_db


def test_the_resolution_pages_show_money_as_naira(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number="1000000003", amount=Decimal("1200.00")).payout
    payout_dispatch(payout_id=payout.pk)
    payout.refresh_from_db()
    client = Client()
    client.force_login(User.objects.create_superuser("lead", "lead@example.com", "pw-lead-1"))

    page = client.get(f"/admin/payouts/payout/{payout.pk}/propose-resolution/").content.decode()

    total = payout.amount + payout.fee_amount
    assert payout.amount == Decimal("1200.00")
    assert f"₦1,200.00 + fee ₦{payout.fee_amount:,.2f} = ₦{total:,.2f}" in page
    assert "NGN 1200.00" not in page
